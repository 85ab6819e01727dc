package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/merge"
)

// TestQuick runs the whole harness at its -quick size (8 tables of 2000
// entries, 2 rounds, every engine and measurement) and checks that the
// report has every figure.
func TestQuick(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := mainErr([]string{"-quick", "-dir", t.TempDir()}, &stdout, &stderr); err != nil {
		t.Fatalf("merge -quick: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, f := range figures {
		if !strings.Contains(out, "| "+f.label+" |") {
			t.Errorf("the report lacks the row %q", f.label)
		}
	}
	for _, want := range []string{"ours (merge)", "Pebble DB", "Pebble NewExternalIter", "goleveldb merged iterator", "Checks: ", "L0: 7 tables in 7 sublevels"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// The allocation targets hold at any size.
	for _, label := range []string{"allocs per Next", "allocs per SeekGE"} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, label) && !strings.Contains(line, "| pass |") {
				t.Errorf("allocation check not passed: %s", line)
			}
		}
	}
	if !strings.Contains(stderr.String(), "done in") {
		t.Errorf("no progress on stderr:\n%s", stderr.String())
	}
	t.Logf("\n%s", out)
}

func smallParams() params {
	return params{tables: 4, entries: 1500, keySpace: 3000, rangeDels: 3, delFrac: 0.05, lookups: 500, seeks: 100, samples: 500}
}

// TestWorkload checks the model: tables of the asked size, range
// deletions disjoint and clear of their own table's keys, and the live
// view as the rules give it.
func TestWorkload(t *testing.T) {
	p := smallParams()
	w := newWorkload(p)
	for ti, tb := range w.tables {
		if len(tb.keys) != p.entries || !slices.IsSorted(tb.keys) {
			t.Fatalf("table %d: %d keys (sorted %v), want %d", ti, len(tb.keys), slices.IsSorted(tb.keys), p.entries)
		}
		if len(tb.spans) == 0 {
			t.Fatalf("table %d: no range deletion", ti)
		}
		for i, s := range tb.spans {
			if s.lo >= s.hi || s.hi >= w.nkeys || i > 0 && tb.spans[i-1].hi >= s.lo {
				t.Fatalf("table %d: range deletions %v not sorted, disjoint and apart", ti, tb.spans)
			}
			for _, j := range tb.keys {
				if int(j) >= s.lo && int(j) < s.hi {
					t.Fatalf("table %d holds key %d under its own range deletion %v", ti, j, s)
				}
			}
		}
	}
	n := 0
	for j := range w.nkeys {
		newest := -1
		for ti, tb := range w.tables {
			if _, ok := slices.BinarySearch(tb.keys, int32(j)); ok {
				newest = ti
			}
		}
		live := newest >= 0
		for ti := newest + 1; live && ti < len(w.tables); ti++ {
			for _, s := range w.tables[ti].spans {
				if j >= s.lo && j < s.hi {
					live = false
				}
			}
		}
		if live != w.live[j] || newest != int(w.newest[j]) {
			t.Fatalf("key %d: live %v newest %d, model says %v %d", j, live, newest, w.live[j], w.newest[j])
		}
		if live {
			n++
		}
	}
	if n != w.nlive || n == 0 || n == w.nkeys {
		t.Fatalf("%d live keys, model says %d (of %d)", n, w.nlive, w.nkeys)
	}
	if len(w.oldIdx) != p.lookups || len(w.oldOnly) != p.lookups*keyLen {
		t.Fatalf("%d keys only in the oldest table", len(w.oldIdx))
	}
	for _, j := range w.oldIdx {
		if w.newest[j] != 0 || !w.live[j] {
			t.Fatalf("key %d is not live in the oldest table only", j)
		}
	}
}

// TestVerifyCatchesWrongViews shows that the correctness check fails on
// views that shadow wrongly or ignore the range deletions.
func TestVerifyCatchesWrongViews(t *testing.T) {
	dir := t.TempDir()
	w := newWorkload(smallParams())
	if err := buildOurs(dir, w); err != nil {
		t.Fatal(err)
	}
	open := func() *oursStack {
		s, err := openOurs(dir, len(w.tables), nil, 8<<20)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := &ours{s: open()}
	defer good.close()
	if err := verifyScans(good, w); err != nil {
		t.Fatalf("the right view: %v", err)
	}
	if err := verifyGets(good, w); err != nil {
		t.Fatalf("the right view's Gets: %v", err)
	}

	oldestFirst := &ours{s: open()}
	defer oldestFirst.close()
	slices.Reverse(oldestFirst.s.levels)
	if err := verifyScans(oldestFirst, w); err == nil {
		t.Error("levels oldest first: the scans passed")
	}
	if err := verifyGets(oldestFirst, w); err == nil {
		t.Error("levels oldest first: the Gets passed")
	}

	noRangeDels := &ours{s: open(), opts: &merge.Options{IsRangeDeletion: func([]byte) bool { return false }}}
	defer noRangeDels.close()
	if err := verifyScans(noRangeDels, w); err == nil {
		t.Error("range deletions ignored: the scans passed")
	}
	if err := verifyGets(noRangeDels, w); err == nil {
		t.Error("range deletions ignored: the Gets passed")
	}
}
