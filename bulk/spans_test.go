package bulk_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/reader"
)

// TestSpansAcrossTables checks Writer.AddSpan against a model: random
// point keys and overlapping spans, both in random order, written into
// many small tables (with spills): every key is covered in at most one
// table's span block, by a fragment whose values are those of the spans
// over it in the order added; each table's spans lie between its
// neighbours' keys; and the fragments of all tables together cover
// exactly the union of the spans.
func TestSpansAcrossTables(t *testing.T) {
	keys := []string{""}
	for _, a := range "abcdef" {
		keys = append(keys, string(a))
		for _, b := range "abcdef" {
			keys = append(keys, string(a)+string(b))
		}
	}
	slices.Sort(keys)
	multi := 0 // cases whose spans went into several tables
	defer func() {
		if multi == 0 {
			t.Error("no case spread spans over several tables")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		w, err := bulk.NewWriter(dir, &bulk.Options{
			TargetTableSize: int64(rapid.IntRange(300, 3000).Draw(rt, "target")),
			MemoryBudget:    int64(rapid.SampledFrom([]int{0, 200}).Draw(rt, "budget")),
		})
		if err != nil {
			rt.Fatal(err)
		}
		points := rapid.SliceOfDistinct(rapid.SampledFrom(keys), func(s string) string { return s }).Draw(rt, "points")
		type span struct{ start, end, value string }
		var spans []span
		for i := range rapid.IntRange(0, 10).Draw(rt, "spans") {
			a, b := rapid.SampledFrom(keys).Draw(rt, "a"), rapid.SampledFrom(keys).Draw(rt, "b")
			if a == b {
				b += "z"
			}
			if a > b {
				a, b = b, a
			}
			spans = append(spans, span{a, b, fmt.Sprint("v", i)})
		}
		// Interleave the two kinds of Add.
		pi, si := 0, 0
		for pi < len(points) || si < len(spans) {
			if si < len(spans) && (pi == len(points) || rapid.Bool().Draw(rt, "span next")) {
				s := spans[si]
				if err := w.AddSpan([]byte(s.start), []byte(s.end), []byte(s.value)); err != nil {
					rt.Fatal(err)
				}
				si++
			} else {
				if err := w.Add([]byte(points[pi]), []byte("v")); err != nil {
					rt.Fatal(err)
				}
				pi++
			}
		}
		tables, err := w.Finish()
		if err != nil {
			rt.Fatal(err)
		}
		if _, err := bulk.ReadManifest(dir + "/" + bulk.ManifestName); err != nil {
			rt.Fatal(err)
		}
		readers := make([]*reader.Reader, len(tables))
		for i, ti := range tables {
			r, err := reader.Open(ti.Path, nil)
			if err != nil {
				rt.Fatal(err)
			}
			defer r.Close()
			if err := r.Verify(); err != nil {
				rt.Fatal(err)
			}
			readers[i] = r
			if got := int64(r.Properties().NumSpanFragments); got != ti.Spans {
				rt.Fatalf("table %d: %d fragments, TableInfo says %d", i, got, ti.Spans)
			}
			// The table's spans lie between its neighbours' keys.
			it := r.NewSpanIterator()
			for ok := it.First(); ok; ok = it.Next() {
				sp := it.Span()
				if i > 0 && bytes.Compare(sp.Start, tables[i-1].Largest) <= 0 || i+1 < len(tables) && bytes.Compare(sp.End, tables[i+1].Smallest) > 0 {
					rt.Fatalf("table %d: fragment [%q, %q) crosses a neighbour's keys", i, sp.Start, sp.End)
				}
			}
			it.Close()
		}
		withSpans := 0
		for _, ti := range tables {
			if ti.Spans > 0 {
				withSpans++
			}
		}
		if withSpans > 1 {
			multi++
		}
		if len(spans) > 0 && len(tables) == 0 {
			rt.Fatal("spans but no table")
		}
		probes := append(slices.Clone(keys), "aa\x00", "fz", "zz")
		for _, s := range spans {
			probes = append(probes, s.end)
		}
		for _, k := range probes {
			var want [][]byte
			for _, s := range spans {
				if s.start <= k && k < s.end {
					want = append(want, []byte(s.value))
				}
			}
			var got [][]byte
			found := 0
			for _, r := range readers {
				sp, err := r.SpanAt([]byte(k))
				if err == reader.ErrNotFound {
					continue
				}
				if err != nil {
					rt.Fatal(err)
				}
				found++
				got = sp.Values
			}
			if found > 1 {
				rt.Fatalf("key %q covered in %d tables", k, found)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				rt.Fatalf("spans over %q (-model +tables):\n%s", k, diff)
			}
		}
	})
}
