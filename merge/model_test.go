package merge_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// The model's conventions: a point value starting with 'D' is a
// deletion; a span value starting "RD" a range deletion, any other span
// value (such as "RK...") a range key, which deletes nothing.
func isDel(v []byte) bool      { return len(v) > 0 && v[0] == 'D' }
func isRangeDel(v []byte) bool { return bytes.HasPrefix(v, []byte("RD")) }

var modelOpts = &merge.Options{IsDeletion: isDel, IsRangeDeletion: isRangeDel}

// frag is a span fragment of the model: [start, end) with values.
type frag struct {
	start, end string
	vals       []string
}

// modelLevel is one level as drawn: sorted distinct keys with values,
// sorted non-overlapping fragments, and the keys at which its tables
// are cut.
type modelLevel struct {
	keys  []string
	vals  map[string]string
	frags []frag
	cuts  []string // table i holds [cuts[i-1], cuts[i])
	mem   bool     // a memLevel, not tables
}

// shape is how keys are drawn: mvcc keys are a prefix and a one-byte
// suffix (tables built with format.Suffix(1)); plain keys are whole.
// Besides short keys of a few letters, which make levels collide, both
// draw the keys at the edges of the order and of the merge heap's
// 8-byte key prefix (compared first, zero-padded): the empty key, the
// least key, which a nil-for-unpositioned confusion once lost; keys of
// 0x00 and 0xff bytes; and keys of 8 bytes and more sharing their first
// 8, which only the comparison of whole keys orders (a run of 0x00 bytes
// pads to the empty key's prefix).
type shape struct{ mvcc bool }

// edgeBytes are the bytes of the edge keys: the least, a letter, the
// greatest.
var edgeBytes = []byte{0x00, 'b', 0xff}

func (s shape) key() *rapid.Generator[string] {
	short := rapid.StringMatching(`[a-d]{1,3}`)
	edgeShort := rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.SampledFrom(edgeBytes), 1, 3).Draw(t, "edge"))
	})
	if s.mvcc {
		short = rapid.StringMatching(`[a-c]{2}[0-3]`)
		// The prefix "\x00\x00" is left out: its keys would sort after
		// the long keys of eight 0x00 bytes, whose prefix it begins, and
		// a splitter's prefixes must rise with the keys.
		edgeShort = rapid.Custom(func(t *rapid.T) string {
			p := rapid.SliceOfN(rapid.SampledFrom(edgeBytes), 2, 2).Draw(t, "edgeprefix")
			return string(p) + rapid.StringMatching(`[0-3]`).Draw(t, "suffix")
		}).Filter(func(k string) bool { return !strings.HasPrefix(k, "\x00\x00") })
	}
	long := rapid.Custom(func(t *rapid.T) string {
		k := bytes.Repeat([]byte{rapid.SampledFrom(edgeBytes).Draw(t, "fill")}, 8)
		return string(append(k, rapid.SliceOfN(rapid.SampledFrom(edgeBytes), 0, 2).Draw(t, "tail")...))
	})
	if s.mvcc {
		// An 8-byte prefix and a version: for the same reason as above,
		// all long keys' prefixes have the same length.
		long = rapid.Custom(func(t *rapid.T) string {
			k := bytes.Repeat([]byte{rapid.SampledFrom(edgeBytes).Draw(t, "fill")}, 8)
			return string(k) + rapid.StringMatching(`[0-3]`).Draw(t, "suffix")
		})
	}
	return rapid.OneOf(short, short, rapid.Just(""), edgeShort, long)
}

func (s shape) prefix(k string) string {
	if s.mvcc && len(k) > 0 {
		return k[:len(k)-1]
	}
	return k
}

// hasPrefix says whether k has prefix p as the levels see it: the
// splitter's prefix for mvcc keys, bytes.HasPrefix for plain keys (a
// level without a splitter, as LevelIterator says).
func (s shape) hasPrefix(k, p string) bool {
	if s.mvcc {
		return s.prefix(k) == p
	}
	return strings.HasPrefix(k, p)
}

// drawPrefix draws the prefix of a prefix seek at k: most often k's own
// (the documented use), else another key's. A plain key's prefix is any
// of its heads, the empty one included.
func (s shape) drawPrefix(t *rapid.T, kg *rapid.Generator[string], k string) string {
	from := k
	if !rapid.Bool().Draw(t, "ownprefix") {
		from = kg.Draw(t, "p")
	}
	if s.mvcc {
		return s.prefix(from)
	}
	return from[:rapid.IntRange(0, len(from)).Draw(t, "plen")]
}

// fragAt is the model of the level's SpanAt: the fragment covering k as
// the level's tables hold it, cut at the tables' bounds (a memLevel's
// whole).
func (l modelLevel) fragAt(k string) (frag, bool) {
	for _, f := range l.frags {
		if f.start > k || k >= f.end {
			continue
		}
		if l.mem {
			return f, true
		}
		// The table holding k: [lo, hi), the last one unbounded.
		lo, hi, last := "", "", true
		for _, c := range l.cuts {
			if c <= k {
				lo = c
			} else {
				hi, last = c, false
				break
			}
		}
		f.start = max(f.start, lo)
		if !last {
			f.end = min(f.end, hi)
		}
		return f, true
	}
	return frag{}, false
}

func drawLevel(t *rapid.T, s shape, li int, allowMem bool) modelLevel {
	kg := s.key()
	l := modelLevel{vals: map[string]string{}}
	l.keys = rapid.SliceOfNDistinct(kg, 0, 14, func(k string) string { return k }).Draw(t, "keys")
	slices.Sort(l.keys)
	for _, k := range l.keys {
		if rapid.IntRange(0, 3).Draw(t, "del") == 0 {
			l.vals[k] = fmt.Sprintf("D%d", li)
		} else {
			l.vals[k] = fmt.Sprintf("L%d.%s", li, k)
		}
	}
	// Fragments between sorted distinct boundaries, some adjacent.
	bounds := rapid.SliceOfNDistinct(kg, 0, 6, func(k string) string { return k }).Draw(t, "bounds")
	slices.Sort(bounds)
	for i := 0; i+1 < len(bounds); i++ {
		if !rapid.Bool().Draw(t, "frag") {
			continue
		}
		var vals []string
		switch rapid.IntRange(0, 3).Draw(t, "fragkind") {
		case 0, 1:
			vals = []string{fmt.Sprintf("RD%d", li)}
		case 2:
			vals = []string{fmt.Sprintf("RK%d", li)}
		default:
			vals = []string{fmt.Sprintf("RK%d", li), fmt.Sprintf("RD%d", li)}
		}
		l.frags = append(l.frags, frag{bounds[i], bounds[i+1], vals})
	}
	l.cuts = rapid.SliceOfNDistinct(kg, 0, 4, func(k string) string { return k }).Draw(t, "cuts")
	slices.Sort(l.cuts)
	l.mem = allowMem && rapid.IntRange(0, 2).Draw(t, "mem") == 0
	return l
}

// view computes the model's visible entries, in key order.
func view(levels []modelLevel) (keys, vals []string) {
	all := map[string]bool{}
	for _, l := range levels {
		for _, k := range l.keys {
			all[k] = true
		}
	}
	for k := range all {
		if v, ok := lookup(levels, k); ok {
			keys = append(keys, k)
			_ = v
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := lookup(levels, k)
		vals = append(vals, v)
	}
	return keys, vals
}

// lookup is the model's Get.
func lookup(levels []modelLevel, k string) (string, bool) {
	for i, l := range levels {
		if v, ok := l.vals[k]; ok {
			if isDel([]byte(v)) {
				return "", false
			}
			for _, nl := range levels[:i] {
				for _, f := range nl.frags {
					if f.start <= k && k < f.end && slices.ContainsFunc(f.vals, func(v string) bool { return isRangeDel([]byte(v)) }) {
						return "", false
					}
				}
			}
			return v, true
		}
	}
	return "", false
}

var caseSeq atomic.Int64

// buildLevel writes a model level's tables (or makes its memLevel) and
// returns the Level and the readers to close.
func buildLevel(t *rapid.T, dir string, s shape, l modelLevel, mapped bool) (merge.Level, []*reader.Reader) {
	var split func([]byte) int
	opts := &builder.Options{BlockSize: 64}
	if s.mvcc {
		sp := format.Suffix(1)
		split = sp.Split
		opts.Splitter = sp
	}
	if l.mem {
		m := &memLevel{split: split}
		for _, k := range l.keys {
			kb := []byte(k)
			if k == "" {
				kb = nil // a memtable may hold the empty key as nil: a key all the same
			}
			m.keys, m.vals = append(m.keys, kb), append(m.vals, []byte(l.vals[k]))
		}
		for _, f := range l.frags {
			sp := reader.Span{Start: []byte(f.start), End: []byte(f.end)}
			for _, v := range f.vals {
				sp.Values = append(sp.Values, []byte(v))
			}
			m.spans = append(m.spans, sp)
		}
		return m, nil
	}
	var rs []*reader.Reader
	lo := ""
	for ti := 0; ti <= len(l.cuts); ti++ {
		last := ti == len(l.cuts) // the last table holds every key from lo on
		hi := ""
		if !last {
			hi = l.cuts[ti]
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.sst", caseSeq.Add(1)))
		b, err := builder.Create(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range l.keys {
			if lo <= k && (last || k < hi) {
				if err := b.Add([]byte(k), []byte(l.vals[k])); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range l.frags {
			st, en := max(f.start, lo), f.end
			if !last {
				en = min(en, hi)
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
		rs = append(rs, openTable(t, path, mapped))
		lo = hi
	}
	return merge.Tables(rs...), rs
}

// openTable opens a table mapped, or over an io.ReaderAt.
func openTable(t interface{ Fatal(...any) }, path string, mapped bool) *reader.Reader {
	if mapped {
		r, err := reader.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// modelIter is the model's iterator over the visible entries within
// bounds.
type modelIter struct {
	s            shape
	all, allV    []string
	keys, vals   []string // within bounds
	pos          int
	ok, inPrefix bool
	prefix       string
}

func (m *modelIter) setBounds(lo, hi *string) {
	m.keys, m.vals = nil, nil
	for i, k := range m.all {
		if (lo == nil || k >= *lo) && (hi == nil || k < *hi) {
			m.keys, m.vals = append(m.keys, k), append(m.vals, m.allV[i])
		}
	}
	m.ok, m.inPrefix = false, false
}

func (m *modelIter) at(i int) bool {
	m.pos = i
	m.ok = i >= 0 && i < len(m.keys) && (!m.inPrefix || m.s.hasPrefix(m.keys[i], m.prefix))
	if !m.ok {
		m.inPrefix = false
	}
	return m.ok
}

func (m *modelIter) ge(k string) int { return sort.SearchStrings(m.keys, k) }

func TestModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		checkModel(rt, dir)
	})
}

func checkModel(t *rapid.T, dir string) {
	s := shape{mvcc: rapid.Bool().Draw(t, "mvcc")}
	mapped := rapid.Bool().Draw(t, "mapped")
	n := rapid.IntRange(1, 5).Draw(t, "levels")
	var mls []modelLevel
	var levels []merge.Level
	for i := range n {
		ml := drawLevel(t, s, i, i == 0)
		l, rs := buildLevel(t, dir, s, ml, mapped)
		for _, r := range rs {
			defer r.Close()
		}
		mls, levels = append(mls, ml), append(levels, l)
	}
	keys, vals := view(mls)
	kg := s.key()

	// Get of every key drawn, every fragment's bounds and table cut (a
	// span ending where the next table's begins), and a few others.
	probe := append([]string{"", "a", "zz"}, keys...)
	for _, l := range mls {
		probe = append(probe, l.keys...)
		probe = append(probe, l.cuts...)
		for _, f := range l.frags {
			probe = append(probe, f.start, f.end)
		}
	}
	for _, k := range probe {
		want, wok := lookup(mls, k)
		got, err := merge.Get(levels, []byte(k), modelOpts)
		if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) || string(got) != want {
			t.Fatalf("Get(%q) = %q, %v; model %q, %v", k, got, err, want, wok)
		}
	}
	// Each level's own lookups, which Get uses: the level's entry
	// (deletions too), and the fragment covering the key.
	for li, l := range levels {
		g, ok := l.(merge.PointGetter)
		if !ok {
			continue
		}
		for _, k := range probe {
			got, err := g.Get([]byte(k))
			want, wok := mls[li].vals[k]
			if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) || string(got) != want {
				t.Fatalf("level %d: Get(%q) = %q, %v; model %q, %v", li, k, got, err, want, wok)
			}
			sp, err := g.SpanAt([]byte(k))
			wf, wok := mls[li].fragAt(k)
			gotVals := make([]string, len(sp.Values))
			for i, v := range sp.Values {
				gotVals[i] = string(v)
			}
			if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) ||
				wok && (string(sp.Start) != wf.start || string(sp.End) != wf.end || !slices.Equal(gotVals, wf.vals)) {
				t.Fatalf("level %d: SpanAt(%q) = [%q, %q) %q, %v; model [%q, %q) %q, %v", li, k, sp.Start, sp.End, gotVals, err, wf.start, wf.end, wf.vals, wok)
			}
		}
	}

	it := merge.NewIterator(levels, modelOpts)
	defer it.Close()
	// Whole scans, both ways.
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	var want []string
	for i := range keys {
		want = append(want, keys[i]+"="+vals[i])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("forward scan\n got %q\nwant %q", got, want)
	}
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("reverse scan\n got %q\nwant %q", got, want)
	}

	// Random moves against the model.
	m := &modelIter{s: s, all: keys, allV: vals}
	m.setBounds(nil, nil)
	it.SetBounds(nil, nil)
	optKey := rapid.Ptr(kg, true)
	for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
		var ok, wok bool
		op := rapid.IntRange(0, 9).Draw(t, "op")
		switch op {
		case 0:
			ok, m.inPrefix = it.First(), false
			wok = m.at(0)
		case 1:
			ok, m.inPrefix = it.Last(), false
			wok = m.at(len(m.keys) - 1)
		case 2, 3:
			ok = it.Next()
			wok = m.ok && m.at(m.pos+1)
		case 4, 5:
			ok = it.Prev()
			wok = m.ok && m.at(m.pos-1)
		case 6:
			k := kg.Draw(t, "k")
			ok, m.inPrefix = it.SeekGE([]byte(k)), false
			wok = m.at(m.ge(k))
		case 7:
			k := kg.Draw(t, "k")
			ok, m.inPrefix = it.SeekLT([]byte(k)), false
			wok = m.at(m.ge(k) - 1)
		case 8:
			// Prefix seeks: a key below the prefix seeks from it; one
			// above the prefix's keys finds SeekPrefixLT their last.
			k := kg.Draw(t, "k")
			p := s.drawPrefix(t, kg, k)
			if rapid.Bool().Draw(t, "ge") {
				ok = it.SeekPrefixGE([]byte(p), []byte(k))
				m.inPrefix, m.prefix = true, p
				wok = m.at(m.ge(max(k, p)))
			} else {
				ok = it.SeekPrefixLT([]byte(p), []byte(k))
				m.inPrefix, m.prefix = true, p
				i := m.ge(k) - 1
				for i >= 0 && m.keys[i] > p && !s.hasPrefix(m.keys[i], p) {
					i--
				}
				wok = m.at(i)
			}
		case 9:
			lo, hi := optKey.Draw(t, "lo"), optKey.Draw(t, "hi")
			it.SetBounds(bptr(lo), bptr(hi))
			m.setBounds(lo, hi)
			continue
		}
		check := func(what string, ok, wok bool) {
			if err := it.Err(); err != nil {
				t.Fatalf("step %d op %d%s: %v", step, op, what, err)
			}
			if ok != wok {
				t.Fatalf("step %d op %d%s: ok %v, model %v (model at %d of %q)", step, op, what, ok, wok, m.pos, m.keys)
			}
			if ok && (string(it.Key()) != m.keys[m.pos] || string(it.Value()) != m.vals[m.pos]) {
				t.Fatalf("step %d op %d%s: at %q=%q, model %q=%q", step, op, what, it.Key(), it.Value(), m.keys[m.pos], m.vals[m.pos])
			}
		}
		check("", ok, wok)
		if op == 8 && ok && rapid.Bool().Draw(t, "walk") {
			// Walk the prefix's keys to their end, one way: prefix
			// iteration mode goes on across tables, and stops at the
			// first key without the prefix, in the next table or the
			// previous one.
			fwd := rapid.Bool().Draw(t, "walkforward")
			for n := 1; ok; n++ {
				if fwd {
					ok, wok = it.Next(), m.at(m.pos+1)
				} else {
					ok, wok = it.Prev(), m.at(m.pos-1)
				}
				check(fmt.Sprintf(", walk %d forward %v", n, fwd), ok, wok)
			}
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

// bptr is a drawn bound: nil for none, and the empty bound "" as an
// empty, non-nil slice (a lower bound admitting every key, an upper
// bound none).
func bptr(s *string) []byte {
	if s == nil {
		return nil
	}
	return append([]byte{}, *s...)
}
