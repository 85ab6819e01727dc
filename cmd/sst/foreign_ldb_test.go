package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignLevelDBTables: sst reads a table of plain keys (golang/
// leveldb's h.ldb, written by LevelDB's TableBuilder) and Mojang's
// zlib-compressed tables and databases (Minecraft Bedrock), both refused
// as corrupt before.
func TestForeignLevelDBTables(t *testing.T) {
	plain := filepath.Join("..", "..", "leveldb", "testdata", "plain", "h.ldb")
	out := mustSST(t, "scan", plain)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// Plain keys carry no version: key TAB value, as h.txt counts them.
	if len(lines) != 1710 || lines[0] != "a\t97" || lines[1709] != "youth\t5" {
		t.Fatalf("scan %s: %d lines, first %q, last %q", plain, len(lines), lines[0], lines[len(lines)-1])
	}
	if got := mustSST(t, "get", plain, "fortinbras"); got != "6" {
		t.Errorf("get fortinbras: %q", got)
	}
	if got := mustSST(t, "info", plain); !strings.Contains(got, "keys:               plain") {
		t.Errorf("info of a table of plain keys does not say so:\n%s", got)
	}
	if got := mustSST(t, "verify", plain); !strings.HasPrefix(got, "ok: 1710 entries") {
		t.Errorf("verify: %q", got)
	}

	bedrock := filepath.Join("..", "..", "leveldb", "testdata", "mojang", "mctestdb")
	if got := mustSST(t, "info", filepath.Join(bedrock, "000005.ldb")); !strings.Contains(got, "raw-deflate-compressed (Mojang's type 4)") {
		t.Errorf("info of a Bedrock table:\n%s", got)
	}
	if got := mustSST(t, "verify", "-leveldb", bedrock); !strings.Contains(got, "live view: 294 keys") {
		t.Errorf("verify -leveldb of a Bedrock database: %q", got)
	}
}
