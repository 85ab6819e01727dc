package merge_test

import (
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// memLevel is the tests' memtable: sorted keys and values and span
// fragments, read through merge.Memtable (so that the model tests drive
// it). split gives a key's prefix length (nil: whole keys, prefixes by
// bytes.HasPrefix).
type memLevel struct {
	keys, vals [][]byte
	spans      []reader.Span
	split      func([]byte) int
}

func (m *memLevel) memtable() *merge.Memtable {
	mt := &merge.Memtable{
		NewCursor: func() merge.Cursor { return merge.SliceCursor(m.keys, m.vals) },
		Spans:     func() []reader.Span { return m.spans },
	}
	if m.split != nil {
		mt.Splitter = funcSplitter(m.split)
	}
	return mt
}

func (m *memLevel) NewIter(o *reader.IterOptions) merge.LevelIterator {
	return m.memtable().NewIter(o)
}

func (m *memLevel) NewSpanIter() merge.SpanIterator { return m.memtable().NewSpanIter() }

// funcSplitter is a format.Splitter of a split function.
type funcSplitter func([]byte) int

func (f funcSplitter) Name() string         { return "test" }
func (f funcSplitter) Split(key []byte) int { return f(key) }
