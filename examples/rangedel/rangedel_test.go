// Package rangedel_test shows range deletions with this module: two
// tables, an older one of point keys and a newer one holding range
// deletions (Builder.AddSpan) and new puts, read as one view that hides
// the deleted keys, as an LSM engine's read path does, then compacted
// into a table that needs no range deletion at all.
//
// Package merge does the reading. Each table is one level
// (merge.Tables), and the levels are given newest first. The rule is
// positional: a range deletion in level i hides the keys of the older
// levels j > i that it covers, and none of its own level's keys. So the
// newer table can delete [b, d) and put c in the same write: c stays,
// the older table's b and c are gone. Neither the span values nor the
// tables need sequence numbers for that; with nil merge.Options every
// span is a range deletion, and its value is free for the engine's use
// (here a constant).
//
//   - merge.Get looks one key up: the newest level's entry, unless a
//     newer level's span covers the key (Reader.Get and Reader.SpanAt,
//     one table each, filters first).
//   - merge.NewIterator scans and seeks the view in either direction,
//     stepping each level's span iterator along with the points.
//   - merge.Compact writes the view into new tables. With Bottom (no
//     older data below the levels compacted) the range deletions have
//     done their work and are dropped, with the keys they hid.
//
// TestMergedView checks all three against a map with rapid: random keys
// in the older table, random overlapping range deletions and new puts in
// the newer one; Get, forward and reverse scans, SeekGE and SeekLT on
// the view, then the compacted output read alone.
package rangedel_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// rangeDelValue is the value of every range deletion: merge's nil
// Options treat every span as one, whatever its value.
var rangeDelValue = []byte("rangedel")

type kv struct{ k, v string }
type del struct{ start, end string }

// build writes a table of puts (sorted by key) and range deletions of
// [start, end) (sorted by start; they may overlap), and opens it.
func build(path string, puts []kv, dels []del) (*reader.Reader, error) {
	b, err := builder.Create(path, nil) // the defaults write spans (format version 5)
	if err != nil {
		return nil, err
	}
	for _, p := range puts {
		if err := b.Add([]byte(p.k), []byte(p.v)); err != nil {
			b.Abort()
			return nil, err
		}
	}
	for _, d := range dels {
		if err := b.AddSpan([]byte(d.start), []byte(d.end), rangeDelValue); err != nil {
			b.Abort()
			return nil, err
		}
	}
	if err := b.Finish(); err != nil {
		return nil, err
	}
	return reader.Open(path, nil)
}

// scan returns the view's entries in key order, or in reverse.
func scan(levels []merge.Level, reverse bool) ([]kv, error) {
	it := merge.NewIterator(levels, nil)
	defer it.Close()
	var out []kv
	if reverse {
		for ok := it.Last(); ok; ok = it.Prev() {
			out = append(out, kv{string(it.Key()), string(it.Value())})
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			// Key and Value are valid until the next move: string copies them.
			out = append(out, kv{string(it.Key()), string(it.Value())})
		}
	}
	return out, it.Close()
}

// caseNum numbers rapid's cases, for their directories.
var caseNum int

func TestMergedView(t *testing.T) {
	root := t.TempDir()
	keyGen := rapid.StringMatching(`[a-e]{1,3}`)
	distinct := func(s string) string { return s }
	rapid.Check(t, func(rt *rapid.T) {
		caseNum++
		dir := filepath.Join(root, fmt.Sprint(caseNum))
		if err := os.Mkdir(dir, 0o755); err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir) // runs last, after the readers' Close

		// The older table: point keys only.
		model := map[string]string{}
		older := rapid.SliceOfDistinct(keyGen, distinct).Draw(rt, "older")
		slices.Sort(older)
		var oldPuts []kv
		for i, k := range older {
			oldPuts = append(oldPuts, kv{k, fmt.Sprint("old", i)})
			model[k] = fmt.Sprint("old", i)
		}
		// The newer table: range deletions, which hide the older keys...
		var dels []del
		for range rapid.IntRange(0, 4).Draw(rt, "dels") {
			a, b := keyGen.Draw(rt, "a"), keyGen.Draw(rt, "b")
			if a == b {
				b += "z"
			}
			dels = append(dels, del{min(a, b), max(a, b)})
		}
		slices.SortFunc(dels, func(x, y del) int { return strings.Compare(x.start, y.start) })
		for k := range model {
			for _, d := range dels {
				if d.start <= k && k < d.end {
					delete(model, k)
				}
			}
		}
		// ...and puts, which its own deletions do not hide.
		newer := rapid.SliceOfDistinct(keyGen, distinct).Draw(rt, "newer")
		slices.Sort(newer)
		var newPuts []kv
		for i, k := range newer {
			newPuts = append(newPuts, kv{k, fmt.Sprint("new", i)})
			model[k] = fmt.Sprint("new", i)
		}
		r1, err := build(filepath.Join(dir, "1.sst"), oldPuts, nil)
		if err != nil {
			rt.Fatal(err)
		}
		defer r1.Close()
		r2, err := build(filepath.Join(dir, "2.sst"), newPuts, dels)
		if err != nil {
			rt.Fatal(err)
		}
		defer r2.Close()

		// One level per table, newest first.
		levels := []merge.Level{merge.Tables(r2), merge.Tables(r1)}

		var want []kv
		for k, v := range model {
			want = append(want, kv{k, v})
		}
		slices.SortFunc(want, func(x, y kv) int { return strings.Compare(x.k, y.k) })
		probes := append(append(slices.Clone(older), newer...), "", "a", "c", "zz")
		for _, d := range dels {
			probes = append(probes, d.start, d.end)
		}
		checkView(rt, "view", levels, want, probes)

		// Compact both tables. Nothing lies below them (Bottom), so the
		// range deletions and the keys they hid are dropped: the output
		// reads as the view did on its own, without a span.
		infos, err := merge.Compact(levels, &merge.CompactOptions{Dir: filepath.Join(dir, "compacted"), Bottom: true})
		if err != nil {
			rt.Fatal(err)
		}
		var outs []*reader.Reader
		for _, ti := range infos {
			r, err := reader.Open(ti.Path, nil)
			if err != nil {
				rt.Fatal(err)
			}
			defer r.Close()
			if n := r.Properties().NumSpanFragments; n != 0 {
				rt.Fatalf("%s: %d span fragments after a bottom compaction", ti.Path, n)
			}
			outs = append(outs, r)
		}
		checkView(rt, "compacted", []merge.Level{merge.Tables(outs...)}, want, probes)
	})
}

// checkView checks the view of levels against want, the model's entries
// in key order: Get of every probe, a forward and a reverse scan, and
// SeekGE and SeekLT at every probe.
func checkView(t *rapid.T, name string, levels []merge.Level, want []kv, probes []string) {
	// find returns the index of the first model entry >= k.
	find := func(k string) int {
		i, _ := slices.BinarySearchFunc(want, k, func(e kv, k string) int { return strings.Compare(e.k, k) })
		return i
	}
	for _, k := range probes {
		got, err := merge.Get(levels, []byte(k), nil)
		i := find(k)
		found := i < len(want) && want[i].k == k
		switch {
		case err != nil && !errors.Is(err, reader.ErrNotFound):
			t.Fatalf("%s: Get(%q): %v", name, k, err)
		case found && (err != nil || string(got) != want[i].v):
			t.Fatalf("%s: Get(%q) = %q, %v; model %q", name, k, got, err, want[i].v)
		case !found && err == nil:
			t.Fatalf("%s: Get(%q) = %q; model has no such key", name, k, got)
		}
	}

	fwd, err := scan(levels, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fwd, want) {
		t.Fatalf("%s: scan %v\nmodel %v", name, fwd, want)
	}
	rev, err := scan(levels, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(rev)
	if !slices.Equal(rev, want) {
		t.Fatalf("%s: reverse scan (reversed) %v\nmodel %v", name, rev, want)
	}

	it := merge.NewIterator(levels, nil)
	defer it.Close()
	for _, k := range probes {
		// SeekGE lands on the first key >= k, and Next goes on from there.
		i := find(k)
		ok := it.SeekGE([]byte(k))
		if ok != (i < len(want)) || ok && string(it.Key()) != want[i].k {
			t.Fatalf("%s: SeekGE(%q) = %v at %q; model %v", name, k, ok, it.Key(), want[i:])
		}
		if ok {
			ok = it.Next()
			if ok != (i+1 < len(want)) || ok && string(it.Key()) != want[i+1].k {
				t.Fatalf("%s: Next after SeekGE(%q) = %v at %q; model %v", name, k, ok, it.Key(), want[i+1:])
			}
		}
		// SeekLT lands on the last key < k.
		ok = it.SeekLT([]byte(k))
		if ok != (i > 0) || ok && string(it.Key()) != want[i-1].k {
			t.Fatalf("%s: SeekLT(%q) = %v at %q; model %v", name, k, ok, it.Key(), want[:i])
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeleteAndPutInOneTable is the rule on one case: the newer table
// deletes [b, d) and puts c; the older table's b and c are hidden, the
// newer c is not, and the compacted table holds exactly the view.
func TestDeleteAndPutInOneTable(t *testing.T) {
	dir := t.TempDir()
	older, err := build(filepath.Join(dir, "1.sst"), []kv{{"a", "old"}, {"b", "old"}, {"c", "old"}, {"d", "old"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer older.Close()
	newer, err := build(filepath.Join(dir, "2.sst"), []kv{{"c", "new"}}, []del{{"b", "d"}})
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	levels := []merge.Level{merge.Tables(newer), merge.Tables(older)}

	want := []kv{{"a", "old"}, {"c", "new"}, {"d", "old"}}
	if got, err := scan(levels, false); err != nil || !slices.Equal(got, want) {
		t.Fatalf("view = %v, %v; want %v", got, err, want)
	}
	if v, err := merge.Get(levels, []byte("b"), nil); !errors.Is(err, reader.ErrNotFound) {
		t.Fatalf("Get(b) = %q, %v; want reader.ErrNotFound", v, err)
	}

	infos, err := merge.Compact(levels, &merge.CompactOptions{Dir: filepath.Join(dir, "compacted"), Bottom: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Entries != 3 || infos[0].Spans != 0 {
		t.Fatalf("Compact wrote %+v; want one table of 3 entries and no span", infos)
	}
	out, err := reader.Open(infos[0].Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if got, err := scan([]merge.Level{merge.Tables(out)}, false); err != nil || !slices.Equal(got, want) {
		t.Fatalf("compacted = %v, %v; want %v", got, err, want)
	}
}
