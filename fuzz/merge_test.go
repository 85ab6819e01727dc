package fuzz

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// mergeInput consumes a fuzz input a byte at a time; zeros once used up.
type mergeInput struct{ b []byte }

func (in *mergeInput) next() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

// key draws a key. Three draws in four (c < 0xc0) give three bytes, a
// two-byte prefix and a one-byte suffix (format.Suffix(1)), 64 keys in
// all, so that levels collide; the prefix's bytes include 0x00 and 0xff.
// The fourth gives a key at an edge of the order or of the merge heap's
// 8-byte key prefix (compared first, zero-padded): the empty key, the
// least of all, which a nil-for-unpositioned confusion once lost, or
// eight bytes of 0x00, a or 0xff and a suffix, keys sharing their first
// 8 bytes that only whole keys order, and whose run of 0x00 pads to the
// empty key's prefix. A three-byte key's prefix "\x00\x00" becomes
// "\x00a": its keys would sort after the eight 0x00 bytes their prefix
// begins, and a splitter's prefixes must rise with the keys.
func (in *mergeInput) key() string {
	c := in.next()
	if c < 0xc0 {
		b := [4]byte{0x00, 'a', 'b', 0xff}
		p0, p1 := b[c&3], b[c>>2&3]
		if p0 == 0 && p1 == 0 {
			p1 = 'a'
		}
		return string([]byte{p0, p1, '0' + c>>4&3})
	}
	s := c & 0x3f
	if s < 8 {
		return ""
	}
	fill := [3]byte{0x00, 'a', 0xff}[s%3]
	return string(append(bytes.Repeat([]byte{fill}, 8), [3]byte{0x00, '1', 0xff}[s/3%3]))
}

type mergeFrag struct {
	start, end string
	vals       []string
}

type mergeLevel struct {
	keys   []string
	vals   map[string]string
	frags  []mergeFrag
	hasCut bool   // two tables: [.., cut) and [cut, ..)
	cut    string // may be the empty key: the first table is then empty
}

// FuzzMerge builds one to four levels from the input (keys, point
// deletions, range deletions and range keys, each level one or two
// tables with a splitter), then moves a merge.Iterator as the rest of
// the input says and checks every position against a brute-force view;
// before the moves, merge.Get and each level's Get and SpanAt
// (checkMergeGets).
func FuzzMerge(f *testing.F) {
	f.Add([]byte("\x02\x05abcde\x02aXcz\x01b\x00\x01\x02\x03\x04\x05\x06\x07\x07\x15\x02\x04\x07\x2a\x03\x02"))
	f.Add([]byte("\x03\x08\x11\x22\x33\x44\x55\x66\x77\x88\x03\x10\x20\x30\x40\x00\x09\x19\x29\x39\x49\x59\x69\x79\x89\x99"))
	f.Add(bytes.Repeat([]byte{0x25, 0x61, 0x07, 0x3c}, 40))
	// Two levels holding the empty key (deleted in the older, whose range
	// deletion starts at it and whose first table, cut at "", is empty),
	// and keys whose 8-byte prefixes are equal (all 0x00) where the newer
	// level's key is the greater; then scans both ways and seeks to the
	// edges.
	f.Add([]byte("\x01\x03\xc0\x01\xcc\x01\x10\x01\x00\x00" +
		"\x03\xc0\x00\xc9\x01\xd3\x01\x02\xc0\x05\x00\x00\x01\xc0" +
		"\x00\x02\x02\x02\x02\x02\x01\x04\x04\x04\x04\x04\x05\xc0\x06\xc9\x07\xc0\x07\xd3"))
	// One level of two tables cut at "ba0", a range deletion [aa0,
	// \xffb1) split between them: the fragment covering the cut is the
	// second table's, [ba0, \xffb1), which deletes nothing older here but
	// which SpanAt must find (a span's end is exclusive).
	f.Add([]byte("\x00\x01\x1a\x01\x02\x05\x1b\x00\x00\x01\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &mergeInput{b: data}
		n := 1 + int(in.next()%4)
		mls := make([]mergeLevel, n)
		var levels []merge.Level
		for li := range mls {
			ml := &mls[li]
			ml.vals = map[string]string{}
			for range in.next() % 10 {
				k := in.key()
				if _, dup := ml.vals[k]; dup {
					continue
				}
				ml.keys = append(ml.keys, k)
				if in.next()%4 == 0 {
					ml.vals[k] = "D"
				} else {
					ml.vals[k] = string(rune('0'+li)) + k
				}
			}
			slices.Sort(ml.keys)
			var bounds []string
			for range in.next() % 5 {
				bounds = append(bounds, in.key())
			}
			slices.Sort(bounds)
			bounds = slices.Compact(bounds)
			for i := 0; i+1 < len(bounds); i += 1 + int(in.next()%2) {
				v := []string{"RD", "RK", "RK,RD"}[in.next()%3]
				ml.frags = append(ml.frags, mergeFrag{bounds[i], bounds[i+1], splitValues(v)})
			}
			if in.next()%2 == 1 {
				ml.hasCut, ml.cut = true, in.key()
			}
			levels = append(levels, buildMergeLevel(t, ml))
		}
		var keys, vals []string
		seen := map[string]bool{}
		for _, ml := range mls {
			for _, k := range ml.keys {
				if seen[k] {
					continue
				}
				seen[k] = true
				if v, ok := mergeLookup(mls, k); ok {
					keys = append(keys, k)
					vals = append(vals, v)
				}
			}
		}
		sort.Sort(byKey{keys, vals})

		opts := &merge.Options{
			IsDeletion:      func(v []byte) bool { return string(v) == "D" },
			IsRangeDeletion: func(v []byte) bool { return string(v) == "RD" },
		}
		checkMergeGets(t, mls, levels, opts)
		it := merge.NewIterator(levels, opts)
		defer it.Close()
		pos, ok := -1, false
		inPrefix, prefix := false, ""
		at := func(i int) bool {
			pos = i
			ok = i >= 0 && i < len(keys) && (!inPrefix || hasPrefix1(keys[i], prefix))
			if !ok {
				inPrefix = false
			}
			return ok
		}
		for step := 0; len(in.b) > 0 && step < 64; step++ {
			op := in.next() % 8
			var got bool
			switch op {
			case 0:
				got, inPrefix = it.First(), false
				at(0)
			case 1:
				got, inPrefix = it.Last(), false
				at(len(keys) - 1)
			case 2, 3:
				got = it.Next()
				if ok {
					at(pos + 1)
				}
			case 4:
				got = it.Prev()
				if ok {
					at(pos - 1)
				}
			case 5:
				k := in.key()
				got, inPrefix = it.SeekGE([]byte(k)), false
				at(sort.SearchStrings(keys, k))
			case 6:
				k := in.key()
				got, inPrefix = it.SeekLT([]byte(k)), false
				at(sort.SearchStrings(keys, k) - 1)
			case 7:
				k := in.key()
				p := prefix1(k)
				got = it.SeekPrefixGE([]byte(p), []byte(k))
				inPrefix, prefix = true, p
				at(sort.SearchStrings(keys, k))
			}
			if err := it.Err(); err != nil {
				t.Fatalf("step %d op %d: %v", step, op, err)
			}
			if got != ok {
				t.Fatalf("step %d op %d: got %v, view says %v (at %d of %q)", step, op, got, ok, pos, keys)
			}
			if ok && (string(it.Key()) != keys[pos] || string(it.Value()) != vals[pos]) {
				t.Fatalf("step %d op %d: at %q=%q, view %q=%q", step, op, it.Key(), it.Value(), keys[pos], vals[pos])
			}
		}
	})
}

// checkMergeGets looks up every key of the levels, every fragment's
// bounds and every cut (where one table's span may end and the next
// one's begin) with merge.Get against the brute-force view, and in each
// level with its own Get and SpanAt (merge.PointGetter, which merge.Get
// uses) against the level: its entry, a deletion's too, and the fragment
// covering the key as the level's tables hold it.
func checkMergeGets(t *testing.T, mls []mergeLevel, levels []merge.Level, opts *merge.Options) {
	probes := []string{""}
	for _, ml := range mls {
		probes = append(probes, ml.keys...)
		for _, f := range ml.frags {
			probes = append(probes, f.start, f.end)
		}
		if ml.hasCut {
			probes = append(probes, ml.cut)
		}
	}
	for _, k := range probes {
		want, wok := mergeLookup(mls, k)
		got, err := merge.Get(levels, []byte(k), opts)
		if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) || string(got) != want {
			t.Fatalf("Get(%q) = %q, %v; view %q, %v", k, got, err, want, wok)
		}
		for li, l := range levels {
			g, ok := l.(merge.PointGetter)
			if !ok {
				t.Fatalf("level %d is not a merge.PointGetter", li)
			}
			got, err := g.Get([]byte(k))
			want, wok := mls[li].vals[k]
			if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) || string(got) != want {
				t.Fatalf("level %d: Get(%q) = %q, %v; level holds %q, %v", li, k, got, err, want, wok)
			}
			sp, err := g.SpanAt([]byte(k))
			wf, wok := mls[li].fragAt(k)
			var gotVals []string
			for _, v := range sp.Values {
				gotVals = append(gotVals, string(v))
			}
			if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) ||
				wok && (string(sp.Start) != wf.start || string(sp.End) != wf.end || !slices.Equal(gotVals, wf.vals)) {
				t.Fatalf("level %d: SpanAt(%q) = [%q, %q) %q, %v; level holds [%q, %q) %q, %v", li, k, sp.Start, sp.End, gotVals, err, wf.start, wf.end, wf.vals, wok)
			}
		}
	}
}

// fragAt returns the fragment covering k as the level's tables hold it:
// cut at ml.cut when the level has two tables.
func (ml *mergeLevel) fragAt(k string) (mergeFrag, bool) {
	for _, f := range ml.frags {
		if f.start > k || k >= f.end {
			continue
		}
		if ml.hasCut {
			if k < ml.cut {
				f.end = min(f.end, ml.cut)
			} else {
				f.start = max(f.start, ml.cut)
			}
		}
		return f, true
	}
	return mergeFrag{}, false
}

// splitValues splits a comma-separated list of span values.
func splitValues(csv string) []string {
	var out []string
	for _, v := range bytes.Split([]byte(csv), []byte(",")) {
		out = append(out, string(v))
	}
	return out
}

// prefix1 is format.Suffix(1)'s prefix of a key of this target: all of
// a key shorter than the suffix (the empty key).
func prefix1(k string) string { return k[:max(len(k)-1, 0)] }

func hasPrefix1(k, p string) bool { return prefix1(k) == p }

type byKey struct{ k, v []string }

func (b byKey) Len() int           { return len(b.k) }
func (b byKey) Less(i, j int) bool { return b.k[i] < b.k[j] }
func (b byKey) Swap(i, j int) {
	b.k[i], b.k[j] = b.k[j], b.k[i]
	b.v[i], b.v[j] = b.v[j], b.v[i]
}

func mergeLookup(mls []mergeLevel, k string) (string, bool) {
	for i, ml := range mls {
		v, ok := ml.vals[k]
		if !ok {
			continue
		}
		if v == "D" {
			return "", false
		}
		for _, newer := range mls[:i] {
			for _, f := range newer.frags {
				if f.start <= k && k < f.end && slices.Contains(f.vals, "RD") {
					return "", false
				}
			}
		}
		return v, true
	}
	return "", false
}

// buildMergeLevel writes a level's tables in memory (cut at ml.cut) and
// returns them as a merge level.
func buildMergeLevel(t *testing.T, ml *mergeLevel) merge.Level {
	var rs []*reader.Reader
	// A table's keys are [lo, hi), the last table's every key from lo.
	type keyRange struct {
		lo, hi string
		last   bool
	}
	ranges := []keyRange{{last: true}}
	if ml.hasCut {
		ranges = []keyRange{{hi: ml.cut}, {lo: ml.cut, last: true}}
	}
	for _, rg := range ranges {
		holds := func(k string) bool { return rg.lo <= k && (rg.last || k < rg.hi) }
		var buf bytes.Buffer
		b := builder.New(&buf, &builder.Options{BlockSize: 32, Splitter: format.Suffix(1)})
		for _, k := range ml.keys {
			if holds(k) {
				if err := b.Add([]byte(k), []byte(ml.vals[k])); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range ml.frags {
			st, en := max(f.start, rg.lo), f.end
			if !rg.last {
				en = min(en, rg.hi)
			}
			if st >= en {
				continue
			}
			for _, v := range f.vals {
				if err := b.AddSpan([]byte(st), []byte(en), []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		r, err := reader.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		rs = append(rs, r)
	}
	return merge.Tables(rs...)
}
