package builder

import (
	"bytes"
	"fmt"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// spanState is what a builder holds for spans until Finish: the span
// block's fragments emitted so far (encoded, about the size they take in
// the table) and the spans still open, those covering keys at or after
// the start of the last span added (each with its end and value).
type spanState struct {
	w        codec.SpanBlockWriter
	pending  []pendingSpan // open spans, in the order added; all start at cur
	cur      []byte        // start of the region not yet emitted
	lastFrag []byte        // end of the last fragment emitted
	vals     [][]byte      // scratch: one fragment's values
	n        uint64        // spans added
	smallest []byte        // first fragment's start
}

type pendingSpan struct{ end, value []byte }

// AddSpan adds the span [start, end) with value, for range deletions or
// range keys: the table stores spans apart from the point entries of Add,
// in a span block, and readers return them through Reader.SpanAt and
// Reader.NewSpanIterator. start must be below end in bytes.Compare order,
// and spans must come in non-decreasing start order among themselves
// (independently of the keys given to Add; spans may overlap); otherwise
// AddSpan returns an error wrapping ErrKeyOrder and the builder is
// unchanged. Empty values are allowed. AddSpan copies what it needs.
//
// The builder fragments the spans as Pebble's keyspan.Fragmenter does:
// the span block holds fragments that do not overlap, are sorted, cover
// exactly the union of the spans, and each list the values of every span
// covering them, in the order the spans were added. A table with at least
// one span is format version 5 (format.Version5): version 4 with a span
// block. A builder asked for format version 1, 2 or 3 (Options.FormatVersion
// or HashIndex) returns an error.
//
// Memory: until Finish the builder holds the encoded span block (every
// fragment emitted so far, with its keys and values: about the block's
// final size) plus the spans still open, those that reach past the last
// span's start: fragments ending before a new span's start are emitted
// as it is added.
func (b *Builder) AddSpan(start, end, value []byte) error {
	if b.done {
		return b.named(ErrClosed)
	}
	if b.err != nil {
		return b.named(b.err)
	}
	if !b.v4 {
		return b.named(fmt.Errorf("sstable: builder: AddSpan on a format version %d builder: spans need format version 5, written by the default options (FormatVersion 0 and no HashIndex)", b.props.FormatVersion))
	}
	if bytes.Compare(start, end) >= 0 {
		return b.named(fmt.Errorf("%w: span start %s is not below its end %s", ErrKeyOrder, quote(start), quote(end)))
	}
	s := &b.spans
	if s.n > 0 && bytes.Compare(start, s.cur) < 0 {
		return b.named(fmt.Errorf("%w: span start %s after span start %s", ErrKeyOrder, quote(start), quote(s.cur)))
	}
	if s.n == 0 || !bytes.Equal(start, s.cur) {
		s.emit(start)
		s.cur = append(s.cur[:0], start...)
	}
	s.pending = append(s.pending, pendingSpan{end: bytes.Clone(end), value: bytes.Clone(value)})
	s.n++
	return nil
}

// SpanCount returns the number of spans added so far.
func (b *Builder) SpanCount() uint64 { return b.spans.n }

// emit writes the fragments covering [cur, to) (to nil: every fragment
// left), and drops the spans ending at or before to. Spans left open
// then start at to.
func (s *spanState) emit(to []byte) {
	for len(s.pending) > 0 {
		// The nearest end among the open spans bounds the next fragment.
		next := s.pending[0].end
		for _, p := range s.pending[1:] {
			if bytes.Compare(p.end, next) < 0 {
				next = p.end
			}
		}
		if to != nil && bytes.Compare(to, next) < 0 {
			next = to
		}
		s.vals = s.vals[:0]
		for _, p := range s.pending {
			s.vals = append(s.vals, p.value)
		}
		if s.w.Len() == 0 {
			s.smallest = append([]byte{}, s.cur...)
		}
		s.w.Add(s.cur, next, s.vals)
		s.lastFrag = append(s.lastFrag[:0], next...)
		kept := s.pending[:0]
		for _, p := range s.pending {
			if !bytes.Equal(p.end, next) {
				kept = append(kept, p)
			}
		}
		clear(s.pending[len(kept):])
		s.pending = kept
		s.cur = append(s.cur[:0], next...)
		if to != nil && bytes.Equal(next, to) {
			return
		}
	}
}

// finishSpans emits the last fragments and returns the span block's
// contents, nil for a table without spans, setting the span properties.
func (b *Builder) finishSpans() ([]byte, error) {
	s := &b.spans
	if s.n == 0 {
		return nil, nil
	}
	s.emit(nil)
	block, ok := s.w.Finish()
	if !ok {
		return nil, fmt.Errorf("sstable: builder: span block of more than 4 GiB")
	}
	b.props.NumSpans = s.n
	b.props.NumSpanFragments = uint64(s.w.Len())
	b.props.SmallestSpanKey = s.smallest
	b.props.LargestSpanKey = append([]byte{}, s.lastFrag...)
	b.props.FormatVersion = format.Version5
	return block, nil
}
