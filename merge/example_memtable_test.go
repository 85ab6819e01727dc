package merge_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// This example reads an engine's memtable and two tables as one view,
// then compacts them. The memtable is a Level of its own: a sorted
// slice of entries and span fragments, with iterators that have
// *reader.Iterator's methods. Values starting with "DEL" are point
// deletions; every span is a range deletion.
func Example_memtable() {
	dir, _ := os.MkdirTemp("", "merge-example")
	defer os.RemoveAll(dir)
	write := func(name string, kvs ...string) *reader.Reader {
		path := filepath.Join(dir, name)
		b, _ := builder.Create(path, nil)
		for i := 0; i+1 < len(kvs); i += 2 {
			b.Add([]byte(kvs[i]), []byte(kvs[i+1]))
		}
		b.Finish()
		r, err := reader.Open(path, nil)
		if err != nil {
			panic(err)
		}
		return r
	}
	older := write("1.sst", "apple", "red", "banana", "yellow", "cherry", "red", "date", "brown")
	defer older.Close()
	newer := write("2.sst", "banana", "green", "elder", "black")
	defer newer.Close()
	mem := &memLevel{
		keys:  [][]byte{[]byte("apple"), []byte("fig")},
		vals:  [][]byte{[]byte("DEL"), []byte("purple")},
		spans: []reader.Span{{Start: []byte("c"), End: []byte("d"), Values: [][]byte{nil}}}, // deletes cherry
	}
	levels := []merge.Level{mem, merge.Tables(newer), merge.Tables(older)}
	opts := &merge.Options{IsDeletion: func(v []byte) bool { return bytes.HasPrefix(v, []byte("DEL")) }}

	it := merge.NewIterator(levels, opts)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
	if _, err := merge.Get(levels, []byte("cherry"), opts); err == reader.ErrNotFound {
		fmt.Println("cherry: deleted")
	}

	tables, err := merge.Compact(levels, &merge.CompactOptions{Options: *opts, Dir: filepath.Join(dir, "out"), Bottom: true})
	if err != nil {
		panic(err)
	}
	for _, t := range tables {
		fmt.Printf("%s: %d entries, %s to %s\n", filepath.Base(t.Path), t.Entries, t.Smallest, t.Largest)
	}
	// Output:
	// banana=green
	// date=brown
	// elder=black
	// fig=purple
	// cherry: deleted
	// 000001.sst: 4 entries, banana to fig
}

// memLevel is a Level over sorted in-memory entries and span fragments,
// as an engine's memtable would be (the tests mix it with table levels
// too). split gives a key's prefix length (nil: whole keys, prefixes by
// bytes.HasPrefix).
type memLevel struct {
	keys, vals [][]byte
	spans      []reader.Span
	split      func([]byte) int
}

func (m *memLevel) NewIter(o *reader.IterOptions) merge.LevelIterator {
	it := &memIter{m: m, i: -1}
	if o != nil {
		it.SetBounds(o.LowerBound, o.UpperBound)
	}
	return it
}

func (m *memLevel) NewSpanIter() merge.SpanIterator {
	if len(m.spans) == 0 {
		return nil
	}
	return &memSpanIter{m: m, i: -1}
}

// memIter walks a memLevel's entries; i is the position, valid when
// 0 <= i < len and ok.
type memIter struct {
	m            *memLevel
	i            int
	ok           bool
	lower, upper []byte
	inPrefix     bool
	prefix       []byte
}

func (it *memIter) in(i int) bool {
	if i < 0 || i >= len(it.m.keys) {
		return false
	}
	k := it.m.keys[i]
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 || it.upper != nil && bytes.Compare(k, it.upper) >= 0 {
		return false
	}
	return !it.inPrefix || it.hasPrefix(k)
}

func (it *memIter) hasPrefix(k []byte) bool {
	if !bytes.HasPrefix(k, it.prefix) {
		return false
	}
	return it.m.split == nil || it.m.split(k) == len(it.prefix)
}

func (it *memIter) at(i int) bool {
	it.i, it.ok = i, it.in(i)
	if !it.ok {
		it.inPrefix = false
	}
	return it.ok
}

func (it *memIter) ge(k []byte) int {
	return sort.Search(len(it.m.keys), func(i int) bool { return bytes.Compare(it.m.keys[i], k) >= 0 })
}

func (it *memIter) First() bool {
	it.inPrefix = false
	if it.lower != nil {
		return it.at(it.ge(it.lower))
	}
	return it.at(0)
}

func (it *memIter) Last() bool {
	it.inPrefix = false
	if it.upper != nil {
		return it.at(it.ge(it.upper) - 1)
	}
	return it.at(len(it.m.keys) - 1)
}

func (it *memIter) SeekGE(k []byte) bool {
	it.inPrefix = false
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
		k = it.lower
	}
	return it.at(it.ge(k))
}

func (it *memIter) SeekLT(k []byte) bool {
	it.inPrefix = false
	if it.upper != nil && bytes.Compare(k, it.upper) > 0 {
		k = it.upper
	}
	return it.at(it.ge(k) - 1)
}

func (it *memIter) SeekPrefixGE(p, k []byte) bool {
	if bytes.Compare(k, p) < 0 {
		k = p
	}
	if !it.SeekGE(k) {
		return false
	}
	it.prefix, it.inPrefix = append(it.prefix[:0], p...), true
	return it.at(it.i)
}

func (it *memIter) SeekPrefixLT(p, k []byte) bool {
	it.inPrefix = false
	if it.upper != nil && bytes.Compare(k, it.upper) > 0 {
		k = it.upper
	}
	it.prefix, it.inPrefix = append(it.prefix[:0], p...), true
	for i := it.ge(k) - 1; i >= 0; i-- {
		if it.in(i) {
			return it.at(i)
		}
		if bytes.Compare(it.m.keys[i], p) < 0 {
			break
		}
	}
	it.inPrefix, it.ok = false, false
	return false
}

func (it *memIter) Next() bool {
	if !it.ok {
		return false
	}
	return it.at(it.i + 1)
}

func (it *memIter) Prev() bool {
	if !it.ok {
		return false
	}
	return it.at(it.i - 1)
}

func (it *memIter) Key() []byte {
	if !it.ok {
		return nil
	}
	return it.m.keys[it.i]
}

func (it *memIter) Value() []byte {
	if !it.ok {
		return nil
	}
	return it.m.vals[it.i]
}

func (it *memIter) SetBounds(lower, upper []byte) {
	it.lower, it.upper = bytes.Clone(lower), bytes.Clone(upper)
	if lower != nil && it.lower == nil {
		it.lower = []byte{}
	}
	if upper != nil && it.upper == nil {
		it.upper = []byte{}
	}
	it.ok, it.inPrefix = false, false
}

func (it *memIter) Err() error   { return nil }
func (it *memIter) Close() error { return nil }

// memSpanIter walks a memLevel's fragments: i from -1 (before the
// first) to len (past the last).
type memSpanIter struct {
	m *memLevel
	i int
}

func (s *memSpanIter) valid() bool { return s.i >= 0 && s.i < len(s.m.spans) }
func (s *memSpanIter) First() bool { s.i = 0; return s.valid() }
func (s *memSpanIter) Last() bool  { s.i = len(s.m.spans) - 1; return s.valid() }
func (s *memSpanIter) Next() bool {
	if s.i < len(s.m.spans) {
		s.i++
	}
	return s.valid()
}
func (s *memSpanIter) Prev() bool {
	if s.i >= 0 {
		s.i--
	}
	return s.valid()
}
func (s *memSpanIter) SeekGE(k []byte) bool {
	s.i = sort.Search(len(s.m.spans), func(i int) bool { return bytes.Compare(s.m.spans[i].End, k) > 0 })
	return s.valid()
}
func (s *memSpanIter) SeekLT(k []byte) bool {
	s.i = sort.Search(len(s.m.spans), func(i int) bool { return bytes.Compare(s.m.spans[i].Start, k) >= 0 }) - 1
	return s.valid()
}
func (s *memSpanIter) Span() reader.Span {
	if !s.valid() {
		return reader.Span{}
	}
	return s.m.spans[s.i]
}
func (s *memSpanIter) Err() error   { return nil }
func (s *memSpanIter) Close() error { return nil }
