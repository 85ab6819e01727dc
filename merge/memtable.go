package merge

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/spanfrag"
	"github.com/sstkit/sstable/reader"
)

// Cursor is a position in an engine's sorted in-memory entries (a
// skiplist, a B-tree, a sorted slice): the few moves Memtable makes a
// LevelIterator of. Entries are in bytes.Compare order, one per key (the
// key's newest write, deletions included), as in a Level.
//
// A move returns whether the cursor is on an entry. After a move that
// returns false the cursor's position does not matter: Memtable then
// calls only SeekGE or Last. Key and Value are asked only while the
// cursor is on an entry, and must stay valid until its next move.
type Cursor interface {
	SeekGE(key []byte) bool // to the first entry whose key is >= key
	Last() bool             // to the last entry
	Next() bool             // one entry on
	Prev() bool             // one entry back
	Key() []byte
	Value() []byte
}

// Memtable is a Level over an engine's in-memory writes: its sorted
// entries, walked by cursors, and its spans, in any order and
// overlapping. It gives the cursors *reader.Iterator's semantics (bounds,
// SetBounds, both prefix seeks and prefix iteration mode) and cuts the
// spans into fragments, so that a memtable takes a few lines:
//
//	mem := &merge.Memtable{
//		NewCursor: func() merge.Cursor { return merge.SliceCursor(keys, values) },
//		Spans:     func() []reader.Span { return rangeDels },
//	}
//	levels := []merge.Level{mem, merge.Tables(l0), merge.Tables(l1...)}
//
// # Range deletions inside the memtable
//
// As in every level, a span hides the keys of the older levels, and none
// of its own level's: the view has no order among one level's writes.
// For a memtable, Put k then DeleteRange over k leaves k visible, unless
// the engine removes the memtable's entries in the range when it records
// the span (and a Put after the DeleteRange then shows, as a newer write
// should). An engine that keeps every version with a sequence number
// (as LevelDB and RocksDB do) resolves its memtable to each key's newest
// version as of the read, range deletions applied, before a Cursor
// shows it.
//
// A Memtable is safe for concurrent use when NewCursor and Spans are:
// each iterator has a cursor of its own.
type Memtable struct {
	// NewCursor returns a new cursor over the entries. It is called for
	// each iterator (NewIterator, Compact, and Get, which seeks one).
	NewCursor func() Cursor
	// Spans returns the spans: range deletions (with
	// Options.IsRangeDeletion nil, every span) and range keys, each
	// [Start, End) with its Values, in any order and overlapping or not.
	// A span with no Values counts as one nil value, so that
	// reader.Span{Start: a, End: b} is a range deletion. nil (the field
	// or the result): no spans. It is called for each span iterator,
	// which cuts the spans into fragments then, as a bulk build does
	// (each fragment lists the values over it in the order given), in
	// O(n log n) for n spans: a memtable holds few. A span whose Start is
	// not below its End makes the span iterator fail with an error naming
	// it. The spans' bytes must stay unchanged while an iterator is open.
	Spans func() []reader.Span
	// Splitter, when set, is the splitter of the keys' prefixes for the
	// prefix seeks, as the tables' format.Splitter is: a key has the
	// prefix p when Split gives it len(p) and it starts with p. nil:
	// bytes.HasPrefix.
	Splitter format.Splitter
}

// NewIter returns an iterator over the entries, within o's bounds; see
// Level.
func (m *Memtable) NewIter(o *reader.IterOptions) LevelIterator {
	it := &memIter{c: m.NewCursor(), split: m.Splitter}
	if o != nil {
		it.SetBounds(o.LowerBound, o.UpperBound)
	}
	return it
}

// NewSpanIter returns an iterator over the fragments of the spans, nil
// when there are none; see Level.
func (m *Memtable) NewSpanIter() SpanIterator {
	if m.Spans == nil {
		return nil
	}
	spans := m.Spans()
	if len(spans) == 0 {
		return nil
	}
	s := &fragIter{i: -1}
	for i, sp := range spans {
		if bytes.Compare(sp.Start, sp.End) >= 0 {
			s.err = fmt.Errorf("merge: Memtable: span %d of %d: start %s is not below its end %s", i, len(spans), quote(sp.Start), quote(sp.End))
			return s
		}
	}
	s.frags = spanfrag.Cut(spans,
		func(sp *reader.Span) ([]byte, []byte) { return sp.Start, sp.End },
		func(dst [][]byte, sp *reader.Span) [][]byte {
			if len(sp.Values) == 0 {
				return append(dst, nil)
			}
			return append(dst, sp.Values...)
		})
	return s
}

// leastKey is the empty key, non-nil: First seeks a cursor from it.
var leastKey = []byte{}

// memIter is a Memtable's LevelIterator: a cursor, with the bounds and
// prefix iteration mode of *reader.Iterator.
type memIter struct {
	c     Cursor
	split format.Splitter
	ok    bool // the cursor is on an entry within the bounds (and prefix)

	lower, upper       []byte // nil: unbounded; else copies in the bufs
	lowerBuf, upperBuf []byte
	inPrefix           bool
	prefix             []byte
	end                []byte // scratch: prefixEnd
}

// settle checks the entry a move reached against the bounds (the lower
// one when moving backward, the upper one forward) and, in prefix
// iteration mode, the prefix.
func (it *memIter) settle(ok, backward bool) bool {
	if ok {
		k := it.c.Key()
		switch {
		case backward && it.lower != nil && bytes.Compare(k, it.lower) < 0,
			!backward && it.upper != nil && bytes.Compare(k, it.upper) >= 0,
			it.inPrefix && !it.hasPrefix(k):
			ok = false
		}
	}
	it.ok = ok
	if !ok {
		it.inPrefix = false
	}
	return ok
}

// hasPrefix reports whether k's prefix is it.prefix, as the reader's
// check does.
func (it *memIter) hasPrefix(k []byte) bool {
	return bytes.HasPrefix(k, it.prefix) && (it.split == nil || it.splitLen(k) == len(it.prefix))
}

// splitLen is k's prefix length under the splitter, bounded to k.
func (it *memIter) splitLen(k []byte) int {
	if n := it.split.Split(k); n >= 0 && n <= len(k) {
		return n
	}
	return len(k)
}

// seekGE moves the cursor to the first entry >= key, within the lower
// bound; the caller settles.
func (it *memIter) seekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.c.SeekGE(key)
}

// seekLT moves the cursor to the last entry < key, within the upper
// bound; the caller settles.
func (it *memIter) seekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	if it.c.SeekGE(key) {
		return it.c.Prev()
	}
	return it.c.Last()
}

func (it *memIter) First() bool {
	it.inPrefix = false
	return it.settle(it.seekGE(leastKey), false)
}

func (it *memIter) Last() bool {
	it.inPrefix = false
	if it.upper != nil {
		return it.settle(it.seekLT(it.upper), true)
	}
	return it.settle(it.c.Last(), true)
}

func (it *memIter) SeekGE(key []byte) bool {
	it.inPrefix = false
	return it.settle(it.seekGE(key), false)
}

func (it *memIter) SeekLT(key []byte) bool {
	it.inPrefix = false
	return it.settle(it.seekLT(key), true)
}

func (it *memIter) SeekPrefixGE(prefix, key []byte) bool {
	it.inPrefix = false
	if bytes.Compare(key, prefix) < 0 {
		key = prefix // every key with the prefix is >= it
	}
	ok := it.seekGE(key)
	// Under a splitter a key may be its own prefix (shorter than a
	// suffix), sorting above key with a prefix below ours: step over.
	for ok && it.split != nil {
		k := it.c.Key()
		if bytes.Compare(k[:it.splitLen(k)], prefix) >= 0 {
			break
		}
		ok = it.c.Next()
	}
	it.prefix, it.inPrefix = append(it.prefix[:0], prefix...), true
	return it.settle(ok, false)
}

func (it *memIter) SeekPrefixLT(prefix, key []byte) bool {
	it.inPrefix = false
	if bytes.Compare(key, prefix) <= 0 {
		it.ok = false // every key with the prefix is >= prefix
		return false
	}
	// A key above the prefix's keys without the prefix: seek from their
	// end, so that the step back lands on the prefix's last key.
	if !bytes.HasPrefix(key, prefix) {
		if end := prefixEnd(it.end[:0], prefix); end != nil {
			it.end, key = end, end
		}
	}
	ok := it.seekLT(key)
	for ok && it.split != nil {
		k := it.c.Key()
		if bytes.Compare(k[:it.splitLen(k)], prefix) <= 0 {
			break
		}
		ok = it.c.Prev()
	}
	it.prefix, it.inPrefix = append(it.prefix[:0], prefix...), true
	return it.settle(ok, true)
}

func (it *memIter) Next() bool {
	if !it.ok {
		return false
	}
	return it.settle(it.c.Next(), false)
}

func (it *memIter) Prev() bool {
	if !it.ok {
		return false
	}
	return it.settle(it.c.Prev(), true)
}

func (it *memIter) Key() []byte {
	if !it.ok {
		return nil
	}
	return it.c.Key()
}

func (it *memIter) Value() []byte {
	if !it.ok {
		return nil
	}
	return it.c.Value()
}

func (it *memIter) SetBounds(lower, upper []byte) {
	it.lower = setBound(&it.lowerBuf, lower)
	it.upper = setBound(&it.upperBuf, upper)
	it.ok, it.inPrefix = false, false
}

func (it *memIter) Err() error   { return nil }
func (it *memIter) Close() error { it.ok = false; return nil }

// SliceCursor returns a Cursor over keys and values, parallel slices
// sorted by key in bytes.Compare order, each key once: a memtable kept
// as a sorted slice, or a batch. Neither slice may change while the
// cursor is in use.
func SliceCursor(keys, values [][]byte) Cursor {
	return &sliceCursor{keys: keys, values: values, i: -1}
}

type sliceCursor struct {
	keys, values [][]byte
	i            int
}

func (c *sliceCursor) at(i int) bool {
	c.i = i
	return i >= 0 && i < len(c.keys)
}

func (c *sliceCursor) SeekGE(key []byte) bool {
	return c.at(sort.Search(len(c.keys), func(i int) bool { return bytes.Compare(c.keys[i], key) >= 0 }))
}
func (c *sliceCursor) Last() bool    { return c.at(len(c.keys) - 1) }
func (c *sliceCursor) Next() bool    { return c.at(c.i + 1) }
func (c *sliceCursor) Prev() bool    { return c.at(c.i - 1) }
func (c *sliceCursor) Key() []byte   { return c.keys[c.i] }
func (c *sliceCursor) Value() []byte { return c.values[c.i] }

// fragIter is a SpanIterator over fragments in memory: i is -1 before
// the first and len(frags) past the last, where Next and Prev step from.
type fragIter struct {
	frags []spanfrag.Fragment
	i     int
	err   error
}

func (s *fragIter) at(i int) bool {
	s.i = max(-1, min(i, len(s.frags)))
	return s.err == nil && s.i >= 0 && s.i < len(s.frags)
}

func (s *fragIter) First() bool { return s.at(0) }
func (s *fragIter) Last() bool  { return s.at(len(s.frags) - 1) }
func (s *fragIter) Next() bool  { return s.at(s.i + 1) }
func (s *fragIter) Prev() bool  { return s.at(s.i - 1) }

func (s *fragIter) SeekGE(key []byte) bool {
	return s.at(sort.Search(len(s.frags), func(i int) bool { return bytes.Compare(s.frags[i].End, key) > 0 }))
}

func (s *fragIter) SeekLT(key []byte) bool {
	return s.at(sort.Search(len(s.frags), func(i int) bool { return bytes.Compare(s.frags[i].Start, key) >= 0 }) - 1)
}

func (s *fragIter) Span() reader.Span {
	if s.err != nil || s.i < 0 || s.i >= len(s.frags) {
		return reader.Span{}
	}
	f := &s.frags[s.i]
	return reader.Span{Start: f.Start, End: f.End, Values: f.Values}
}

func (s *fragIter) Err() error   { return s.err }
func (s *fragIter) Close() error { return s.err }
