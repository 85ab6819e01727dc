package merge

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/reader"
)

// ErrTableOrder is wrapped by the error of a level made by Tables whose
// tables are out of key order or overlap (points or spans): iterators
// over it return the error from Err, and Get and Compact return it.
var ErrTableOrder = errors.New("merge: tables of a level overlap or are out of key order")

// pointTable is a table with point entries: its reader and key bounds.
type pointTable struct {
	r                 *reader.Reader
	smallest, largest []byte // first and last keys, inclusive
}

// spanTable is a table with span fragments: its reader and their bounds.
type spanTable struct {
	r          *reader.Reader
	start, end []byte // the first fragment's start, the last's end (exclusive)
}

// tablesLevel is the Level Tables returns.
type tablesLevel struct {
	points []pointTable // tables with entries, in key order
	spans  []spanTable  // tables with spans, in key order
	err    error        // the tables overlap: every use fails with it
}

// Tables returns a Level over tables whose keys and spans do not overlap,
// given in key order (each table's keys and spans below the next table's
// smallest key and span start; a span's end, exclusive, may equal the
// next table's first key): the output of a bulk build or a Compact, one
// level of an LSM tree. Empty tables may stand anywhere and are skipped.
// A nil reader is a mistake of the caller's, not of the tables' order:
// its error names the argument's place in rs (0 for the first) and does
// not wrap ErrTableOrder.
//
// A table is opened lazily: an iterator makes a *reader.Iterator (and a
// *reader.SpanIterator) on a table only when a move reaches it, keeps it
// until the iterator's Close, and never touches the tables its moves do
// not reach. Get reads only the table whose key range holds the key,
// through Reader.Get (its filter first) and Reader.SpanAt.
//
// Tables reads each table's bounds from its properties once, here. Tables
// out of order or overlapping make every iterator's Err, and Get and
// Compact, return an error wrapping ErrTableOrder that names the two
// tables' places in rs and their keys. The caller keeps owning the
// readers, and closes them after every iterator over the level is
// closed.
func Tables(rs ...*reader.Reader) Level {
	l := &tablesLevel{}
	var prevHi []byte // the highest position of the previous non-empty table
	var prevExcl bool // prevHi is a span end (exclusive)
	prevIndex := -1   // its index in rs
	for i, r := range rs {
		if r == nil {
			l.err = fmt.Errorf("merge: Tables: argument %d of %d is a nil *reader.Reader", i, len(rs))
			return l
		}
		p := r.Properties()
		hasPoints, hasSpans := p.NumEntries > 0, p.NumSpanFragments > 0
		if !hasPoints && !hasSpans {
			continue
		}
		lo := p.SmallestKey
		if !hasPoints || hasSpans && bytes.Compare(p.SmallestSpanKey, lo) < 0 {
			lo = p.SmallestSpanKey
		}
		if prevIndex >= 0 {
			c := bytes.Compare(prevHi, lo)
			if c > 0 || c == 0 && !prevExcl {
				l.err = fmt.Errorf("%w: table %d reaches %s, table %d starts at %s", ErrTableOrder, prevIndex, quote(prevHi), i, quote(lo))
				return l
			}
		}
		if hasPoints {
			l.points = append(l.points, pointTable{r: r, smallest: p.SmallestKey, largest: p.LargestKey})
			prevHi, prevExcl = p.LargestKey, false
		}
		if hasSpans {
			l.spans = append(l.spans, spanTable{r: r, start: p.SmallestSpanKey, end: p.LargestSpanKey})
			if !hasPoints || bytes.Compare(p.LargestSpanKey, p.LargestKey) > 0 {
				prevHi, prevExcl = p.LargestSpanKey, true
			}
		}
		prevIndex = i
	}
	return l
}

// quote renders a key for messages: Go-quoted, cut after 100 bytes.
func quote(k []byte) string {
	const max = 100
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// NewIter returns an iterator over the tables' entries; see Level.
func (l *tablesLevel) NewIter(o *reader.IterOptions) LevelIterator { return l.newIter(o) }

func (l *tablesLevel) newIter(o *reader.IterOptions) *tablesIter {
	t := &tablesIter{l: l, cur: -1, err: l.err, its: make([]*reader.Iterator, len(l.points)), gens: make([]uint32, len(l.points))}
	if o != nil {
		t.SetBounds(o.LowerBound, o.UpperBound)
	}
	return t
}

// NewSpanIter returns an iterator over the tables' span fragments, nil
// when none has spans; see Level.
func (l *tablesLevel) NewSpanIter() SpanIterator {
	if len(l.spans) == 0 && l.err == nil {
		return nil
	}
	return l.newSpanIter()
}

func (l *tablesLevel) newSpanIter() *tablesSpanIter {
	return &tablesSpanIter{l: l, pos: -1, err: l.err, its: make([]*reader.SpanIterator, len(l.spans))}
}

// Get looks key up in the one table whose key range holds it.
func (l *tablesLevel) Get(key []byte) ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	i := sort.Search(len(l.points), func(i int) bool { return bytes.Compare(l.points[i].largest, key) >= 0 })
	if i == len(l.points) || bytes.Compare(key, l.points[i].smallest) < 0 {
		return nil, reader.ErrNotFound
	}
	return l.points[i].r.Get(key)
}

// SpanAt returns the fragment covering key, from the one table whose
// spans' range holds it.
func (l *tablesLevel) SpanAt(key []byte) (reader.Span, error) {
	if l.err != nil {
		return reader.Span{}, l.err
	}
	i := sort.Search(len(l.spans), func(i int) bool { return bytes.Compare(l.spans[i].end, key) > 0 })
	if i == len(l.spans) || bytes.Compare(key, l.spans[i].start) < 0 {
		return reader.Span{}, reader.ErrNotFound
	}
	return l.spans[i].r.SpanAt(key)
}
