package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/reader"
)

// TestNoArguments checks that sst without a command is a usage error: the
// usage on stderr, nothing on stdout, exit status 2.
func TestNoArguments(t *testing.T) {
	out, errs, status := sst(t)
	if status != 2 || out != "" || errs != usageText {
		t.Errorf("sst: status %d, stdout %q, stderr starts %.60q; want 2, nothing, the usage", status, out, errs)
	}
}

// TestBuildExistingOutput checks that build refuses to replace an existing
// OUT without -f, leaving it and its directory untouched, and replaces it
// with -f.
func TestBuildExistingOutput(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte("a\t1\nb\t2\n"))
	out := filepath.Join(dir, "out.sst")
	writeFile(t, out, []byte("previous"))

	for _, args := range [][]string{
		{"build", "-o", out, input},
		{"build", input, "-o", out},
		{"build", "-hash-index", "-o", out, input},
	} {
		wantError(t, args, 1, "build: "+out+" already exists", "-f")
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "previous" {
		t.Errorf("OUT after refused builds: %q, %v", data, err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt", "out.sst"}) {
		t.Errorf("directory holds %q after refused builds", names)
	}

	mustSST(t, "build", "-f", "-o", out, input)
	if got := mustSST(t, "get", out, "b"); got != "2" {
		t.Errorf("get b from the replacing table = %q", got)
	}
	// -f after INPUT works too, and replaces a table with a table.
	mustSST(t, "build", "-o", out, input, "-f", "-hash-index")
	if got := mustSST(t, "get", out, "a"); got != "1" {
		t.Errorf("get a from the second replacing table = %q", got)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt", "out.sst"}) {
		t.Errorf("directory holds %q after -f builds", names)
	}

	// A directory at OUT is refused before any work, -f or not.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"build", "-o", sub, input}, {"build", "-f", "-o", sub, input}} {
		wantError(t, args, 1, "build: "+sub+" is a directory")
	}
}

// TestErrorsNameFileAndOperation checks the message of each error a user
// meets most: one line, naming the command and the file, with no
// meaningless offsets or repeated words.
func TestErrorsNameFileAndOperation(t *testing.T) {
	dir := t.TempDir()
	table := buildText(t, "a\tA", "b\tB")
	missing := filepath.Join(dir, "missing.sst")

	// A directory: no footer offset, no read error.
	for _, cmd := range []string{"info", "verify", "scan"} {
		msg := wantError(t, []string{cmd, dir}, 1, cmd+": ", "open "+dir+": is a directory")
		if strings.Contains(msg, "offset") || strings.Contains(msg, "footer") {
			t.Errorf("sst %s DIR: %q mentions the footer", cmd, msg)
		}
	}
	wantError(t, []string{"get", dir, "k"}, 1, "get: ", "open "+dir+": is a directory")

	// A missing file: "open" once.
	for _, args := range [][]string{{"info", missing}, {"get", missing, "k"}, {"scan", missing}, {"verify", missing}} {
		msg := wantError(t, args, 1, args[0]+": ", "open "+missing+": ")
		if strings.Count(msg, "open") != 1 {
			t.Errorf("sst %q: %q says open more than once", args, msg)
		}
	}

	// An absent key: the same "get: FILE:" prefix as every get error.
	wantError(t, []string{"get", table, "zz"}, 1, "get: "+table+`: key "zz" not found`)
}

// TestScanCorruptionNamesFile damages a data block in the middle of a
// table, which Open does not read: the scan prints the entries before it
// and then fails with one line naming the command and the file.
func TestScanCorruptionNamesFile(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("key%03d\t%s", i, strings.Repeat("v", 40)))
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte(strings.Join(lines, "\n")))
	bad := filepath.Join(dir, "bad.sst")
	mustSST(t, "build", "-block-size", "256", "-compression", "none", "-o", bad, input)
	r, err := reader.Open(bad, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Properties()
	r.Close()
	if p.NumDataBlocks < 4 {
		t.Fatalf("%d data blocks; want several", p.NumDataBlocks)
	}
	data, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	// A byte in the middle of the data: a value's byte, covered by the
	// block checksum.
	mid := int(p.DataSize / 2)
	mid += bytes.IndexByte(data[mid:], 'v')
	data[mid] ^= 0x01
	writeFile(t, bad, data)

	out, _, status := sst(t, "scan", "-keys-only", bad)
	if status != 1 || !strings.HasPrefix(out, "key000\n") {
		t.Errorf("scan of a table damaged mid-way: status %d, stdout starts %.20q", status, out)
	}
	msg := wantError(t, []string{"scan", bad}, 1, "scan: "+bad+": ", "corrupt data block at offset")
	if strings.Count(msg, bad) != 1 {
		t.Errorf("scan: %q names the file more than once", msg)
	}
	wantError(t, []string{"verify", bad}, 1, "verify: "+bad+": ", "corrupt data block")
}
