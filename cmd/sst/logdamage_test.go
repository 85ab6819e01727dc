package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/internal/ldbtest"
)

// TestSkipLogDamage reads a LevelDB database whose log's second record
// is damaged: -leveldb commands fail naming the log and the flag that
// reads on; with -skip-log-damage they read the writes LevelDB 1.23
// reads (the damaged record and the rest of its block dropped) and warn.
func TestSkipLogDamage(t *testing.T) {
	dir := t.TempDir()
	if err := ldbtest.WriteDB(dir, []ldbtest.TableFile{{Level: 1, Number: 5, Entries: []ldbtest.Entry{
		{Key: []byte("t"), Seq: 5, Kind: 1, Value: []byte("table")},
	}}}, nil, 1000, ldbtest.Options{}); err != nil {
		t.Fatal(err)
	}
	var l ldbtest.Log
	l.Add(ldbtest.Batch(1001, []ldbtest.Entry{{Key: []byte("a"), Kind: 1, Value: []byte("1")}}))
	damaged := len(l.Buf)
	l.Add(ldbtest.Batch(1002, []ldbtest.Entry{{Key: []byte("b"), Kind: 1, Value: []byte("2")}}))
	l.Buf = append(l.Buf, make([]byte, 32<<10-len(l.Buf))...) // the rest of the block: zero, preallocated
	l.Add(ldbtest.Batch(1003, []ldbtest.Entry{{Key: []byte("c"), Kind: 1, Value: []byte("3")}}))
	l.Buf[damaged+7+14] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644); err != nil {
		t.Fatal(err)
	}
	wantError(t, []string{"scan", "-leveldb", dir}, 1, "000002.log", "checksum mismatch", "-skip-log-damage")
	wantError(t, []string{"get", "-leveldb", dir, "a"}, 1, "000002.log", "-skip-log-damage")
	for _, args := range [][]string{
		{"scan", "-leveldb", "-skip-log-damage", dir},
		{"get", "-leveldb", "-skip-log-damage", dir, "a", "c", "t"},
		{"verify", "-leveldb", "-skip-log-damage", dir},
		{"info", "-leveldb", "-skip-log-damage", dir},
	} {
		out, errs, status := sst(t, args...)
		if status != 0 || !strings.HasPrefix(errs, "sst: "+args[0]+": warning: 1 damaged place skipped") || !strings.Contains(errs, "000002.log") || strings.Count(errs, "\n") != 1 {
			t.Errorf("sst %q: status %d, stderr %q; want 0 and one warning naming the log", args, status, errs)
		}
		switch args[0] {
		case "scan":
			if out != "a\t1\nc\t3\nt\ttable\n" {
				t.Errorf("sst %q: %q", args, out)
			}
		case "get":
			if out != "1\n3\ntable\n" {
				t.Errorf("sst %q: %q", args, out)
			}
		}
	}
	// Without damage, the flag changes nothing and warns of nothing.
	l.Buf[damaged+7+14] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644); err != nil {
		t.Fatal(err)
	}
	a := mustSST(t, "scan", "-leveldb", dir)
	b := mustSST(t, "scan", "-leveldb", "-skip-log-damage", dir)
	if a != b || !bytes.Contains([]byte(a), []byte("b\t2\n")) {
		t.Errorf("undamaged: %q and %q", a, b)
	}
}
