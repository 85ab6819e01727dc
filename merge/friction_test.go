package merge_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// TestTablesNilReader checks that a nil reader given to Tables is
// reported as the caller's mistake, naming its place, and not as tables
// out of order (issue 49, item 5).
func TestTablesNilReader(t *testing.T) {
	ab := table(t, t.TempDir(), []string{"a", "b"})
	levels := []merge.Level{merge.Tables(ab, nil)}
	_, err := scan(t, levels, nil)
	_, gerr := merge.Get(levels, []byte("a"), nil)
	_, cerr := merge.Compact(levels, &merge.CompactOptions{Dir: filepath.Join(t.TempDir(), "out")})
	for _, e := range []error{err, gerr, cerr} {
		if e == nil || errors.Is(e, merge.ErrTableOrder) || !strings.Contains(e.Error(), "argument 1 of 2 is a nil *reader.Reader") {
			t.Fatalf("error %v: want one naming argument 1, not wrapping ErrTableOrder", e)
		}
	}
}

// memEdgeKeys are the keys the memtable tests draw: the empty key, 0x00
// and 0xff bytes, keys of 8 bytes and more differing past the 8th.
var memEdgeKeys = []string{"", "\x00", "\x00\x00", "a", "ab", "abcdefgh", "abcdefgh\x00", "abcdefgi", "b", "\xff", "\xff\xff"}

// TestMemtableLikeTable checks merge.Memtable's iterator against a
// reader.Iterator over a table of the same entries, move by move:
// bounds, SetBounds, both prefix seeks and prefix iteration mode, with
// and without a splitter. The reader is the reference for the semantics
// LevelIterator asks of a level.
func TestMemtableLikeTable(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		mvcc := rapid.Bool().Draw(rt, "mvcc")
		alphabet := memEdgeKeys
		var opts builder.Options
		var split format.Splitter
		if mvcc {
			// Fixed-length user keys and a 1-byte version: prefixes sort as
			// the keys do, as Suffix(1) asks; "" is its own prefix.
			split = format.Suffix(1)
			opts.Splitter = split
			n := rapid.SampledFrom([]int{2, 9}).Draw(rt, "userlen")
			alphabet = []string{""}
			for _, u := range []string{"\x00", "a", "b", "\xff"} {
				for _, v := range []string{"\x00", "1", "\xff"} {
					alphabet = append(alphabet, strings.Repeat(u, n)+v)
				}
			}
		}
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom(alphabet), 0, len(alphabet), rapid.ID[string]).Draw(rt, "keys")
		slices.Sort(keys)
		path := filepath.Join(dir, fmt.Sprintf("m%d.sst", caseSeq.Add(1)))
		b, err := builder.Create(path, &opts)
		if err != nil {
			rt.Fatal(err)
		}
		var ks, vs [][]byte
		for i, k := range keys {
			v := []byte(fmt.Sprint(i))
			if i%3 == 0 {
				v = nil // empty values too
			}
			if err := b.Add([]byte(k), v); err != nil {
				rt.Fatal(err)
			}
			ks, vs = append(ks, []byte(k)), append(vs, v)
		}
		if err := b.Finish(); err != nil {
			rt.Fatal(err)
		}
		r, err := reader.Open(path, nil)
		if err != nil {
			rt.Fatal(err)
		}
		defer r.Close()
		want := r.NewIter(nil)
		defer want.Close()
		mem := &merge.Memtable{NewCursor: func() merge.Cursor { return merge.SliceCursor(ks, vs) }, Splitter: split}
		got := mem.NewIter(nil)
		defer got.Close()

		probes := append(slices.Clone(alphabet), "\x00\x00\x00", "abc", "c", "a\xff", "b\x00\x00")
		key := rapid.SampledFrom(probes)
		bound := rapid.Ptr(key, true)
		for step := range rapid.IntRange(1, 50).Draw(rt, "steps") {
			var ok, wok bool
			op := rapid.IntRange(0, 8).Draw(rt, "op")
			switch op {
			case 0:
				ok, wok = got.First(), want.First()
			case 1:
				ok, wok = got.Last(), want.Last()
			case 2:
				ok, wok = got.Next(), want.Next()
			case 3:
				ok, wok = got.Prev(), want.Prev()
			case 4:
				k := []byte(key.Draw(rt, "k"))
				ok, wok = got.SeekGE(k), want.SeekGE(k)
			case 5:
				k := []byte(key.Draw(rt, "k"))
				ok, wok = got.SeekLT(k), want.SeekLT(k)
			case 6, 7:
				k := []byte(key.Draw(rt, "k"))
				p := []byte(key.Draw(rt, "p"))
				if split != nil && rapid.Bool().Draw(rt, "ownprefix") {
					p = k[:split.Split(k)]
				}
				if op == 6 {
					ok, wok = got.SeekPrefixGE(p, k), want.SeekPrefixGE(p, k)
				} else {
					ok, wok = got.SeekPrefixLT(p, k), want.SeekPrefixLT(p, k)
				}
			case 8:
				lo, hi := bptr(bound.Draw(rt, "lo")), bptr(bound.Draw(rt, "hi"))
				got.SetBounds(lo, hi)
				want.SetBounds(lo, hi)
				continue
			}
			if err := want.Err(); err != nil {
				rt.Fatal(err)
			}
			if ok != wok || ok && (!bytes.Equal(got.Key(), want.Key()) || !bytes.Equal(got.Value(), want.Value())) {
				rt.Fatalf("step %d op %d: memtable %v %q=%q, table %v %q=%q", step, op, ok, got.Key(), got.Value(), wok, want.Key(), want.Value())
			}
		}
	})
}

// TestMemtableSpans checks that merge.Memtable cuts overlapping spans
// given in any order into the fragments a table's builder makes of the
// same spans, and that its span iterator moves as the table's does. The
// values over a fragment are compared as a set: the memtable lists them
// in the order given, the builder in start order.
func TestMemtableSpans(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		var spans []reader.Span
		for i := range rapid.IntRange(1, 6).Draw(rt, "n") {
			s := rapid.SampledFrom(memEdgeKeys).Draw(rt, "start")
			e := rapid.SampledFrom(memEdgeKeys).Draw(rt, "end")
			if s >= e {
				continue
			}
			spans = append(spans, reader.Span{Start: []byte(s), End: []byte(e), Values: [][]byte{[]byte(fmt.Sprint(i))}})
		}
		if len(spans) == 0 {
			return
		}
		// The builder takes spans in start order; ties keep their order,
		// as the fragments' values do.
		sorted := slices.Clone(spans)
		slices.SortStableFunc(sorted, func(a, b reader.Span) int { return bytes.Compare(a.Start, b.Start) })
		path := filepath.Join(dir, fmt.Sprintf("s%d.sst", caseSeq.Add(1)))
		b, err := builder.Create(path, nil)
		if err != nil {
			rt.Fatal(err)
		}
		for _, sp := range sorted {
			if err := b.AddSpan(sp.Start, sp.End, sp.Values[0]); err != nil {
				rt.Fatal(err)
			}
		}
		if err := b.Finish(); err != nil {
			rt.Fatal(err)
		}
		r, err := reader.Open(path, nil)
		if err != nil {
			rt.Fatal(err)
		}
		defer r.Close()
		want := r.NewSpanIterator()
		defer want.Close()
		got := (&merge.Memtable{NewCursor: func() merge.Cursor { return merge.SliceCursor(nil, nil) }, Spans: func() []reader.Span { return spans }}).NewSpanIter()
		defer got.Close()
		key := rapid.SampledFrom(append(slices.Clone(memEdgeKeys), "abc", "c"))
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			var ok, wok bool
			op := rapid.IntRange(0, 5).Draw(rt, "op")
			switch op {
			case 0:
				ok, wok = got.First(), want.First()
			case 1:
				ok, wok = got.Last(), want.Last()
			case 2:
				ok, wok = got.Next(), want.Next()
			case 3:
				ok, wok = got.Prev(), want.Prev()
			case 4:
				k := []byte(key.Draw(rt, "k"))
				ok, wok = got.SeekGE(k), want.SeekGE(k)
			case 5:
				k := []byte(key.Draw(rt, "k"))
				ok, wok = got.SeekLT(k), want.SeekLT(k)
			}
			g, w := spanString(got.Span()), spanString(want.Span())
			if ok != wok || ok && g != w {
				rt.Fatalf("step %d op %d: memtable %v %s, table %v %s", step, op, ok, g, wok, w)
			}
		}
	})
}

// TestMemtableRangeDeletion checks what the docs say of a memtable's
// range deletions: they hide the older levels' keys, and none of the
// memtable's own, so Put k; DeleteRange over k leaves k visible unless
// the engine removes k itself. A span with no values is a range
// deletion; a span whose start is not below its end is an error.
func TestMemtableRangeDeletion(t *testing.T) {
	older := table(t, t.TempDir(), []string{"a", "b", "c", "d"})
	keys := [][]byte{[]byte("b"), []byte("x")}
	vals := [][]byte{[]byte("mem"), []byte("mem")}
	spans := []reader.Span{
		{Start: []byte("c"), End: []byte("z")},                                // no value: deletes
		{Start: []byte("a"), End: []byte("d"), Values: [][]byte{[]byte("2")}}, // overlaps it
	}
	mem := &merge.Memtable{
		NewCursor: func() merge.Cursor { return merge.SliceCursor(keys, vals) },
		Spans:     func() []reader.Span { return spans },
	}
	levels := []merge.Level{mem, merge.Tables(older)}
	got, err := scan(t, levels, nil)
	if err != nil {
		t.Fatal(err)
	}
	// b and x are the memtable's own, inside its spans: they stay.
	if want := []string{"b", "x"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view %q, want %q", got, want)
	}
	for k, want := range map[string]error{"a": reader.ErrNotFound, "b": nil, "d": reader.ErrNotFound} {
		if _, err := merge.Get(levels, []byte(k), nil); err != want {
			t.Errorf("Get(%q): %v, want %v", k, err, want)
		}
	}

	spans = append(spans, reader.Span{Start: []byte("q"), End: []byte("q")})
	_, err = scan(t, levels, nil)
	if err == nil || !strings.Contains(err.Error(), `span 2 of 3: start "q" is not below its end "q"`) {
		t.Fatalf("scan over an empty span: %v, want an error naming it", err)
	}
}

// TestIsDeletionEmptyValue checks what Options.IsDeletion's doc says:
// empty values reach it, so the README's kind-byte check tests the
// length first (its old form, v[0] == kind, panicked out of First).
func TestIsDeletionEmptyValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.sst")
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"a", ""}, {"b", "\x00"}, {"c", "\x01c"}} {
		if err := b.Add([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const kindDelete = 0
	empty := 0
	opts := &merge.Options{IsDeletion: func(v []byte) bool {
		if len(v) == 0 {
			empty++
		}
		return len(v) > 0 && v[0] == kindDelete // the README's check
	}}
	got, err := scan(t, []merge.Level{merge.Tables(r)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"a", "c"}) || empty == 0 {
		t.Fatalf("view %q, IsDeletion saw %d empty values: want a and c, and the empty value asked about", got, empty)
	}
}

// spanString renders a fragment with its values sorted.
func spanString(sp reader.Span) string {
	vs := slices.Clone(sp.Values)
	slices.SortFunc(vs, bytes.Compare)
	return fmt.Sprintf("[%q, %q) %q", sp.Start, sp.End, vs)
}
