// Package rangedel_test shows range deletions with this module: two
// tables, an older one of point keys and a newer one holding a range
// deletion (Builder.AddSpan), read through a merged view that hides the
// deleted keys, as an LSM engine's read path does.
//
// Every table has a sequence number, newer tables higher. A span's value
// is the 8-byte big-endian sequence number of the deletion. A point key
// of a table with sequence number s is hidden when a span of a table with
// a higher sequence number covers it with a deletion sequence number
// above s: Reader.SpanAt answers that for one key with one binary search,
// and a scan walks a SpanIterator beside the point iterators, moving it
// with SeekGE only when the scan passes the current fragment's end.
//
// TestMergedView checks Get and a full scan of the merged view against a
// map with rapid: random keys in the older table, random overlapping
// range deletions and new puts in the newer one.
package rangedel_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// table is one table of the view with its sequence number.
type table struct {
	r   *reader.Reader
	seq uint64
}

// view is tables read together, newest first.
type view []table

// deleted reports whether the point key of a table with sequence number
// seq is hidden by a range deletion of a newer table.
func (v view) deleted(key []byte, seq uint64) (bool, error) {
	for _, t := range v {
		if t.seq <= seq {
			continue
		}
		sp, err := t.r.SpanAt(key)
		if errors.Is(err, reader.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		for _, val := range sp.Values {
			if binary.BigEndian.Uint64(val) > seq {
				return true, nil
			}
		}
	}
	return false, nil
}

// Get returns the newest visible value of key.
func (v view) Get(key []byte) ([]byte, bool, error) {
	for _, t := range v {
		val, err := t.r.Get(key)
		if errors.Is(err, reader.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		del, err := v.deleted(key, t.seq)
		if err != nil || del {
			return nil, false, err
		}
		return val, true, nil
	}
	return nil, false, nil
}

// Scan calls fn with every visible key and value, in key order: a merge
// of the tables' iterators, the newest table's entry winning, and each
// table's span iterator stepped along to test deletions.
func (v view) Scan(fn func(k, val []byte)) error {
	its := make([]*reader.Iterator, len(v))
	spans := make([]*reader.SpanIterator, len(v))
	valid := make([]bool, len(v))
	for i, t := range v {
		its[i], spans[i] = t.r.NewIterator(), t.r.NewSpanIterator()
		defer its[i].Close()
		defer spans[i].Close()
		valid[i] = its[i].First()
		spans[i].First()
	}
	// covers reports whether table j's span fragments delete key at seq,
	// moving its span iterator forward only.
	covers := func(j int, key []byte, seq uint64) bool {
		s := spans[j]
		sp := s.Span()
		if sp.End != nil && bytes.Compare(key, sp.End) >= 0 {
			if !s.SeekGE(key) {
				return false
			}
			sp = s.Span()
		}
		if sp.Start == nil || bytes.Compare(key, sp.Start) < 0 {
			return false
		}
		for _, val := range sp.Values {
			if binary.BigEndian.Uint64(val) > seq {
				return true
			}
		}
		return false
	}
	for {
		cur := -1
		for i := range its {
			if valid[i] && (cur < 0 || bytes.Compare(its[i].Key(), its[cur].Key()) < 0) {
				cur = i // tables are newest first: ties go to the newest
			}
		}
		if cur < 0 {
			break
		}
		key := slices.Clone(its[cur].Key())
		hidden := false
		for j := range v {
			if v[j].seq > v[cur].seq && covers(j, key, v[cur].seq) {
				hidden = true
			}
		}
		if !hidden {
			fn(key, its[cur].Value())
		}
		for i := range its {
			for valid[i] && bytes.Equal(its[i].Key(), key) {
				valid[i] = its[i].Next()
			}
		}
	}
	for i := range v {
		if err := its[i].Close(); err != nil {
			return err
		}
		if err := spans[i].Close(); err != nil {
			return err
		}
	}
	return nil
}

type kv struct{ k, v string }
type del struct{ start, end string }

// build writes a table of puts (sorted) and range deletions (sorted by
// start), each deletion with sequence number seq.
func build(t *rapid.T, path string, puts []kv, dels []del, seq uint64) *reader.Reader {
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range puts {
		if err := b.Add([]byte(p.k), []byte(p.v)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dels {
		if err := b.AddSpan([]byte(d.start), []byte(d.end), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
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
	return r
}

func TestMergedView(t *testing.T) {
	dir := t.TempDir()
	keyGen := rapid.StringMatching(`[a-e]{1,3}`)
	rapid.Check(t, func(rt *rapid.T) {
		model := map[string]string{}
		older := rapid.SliceOfDistinct(keyGen, func(s string) string { return s }).Draw(rt, "older")
		slices.Sort(older)
		var oldPuts []kv
		for i, k := range older {
			oldPuts = append(oldPuts, kv{k, fmt.Sprint("old", i)})
			model[k] = fmt.Sprint("old", i)
		}
		var dels []del
		for range rapid.IntRange(0, 4).Draw(rt, "dels") {
			a, b := keyGen.Draw(rt, "a"), keyGen.Draw(rt, "b")
			if a == b {
				b += "z"
			}
			if a > b {
				a, b = b, a
			}
			dels = append(dels, del{a, b})
		}
		slices.SortFunc(dels, func(x, y del) int { return bytes.Compare([]byte(x.start), []byte(y.start)) })
		for k := range model {
			for _, d := range dels {
				if d.start <= k && k < d.end {
					delete(model, k) // the newer table's deletions hide older keys
				}
			}
		}
		newer := rapid.SliceOfDistinct(keyGen, func(s string) string { return s }).Draw(rt, "newer")
		slices.Sort(newer)
		var newPuts []kv
		for i, k := range newer {
			newPuts = append(newPuts, kv{k, fmt.Sprint("new", i)})
			model[k] = fmt.Sprint("new", i) // a table's deletions hide only older keys
		}
		r1 := build(rt, filepath.Join(dir, "1.sst"), oldPuts, nil, 1)
		defer r1.Close()
		r2 := build(rt, filepath.Join(dir, "2.sst"), newPuts, dels, 2)
		defer r2.Close()
		v := view{{r2, 2}, {r1, 1}}

		for _, k := range append(older, append(newer, "a", "zz")...) {
			got, ok, err := v.Get([]byte(k))
			if err != nil {
				rt.Fatal(err)
			}
			want, wok := model[k]
			if ok != wok || string(got) != want {
				rt.Fatalf("Get(%q) = %q, %v; model %q, %v", k, got, ok, want, wok)
			}
		}
		var scanned []kv
		if err := v.Scan(func(k, val []byte) { scanned = append(scanned, kv{string(k), string(val)}) }); err != nil {
			rt.Fatal(err)
		}
		var want []kv
		for k, val := range model {
			want = append(want, kv{k, val})
		}
		slices.SortFunc(want, func(x, y kv) int { return bytes.Compare([]byte(x.k), []byte(y.k)) })
		if !slices.Equal(scanned, want) {
			rt.Fatalf("scan %v, model %v", scanned, want)
		}
	})
	os.RemoveAll(dir)
}
