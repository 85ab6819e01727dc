package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// TestAdaptersReturnRightValues builds a small table with every
// implementation and both compressions and checks each adapter: every
// present key finds exactly its value, every absent key misses, and a scan
// returns every entry in order.
func TestAdaptersReturnRightValues(t *testing.T) {
	d := newDataset(20000, 20000, randomKeys) // lookups = entries: every key is looked up
	if len(d.hits) != d.n {
		t.Fatalf("%d lookups for %d entries", len(d.hits), d.n)
	}
	dir := t.TempDir()
	for _, name := range []string{"ours", "pebble", "goleveldb", "ours-v1", "ours-default", "ours-ra", "ours-v1-ra", "ours-v2", "pebble-2lvl", "pebble2", "pebble2-2lvl"} {
		for _, c := range []implsetup.Compression{implsetup.Snappy, implsetup.None, implsetup.Zstd} {
			im := newImpl(name)
			if !supports(im, c) {
				continue
			}
			path := im.tablePath(dir, c)
			if err := im.build(path, d, c); err != nil {
				t.Fatalf("%s %s: build: %v", name, c, err)
			}
			if p, ok := im.(preparer); ok {
				if err := p.prepare(path); err != nil {
					t.Fatalf("%s %s: prepare: %v", name, c, err)
				}
			}
			tb, err := im.open(path)
			if err != nil {
				t.Fatalf("%s %s: open: %v", name, c, err)
			}
			if err := verifyTable(tb, d); err != nil {
				t.Errorf("%s %s: %v", name, c, err)
			}
			// The adapters must report absence, not an error, for keys
			// outside the table's range too.
			for _, k := range [][]byte{{}, {0}, bytes.Repeat([]byte{0xff}, 17)} {
				if _, ok, err := tb.get(k); ok || err != nil {
					t.Errorf("%s %s: get(%x) = found %v, err %v; want a miss", name, c, k, ok, err)
				}
			}
			if err := tb.close(); err != nil {
				t.Errorf("%s %s: close: %v", name, c, err)
			}
		}
	}
}

// wrongTable returns a corrupted value for one key, so that verifyTable
// can be shown to notice.
type wrongTable struct {
	table
	bad []byte
}

func (w wrongTable) get(key []byte) ([]byte, bool, error) {
	v, ok, err := w.table.get(key)
	if ok && bytes.Equal(key, w.bad) {
		v = append(bytes.Clone(v), 'x')
	}
	return v, ok, err
}

func TestVerifyTableNoticesWrongValues(t *testing.T) {
	d := newDataset(1000, 1000, randomKeys)
	dir := t.TempDir()
	im := newImpl("ours")
	path := im.tablePath(dir, implsetup.Snappy)
	if err := im.build(path, d, implsetup.Snappy); err != nil {
		t.Fatal(err)
	}
	tb, err := im.open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.close()
	if err := verifyTable(wrongTable{tb, d.key(500)}, d); err == nil {
		t.Fatal("verifyTable accepted a wrong value")
	}
}

// TestCompareSmoke runs the whole command at 20000 entries and one
// repetition, with JSON output and the chart, and checks that every
// implementation and compression was measured.
func TestCompareSmoke(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "compare.svg")
	var stdout, stderr bytes.Buffer
	err := mainErr([]string{"-entries", "20000", "-reps", "1", "-json", "-chart", chart, "-dir", dir}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr.String())
	}
	var res results
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, stdout.String())
	}
	// Four implementations with snappy and none; zstd for ours, Pebble
	// v2 and (without cgo) Pebble v1.1.5; goleveldb has no zstd.
	wantRuns := 11
	if cgoEnabled {
		wantRuns = 10
	}
	if res.Entries != 20000 || res.Reps != 1 || len(res.Runs) != wantRuns {
		t.Fatalf("entries %d, reps %d, %d runs; want 20000, 1, %d", res.Entries, res.Reps, len(res.Runs), wantRuns)
	}
	if res.find("goleveldb", "zstd") != nil || (res.find("pebble", "zstd") == nil) != cgoEnabled || res.find("pebble2", "zstd") == nil || res.find("ours", "zstd") == nil {
		t.Fatalf("zstd runs: %+v", res.Runs)
	}
	for _, run := range res.Runs {
		m := run.Median
		if len(run.Samples) != 1 || m.BuildMBps <= 0 || m.FileBytes <= 0 || m.GetHitNs <= 0 || m.GetMissNs <= 0 || m.ScanNs <= 0 {
			t.Errorf("%s %s: implausible figures %+v", run.Impl, run.Compression, m)
		}
	}
	svg, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("goleveldb")) {
		t.Errorf("chart does not look like the expected SVG:\n%s", svg)
	}
	if !strings.Contains(stderr.String(), "done in") {
		t.Errorf("no progress on stderr:\n%s", stderr.String())
	}

	// The markdown report.
	var md bytes.Buffer
	writeMarkdown(&md, &res)
	_, zstdSection, _ := strings.Cut(md.String(), "### zstd")
	if zstdSection == "" || strings.Contains(zstdSection, "goleveldb") || !strings.Contains(zstdSection, "ours/pebble2") {
		t.Errorf("zstd section of the report:\n%s", zstdSection)
	}
	for _, want := range []string{"### snappy", "### none", "| Get hit, ns/op |", "ours/pebble", "ours/pebble2", "ours/goleveldb"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestSequentialDataset: the sequential shape's keys are %016d of 2i, in
// order, and its absent keys are odd numbers within the present range.
func TestSequentialDataset(t *testing.T) {
	d := newDataset(1000, 500, sequentialKeys)
	for i := 0; i < d.n; i++ {
		if got, want := string(d.key(i)), fmt.Sprintf("%016d", 2*i); got != want {
			t.Fatalf("key %d = %q, want %q", i, got, want)
		}
	}
	for j := 0; j < len(d.hits); j++ {
		v, err := strconv.Atoi(string(d.missKey(j)))
		if err != nil || v%2 != 1 || v >= 2*d.n {
			t.Fatalf("absent key %d = %q: not an odd number below %d", j, d.missKey(j), 2*d.n)
		}
	}
}
