package merge

import (
	"bytes"
	"sort"

	"github.com/sstkit/sstable/reader"
)

// tablesSpanIter is the SpanIterator of a tablesLevel: one
// *reader.SpanIterator per table with spans, made when first reached.
// pos is the table it is on, -1 before the first fragment and len(spans)
// past the last (where Next and Prev step from, as reader.SpanIterator's
// do).
type tablesSpanIter struct {
	l      *tablesLevel
	its    []*reader.SpanIterator
	pos    int
	ok     bool
	err    error
	closed bool
}

func (s *tablesSpanIter) table(i int) *reader.SpanIterator {
	it := s.its[i]
	if it == nil {
		it = s.l.spans[i].r.NewSpanIterator()
		s.its[i] = it
	}
	s.pos = i
	return it
}

// settle records the outcome of a move of table pos's iterator.
func (s *tablesSpanIter) settle(ok bool) bool {
	s.ok = ok
	if !ok && s.err == nil {
		if it := s.its[s.pos]; it != nil {
			s.err = it.Err()
		}
	}
	return ok
}

func (s *tablesSpanIter) usable() bool { return s.err == nil && !s.closed }

func (s *tablesSpanIter) First() bool {
	if !s.usable() || len(s.l.spans) == 0 {
		s.ok = false
		return false
	}
	return s.settle(s.table(0).First())
}

func (s *tablesSpanIter) Last() bool {
	if !s.usable() || len(s.l.spans) == 0 {
		s.ok = false
		return false
	}
	return s.settle(s.table(len(s.l.spans) - 1).Last())
}

func (s *tablesSpanIter) SeekGE(key []byte) bool {
	if !s.usable() {
		return false
	}
	sp := s.l.spans
	i := sort.Search(len(sp), func(i int) bool { return bytes.Compare(sp[i].end, key) > 0 })
	if i == len(sp) {
		s.pos, s.ok = len(sp), false
		return false
	}
	return s.settle(s.table(i).SeekGE(key))
}

func (s *tablesSpanIter) SeekLT(key []byte) bool {
	if !s.usable() {
		return false
	}
	sp := s.l.spans
	i := sort.Search(len(sp), func(i int) bool { return bytes.Compare(sp[i].start, key) >= 0 }) - 1
	if i < 0 {
		s.pos, s.ok = -1, false
		return false
	}
	return s.settle(s.table(i).SeekLT(key))
}

func (s *tablesSpanIter) Next() bool {
	if !s.usable() {
		return false
	}
	switch {
	case s.pos >= len(s.l.spans):
		return false
	case s.pos < 0:
		return s.First()
	case !s.ok:
		// Before the table's first fragment (a SeekLT below it).
		return s.settle(s.its[s.pos].Next())
	}
	if s.its[s.pos].Next() {
		return true
	}
	if err := s.its[s.pos].Err(); err != nil {
		return s.settle(false)
	}
	if s.pos+1 == len(s.l.spans) {
		s.pos, s.ok = len(s.l.spans), false
		return false
	}
	return s.settle(s.table(s.pos + 1).First())
}

func (s *tablesSpanIter) Prev() bool {
	if !s.usable() {
		return false
	}
	switch {
	case s.pos < 0:
		return false
	case s.pos >= len(s.l.spans):
		return s.Last()
	case !s.ok:
		return s.settle(s.its[s.pos].Prev())
	}
	if s.its[s.pos].Prev() {
		return true
	}
	if err := s.its[s.pos].Err(); err != nil {
		return s.settle(false)
	}
	if s.pos == 0 {
		s.pos, s.ok = -1, false
		return false
	}
	return s.settle(s.table(s.pos - 1).Last())
}

func (s *tablesSpanIter) Span() reader.Span {
	if !s.ok {
		return reader.Span{}
	}
	return s.its[s.pos].Span()
}

func (s *tablesSpanIter) Err() error { return s.err }

func (s *tablesSpanIter) Close() error {
	if s.closed {
		return s.err
	}
	s.closed, s.ok = true, false
	for i, it := range s.its {
		if it == nil {
			continue
		}
		if err := it.Close(); err != nil && s.err == nil {
			s.err = err
		}
		s.its[i] = nil
	}
	return s.err
}
