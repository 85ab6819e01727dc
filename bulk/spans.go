package bulk

import (
	"bytes"
	"fmt"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/spanfrag"
)

// bulkSpan is a span added with AddSpan.
type bulkSpan struct {
	start, end, value []byte
}

// fragment is one fragment of the spans added: [Start, End) covered by
// the spans whose Values it lists, in the order they were added.
type fragment = spanfrag.Fragment

// AddSpan adds the span [start, end) with value (a range deletion or a
// range key, as builder.Builder.AddSpan takes): start must be below end
// in bytes.Compare order, else the error wraps builder.ErrKeyOrder. Spans
// may come in any order and overlap; Finish fragments them as
// builder.Builder.AddSpan does, each fragment listing the values of the
// spans covering it in the order AddSpan was called, and cuts the
// fragments at the tables' boundaries: table i holds the fragments,
// clipped, within [table i's first key, table i+1's first key), the first
// table from the smallest key and the last to the largest, so that every
// spanned key is in exactly one table's span block and no two tables'
// keys and spans overlap (spans alone make one table of spans, with no
// entries). A table's Properties().NumSpans counts the pieces of spans it
// holds, one per fragment and value. Spans need the version 4 layout:
// with Options.Builder asking for FormatVersion 1 to 3 or HashIndex,
// AddSpan returns an error.
//
// Memory: spans are held in memory until Finish, not spilled: their key
// and value bytes plus about 80 bytes each, and at Finish their fragments.
func (w *Writer) AddSpan(start, end, value []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if err := checkSpanFormat(w.opts.Builder); err != nil {
		return err
	}
	if bytes.Compare(start, end) >= 0 {
		return wrap(w.dir, fmt.Errorf("%w: span start %s is not below its end %s", builder.ErrKeyOrder, QuoteKey(start), QuoteKey(end)))
	}
	w.spans = append(w.spans, bulkSpan{bytes.Clone(start), bytes.Clone(end), bytes.Clone(value)})
	if w.spans[len(w.spans)-1].start == nil {
		w.spans[len(w.spans)-1].start = []byte{}
	}
	return nil
}

// checkSpanFormat returns an error if tables built with o cannot hold
// spans: spans need the version 4 layout, which FormatVersion 1 to 3 and
// HashIndex rule out.
func checkSpanFormat(o *builder.Options) error {
	if o != nil && (o.HashIndex || o.FormatVersion != 0 && o.FormatVersion != format.Version4) {
		return fmt.Errorf("bulk: AddSpan: spans need the builder's default format (version 4 layout); Options.Builder asks for format version %d, hash index %v", o.FormatVersion, o.HashIndex)
	}
	return nil
}

// fragmentSpans returns the fragments of spans, in key order.
func fragmentSpans(spans []bulkSpan) []fragment {
	return spanfrag.Cut(spans,
		func(s *bulkSpan) ([]byte, []byte) { return s.start, s.end },
		func(dst [][]byte, s *bulkSpan) [][]byte { return append(dst, s.value) })
}

// addSpansBelow adds to b the fragments of w.frags, from w.nextFrag on,
// clipped below limit (nil: every one left), and returns how many
// fragments it added. A fragment crossing limit is cut: its part from
// limit on stays for the next table.
func (w *Writer) addSpansBelow(b *builder.Builder, limit []byte) (int64, error) {
	var n int64
	for w.nextFrag < len(w.frags) {
		f := &w.frags[w.nextFrag]
		if limit != nil && bytes.Compare(f.Start, limit) >= 0 {
			break
		}
		end := f.End
		if limit != nil && bytes.Compare(limit, end) < 0 {
			end = limit
		}
		for _, v := range f.Values {
			if err := b.AddSpan(f.Start, end, v); err != nil {
				return n, wrap("", err)
			}
		}
		n++
		if bytes.Equal(end, f.End) {
			w.nextFrag++
		} else {
			f.Start = bytes.Clone(limit) // the rest goes to the next table (limit may be reused)
		}
	}
	return n, nil
}
