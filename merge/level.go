package merge

import "github.com/sstkit/sstable/reader"

// Level is one level of the stack an Iterator, Get and Compact read: a
// sorted source of point entries and of span fragments, whose keys do
// not repeat within the level. Tables makes one from non-overlapping
// tables, and Memtable one over an engine's sorted in-memory entries (a
// cursor over them) and spans; any other source implements these two
// methods.
//
// A Level is shared like a *reader.Reader: many iterators, Gets and a
// Compact may use it at once, from different goroutines, so NewIter and
// NewSpanIter must be safe for concurrent use (the iterators they return
// need not be).
type Level interface {
	// NewIter returns an unpositioned iterator over the level's point
	// entries, deletions included, in bytes.Compare order, within o's
	// bounds (nil: every entry), with *reader.Iterator's semantics (see
	// LevelIterator). It reports a failure to open through the
	// iterator's Err.
	NewIter(o *reader.IterOptions) LevelIterator
	// NewSpanIter returns an unpositioned iterator over the level's span
	// fragments, in key order and not overlapping, with
	// *reader.SpanIterator's semantics; nil when the level has no spans.
	NewSpanIter() SpanIterator
}

// LevelIterator is what an Iterator asks of a level's point iterator:
// the methods of *reader.Iterator, with the same meaning, lifetimes and
// bounds semantics. In particular SeekPrefixGE and SeekPrefixLT start
// prefix iteration mode, in which Next and Prev return false past the
// prefix's keys (a source without a splitter compares prefixes with
// bytes.HasPrefix), and every other positioning method or SetBounds ends
// it. A move that fails returns false and sets Err.
type LevelIterator interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	SeekPrefixGE(prefix, key []byte) bool
	SeekPrefixLT(prefix, key []byte) bool
	Key() []byte
	Value() []byte
	SetBounds(lower, upper []byte)
	Err() error
	Close() error
}

// SpanIterator is what an Iterator asks of a level's span iterator: the
// methods of *reader.SpanIterator, with the same meaning. SeekGE moves
// to the first fragment whose End is above key, SeekLT to the last whose
// Start is below key; Span returns the current fragment, valid until
// Close. Unlike a point iterator's, its moves go on from the ends: Next
// from before the first fragment (an unpositioned iterator, or SeekLT or
// Prev having run off the start) moves to the first, and Prev from past
// the last (SeekGE or Next having run off the end) to the last; the
// range-deletion check relies on this.
type SpanIterator interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Span() reader.Span
	Err() error
	Close() error
}

// PointGetter is an optional interface of a Level that looks one key up
// faster than a seek of its iterators; Get uses it when present. Tables
// implements it with Reader.Get (which consults each table's filter) and
// Reader.SpanAt.
type PointGetter interface {
	// Get returns the level's entry for key (a deletion's value too),
	// as a slice the caller owns, or reader.ErrNotFound.
	Get(key []byte) ([]byte, error)
	// SpanAt returns the level's fragment covering key, or
	// reader.ErrNotFound when none does.
	SpanAt(key []byte) (reader.Span, error)
}
