package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/reader"
)

// bulkInput writes n "key<TAB>value" lines in random order to a file in
// dir and returns its path and the lines sorted.
func bulkInput(t *testing.T, dir, name string, n, seed int) (string, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("key-%d-%08d\t%s", seed, i, strings.Repeat(string(rune('a'+i%26)), rng.IntN(100)))
	}
	rng.Shuffle(n, func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	path := filepath.Join(dir, name)
	writeFile(t, path, []byte(strings.Join(lines, "\n")+"\n"))
	slices.Sort(lines)
	return path, lines
}

// tableLines returns the entries of the tables, in order, as lines.
func tableLines(t *testing.T, paths ...string) []string {
	t.Helper()
	var got []string
	for _, p := range paths {
		r, err := reader.Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := r.NewIterator()
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key())+"\t"+string(it.Value()))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	return got
}

// TestBuildSpills builds one table from input ten times -memory: the table
// holds exactly the sorted input and no spilled run is left beside it.
func TestBuildSpills(t *testing.T) {
	dir := t.TempDir()
	in, want := bulkInput(t, dir, "in.txt", 30000, 1)
	out := filepath.Join(dir, "out.sst")
	mustSST(t, "build", "-memory", "1MiB", "-o", out, in)
	if got := tableLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("table holds %d entries, want the %d input lines in order", len(got), len(want))
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt", "out.sst"}) {
		t.Fatalf("dir holds %q", names)
	}
}

// TestBuildSplit builds a directory of tables from two inputs and checks
// that they hold exactly the input, sorted, without overlap, near the
// target size, and that the manifest lists them.
func TestBuildSplit(t *testing.T) {
	dir := t.TempDir()
	in1, want1 := bulkInput(t, dir, "in1.txt", 20000, 1)
	in2, want2 := bulkInput(t, dir, "in2.txt", 20000, 2)
	want := append(want1, want2...)
	slices.Sort(want)
	out := filepath.Join(dir, "tables")
	stdout := mustSST(t, "build", "-memory", "1MiB", "-split", "32KiB", "-o", out, in1, in2)
	if !strings.Contains(stdout, "entries:           40000\n") {
		t.Errorf("output lacks the entry count:\n%s", stdout)
	}
	m, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) < 5 {
		t.Fatalf("%d tables", len(m.Tables))
	}
	var paths []string
	for i, ti := range m.Tables {
		paths = append(paths, ti.Path)
		if i < len(m.Tables)-1 && (ti.Size < 28<<10 || ti.Size > 40<<10) {
			t.Errorf("table %s: %d bytes, want about 32 KiB", ti.Path, ti.Size)
		}
		mustSST(t, "verify", ti.Path)
	}
	if got := tableLines(t, paths...); !slices.Equal(got, want) {
		t.Fatalf("tables hold %d entries, want the %d input lines in order", len(got), len(want))
	}
	// An earlier build in DIR is refused without -f, replaced with it.
	wantError(t, []string{"build", "-split", "1MiB", "-o", out, in1}, 1, out+" already holds manifest.json", "use -f")
	mustSST(t, "build", "-f", "-split", "1MiB", "-o", out, in1)
	m, err = bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
	if err != nil || m.Entries != 20000 || len(m.Tables) != 1 {
		t.Fatalf("rebuilt manifest: %+v, %v", m, err)
	}
	if n := len(dirNames(t, out)); n != 2 {
		t.Fatalf("dir holds %d files after -f, want 1 table and the manifest", n)
	}
	// A duplicate across inputs names both places and leaves nothing.
	out2 := filepath.Join(dir, "dup")
	wantError(t, []string{"build", "-split", "1MiB", "-o", out2, in1, in1}, 1, `duplicate key "key-1-`, "in1.txt:")
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Fatalf("failed split build left %s: %v", out2, err)
	}
}

// TestBuildProgress checks the progress line, and that -q turns it off.
func TestBuildProgress(t *testing.T) {
	forceProgress, progressInterval = true, time.Millisecond
	defer func() { forceProgress, progressInterval = false, time.Second }()
	dir := t.TempDir()
	in, _ := bulkInput(t, dir, "in.txt", 50000, 3)
	_, errs, status := sst(t, "build", "-memory", "1MiB", "-o", filepath.Join(dir, "a.sst"), in)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	for _, s := range []string{"\rsst build: ", "50000 entries", "3.0 MiB read"} {
		if !strings.Contains(errs, s) {
			t.Errorf("progress output lacks %q: %q", s, errs)
		}
	}
	if !regexp.MustCompile(`, [1-9][0-9]* runs`).MatchString(errs) {
		t.Errorf("progress output lacks the run count: %q", errs)
	}
	if !strings.HasSuffix(errs, "\n") {
		t.Errorf("progress output does not end its line")
	}
	_, errs, status = sst(t, "build", "-q", "-memory", "1MiB", "-o", filepath.Join(dir, "b.sst"), in)
	if status != 0 || errs != "" {
		t.Fatalf("-q: status %d, stderr %q", status, errs)
	}
}

func TestBuildBulkFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, []byte("a\t1\n"))
	out := filepath.Join(dir, "o")
	for _, args := range [][]string{
		{"build", "-memory", "lots", "-o", out, in},
		{"build", "-memory", "10KiB", "-o", out, in},
		{"build", "-split", "0", "-o", out, in},
		{"build", "-split", "-5MiB", "-o", out, in},
		{"build", "-split", "1MiB", "-o", out},
		{"build", "-o", out, in, in},
	} {
		wantError(t, args, 2)
	}
	writeFile(t, out, nil)
	wantError(t, []string{"build", "-split", "1MiB", "-o", out, in}, 1, "not a directory")
}

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "100": 100, "1K": 1 << 10, "256MiB": 256 << 20, "64MiB": 64 << 20, "1.5GiB": 3 << 29,
		"2GB": 2e9, "10kb": 10000, "1 MiB": 1 << 20, "7b": 7,
	} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "1XB", "-1", "1e30GiB", "abc"} {
		if got, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q) = %d, want an error", s, got)
		}
	}
	_ = bytes.Equal
}
