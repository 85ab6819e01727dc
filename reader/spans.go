package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// Span is one fragment of a table's spans (range deletions or range keys,
// builder.Builder.AddSpan): the keys in [Start, End) are covered by the
// spans whose values Values lists, in the order they were added. Fragments
// do not overlap, so a key is in at most one. Start, End and each value
// are slices of the table's span block: in a memory-mapped table they
// alias the mapping and stay valid until the Reader is closed (reading
// them after Close faults), or, unclosed, is unreachable (see Close):
// keep it reachable while they are in use; over an io.ReaderAt they are
// on the Go heap.
// Values is shared by every lookup of the fragment: do not modify it.
type Span struct {
	Start, End []byte
	Values     [][]byte
}

// spanLayer is the span layer: a table's span block (Version5), found
// at the end of the index block, checked (its trailer, and its count and
// bounds against the properties) and decoded once, on first use (or at
// open when the properties leave a span bound out), and then kept: in
// place in a mapping, on the Go heap over an io.ReaderAt, charged to the
// cache. It answers SpanAt's lookup, gives span iterators the decoded
// block, and checks the block again from the file for Verify. The Reader
// keeps only the entry points, which pin it, guard against faults and
// name its errors. A table without spans has props.NumSpanFragments 0,
// and every method but at then returns at once (SpanAt answers such a
// table itself).
type spanLayer struct {
	src      source
	props    *format.Properties // the reader's: fillBounds completes its span bounds, which later checks compare with
	propsOff int64              // the properties block's offset, for errors
	h        format.BlockHandle // the block's handle, length without the trailer
	pre      []byte             // the block and trailer, copied from the tail New read (io.ReaderAt) onto the Go heap when the cache could not take them, until loaded
	copied   bool               // the block and trailer were copied from the tail into the cache instead (slotSpans)
	state    lazySection
	blk      *codec.SpanBlock // set before state.done
}

// init sets up the layer of a table with properties props (at offset
// propsOff), read from src, whose span block is at h (zero without one).
func (s *spanLayer) init(src source, props *format.Properties, propsOff int64, h format.BlockHandle) {
	s.src, s.props, s.propsOff, s.h = src, props, propsOff, h
}

// keepTail keeps a copy of the span block, when it lies in the tail a
// reader without a mapping read (tail, from file offset tailOff): the
// first SpanAt then reads nothing unless the copy was evicted. A copy,
// not pinning the tail's buffer: in the cache, as the sections in the
// tail are (slotSpans), or on the Go heap when the cache cannot take it.
func (s *spanLayer) keepTail(tail []byte, tailOff int64) {
	if s.props.NumSpanFragments == 0 {
		return
	}
	pre := tailPart(tail, tailOff, s.h)
	if pre == nil {
		return
	}
	sections := s.src.(*readAtSource).sections
	if p, ok := sections.Reserve(slotSpans, len(pre)); ok {
		copy(p.Bytes(), pre)
		sections.Publish(slotSpans, p, 0)
		p.Release()
		s.copied = true
		return
	}
	s.pre = bytes.Clone(pre)
}

// load returns the table's decoded span block, loading it on first use;
// nil with a nil error when the table has no spans. Run it under the
// fault guard.
func (s *spanLayer) load() (*codec.SpanBlock, error) {
	if s.state.done.Load() {
		return s.blk, s.state.err
	}
	if s.props.NumSpanFragments == 0 {
		return nil, nil
	}
	err := s.state.load(func() error {
		raw := s.pre
		var sections *blockcache.Table // charged for what the reader keeps on the Go heap
		onHeap := false
		fromTail := false // raw is the copy keepTail made
		switch src := s.src.(type) {
		case *mmapSource:
			raw = src.mapped[s.h.Offset:s.h.End():s.h.End()] // open checked the handle lies in the file
			sections = src.sections
		case *readAtSource:
			sections, onHeap = src.sections, true
			if raw == nil && s.copied {
				if p, ok := src.sections.Get(slotSpans); ok {
					raw = bytes.Clone(p.Bytes()) // the decoded block's slices alias it
					p.Release()
				}
			}
			fromTail = raw != nil
			if raw == nil {
				var err error
				if raw, err = src.readBlock(format.SectionSpans, s.h, nil); err != nil {
					return err
				}
			}
		}
		blk, err := s.decode(raw)
		if err != nil && fromTail {
			// The copy from the tail may have been damaged on the way:
			// read the block again, as for any kept block.
			src := s.src.(*readAtSource)
			if raw, err = src.readBlock(format.SectionSpans, s.h, nil); err != nil {
				return err
			}
			blk, err = s.decode(raw)
		}
		if err != nil {
			return err
		}
		s.blk, s.pre = blk, nil
		n := blk.HeapBytes()
		if onHeap {
			n += len(raw)
		}
		charge(sections, n)
		return nil
	})
	return s.blk, err
}

// decode checks the span block's bytes and trailer and its agreement
// with the properties, and decodes it.
func (s *spanLayer) decode(raw []byte) (*codec.SpanBlock, error) {
	h := s.h
	contents, err := rawContents(format.SectionSpans, h, raw)
	if err != nil {
		return nil, err
	}
	blk, err := codec.DecodeSpanBlock(contents, int64(h.Offset))
	if err != nil {
		return nil, err
	}
	p := s.props
	propsOff := s.propsOff
	if uint64(blk.Len()) != p.NumSpanFragments {
		return nil, format.Corruptf(format.SectionSpans, int64(h.Offset), "%d fragments, the properties say %d", blk.Len(), p.NumSpanFragments)
	}
	first, _, _ := blk.Fragment(0)
	_, last, _ := blk.Fragment(blk.Len() - 1)
	if p.SmallestSpanKey != nil && !bytes.Equal(first, p.SmallestSpanKey) || p.SmallestSpanKey == nil && len(first) <= format.MaxPropertiesKeyLen {
		return nil, format.Corruptf(format.SectionProperties, propsOff, "smallest span key %q disagrees with the span block's first fragment start %q", p.SmallestSpanKey, first)
	}
	if p.LargestSpanKey != nil && !bytes.Equal(last, p.LargestSpanKey) || p.LargestSpanKey == nil && len(last) <= format.MaxPropertiesKeyLen {
		return nil, format.Corruptf(format.SectionProperties, propsOff, "largest span key %q disagrees with the span block's last fragment end %q", p.LargestSpanKey, last)
	}
	return blk, nil
}

// fillBounds fills in the span bounds the properties block left out
// (keys of more than format.MaxPropertiesKeyLen bytes) from the span
// block, reading it at open.
func (s *spanLayer) fillBounds() error {
	p := s.props
	if p.NumSpanFragments == 0 || p.SmallestSpanKey != nil && p.LargestSpanKey != nil {
		return nil
	}
	blk, err := s.load()
	if err != nil {
		return err
	}
	first, _, _ := blk.Fragment(0)
	_, last, _ := blk.Fragment(blk.Len() - 1)
	p.SmallestSpanKey, p.LargestSpanKey = bytes.Clone(first), bytes.Clone(last)
	return nil
}

// at returns the fragment covering key, for SpanAt, which has checked
// that the table has spans; ErrNotFound if none does. Run it under the
// fault guard.
func (s *spanLayer) at(key []byte) (Span, error) {
	blk, err := s.load()
	if err != nil {
		return Span{}, err
	}
	i := blk.SearchStart(key)
	if i < 0 {
		return Span{}, ErrNotFound
	}
	start, end, values := blk.Fragment(i)
	if bytes.Compare(key, end) >= 0 {
		return Span{}, ErrNotFound
	}
	return Span{Start: start, End: end, Values: values}, nil
}

// verify checks the span block from the file's bytes, whether or not it
// was loaded before.
func (s *spanLayer) verify() error {
	if s.props.NumSpanFragments == 0 {
		return nil
	}
	h := s.h
	var raw []byte
	switch src := s.src.(type) {
	case *mmapSource:
		raw = src.mapped[h.Offset:h.End():h.End()]
	case *readAtSource:
		var err error
		if raw, err = src.readBlock(format.SectionSpans, h, nil); err != nil {
			return err
		}
	}
	_, err := s.decode(raw)
	return err
}

// SpanAt returns the fragment of the table's spans covering key: the one
// with Start <= key < End, listing the values of every span added over
// it. A key no span covers (and every key of a table without spans) gives
// ErrNotFound itself; a damaged span block an error wrapping
// format.ErrCorrupt (the span block is checked whole on first use); a
// closed reader an error wrapping ErrClosed. It is one binary search over
// the span block's index entries (fixed-width: each a record offset and
// the start key's 8-byte prefix), reading a start key in place only when
// prefixes tie, and allocates nothing: about 140 ns with 10,000 fragments
// on a shared 2-core machine (BenchmarkSpanAt). The returned slices stay valid as Span says.
func (r *Reader) SpanAt(key []byte) (sp Span, err error) {
	if !r.acquire() {
		return Span{}, r.errClosed
	}
	if r.props.NumSpanFragments == 0 {
		r.release()
		return Span{}, ErrNotFound
	}
	defer r.endGuardedSpan(&sp, &err, protect())
	return r.spans.at(key)
}

// endGuardedSpan, deferred by SpanAt, turns a memory fault in the mapping
// into an error, names the table in errors and releases the reader.
func (r *Reader) endGuardedSpan(sp *Span, err *error, old bool) {
	if v := recover(); v != nil {
		*sp, *err = Span{}, r.src.faultError(v)
	}
	if *err != nil && *err != ErrNotFound {
		*err = r.named(*err)
	}
	restoreFault(old)
	r.release()
}

// SpanIterator walks the fragments of a table's spans in key order
// (Reader.NewSpanIterator). Each positioning method returns whether it
// is at a fragment; Span returns it. A SpanIterator is not safe for
// concurrent use; many may be open on one Reader. Moves allocate nothing.
type SpanIterator struct {
	r      *Reader
	blk    *codec.SpanBlock
	i      int // the fragment, or -1 / Len(): not positioned
	err    error
	closed bool // the reader's reference is released (or was never taken)
	done   bool // Close was called
}

// NewSpanIterator returns an unpositioned iterator over the table's span
// fragments; call First, Last, SeekGE or SeekLT. A table without spans
// gives an iterator at no fragment. A damaged span block (checked whole
// here) or a closed reader makes every move return false, and Err and
// Close return the error. Close the iterator when done: it holds the
// reader's file open, and the slices Span returns stay valid until then.
func (r *Reader) NewSpanIterator() *SpanIterator {
	it := &SpanIterator{r: r, i: -1}
	if !r.acquire() {
		it.err, it.closed = r.errClosed, true
		return it
	}
	// Named here, not in load: a fault in the mapping becomes load's
	// error in its deferred recovery, after its return statement.
	it.err = r.named(it.load())
	return it
}

// load loads the span block into it.blk under the fault guard.
func (it *SpanIterator) load() (err error) {
	defer restoreFault(protect())
	defer it.r.recoverFault(&err)
	it.blk, err = it.r.spans.load()
	return err
}

func (it *SpanIterator) n() int {
	if it.blk == nil || it.err != nil {
		return 0
	}
	return it.blk.Len()
}

func (it *SpanIterator) at(i int) bool {
	n := it.n()
	switch {
	case i < 0:
		it.i = -1
		return false
	case i >= n:
		it.i = n
		return false
	}
	it.i = i
	return true
}

// First moves to the first fragment.
func (it *SpanIterator) First() bool { return it.at(0) }

// Last moves to the last fragment.
func (it *SpanIterator) Last() bool { return it.at(it.n() - 1) }

// SeekGE moves to the first fragment whose End is after key: the one
// covering key, if any, else the first starting after key.
func (it *SpanIterator) SeekGE(key []byte) bool {
	if it.n() == 0 {
		return it.at(-1)
	}
	return it.at(it.blk.SearchEnd(key))
}

// SeekLT moves to the last fragment whose Start is before key.
func (it *SpanIterator) SeekLT(key []byte) bool {
	if it.n() == 0 {
		return it.at(-1)
	}
	return it.at(it.blk.SearchStartBefore(key))
}

// Next moves to the next fragment; from before the first (an
// unpositioned iterator, or SeekLT or Prev having run off the start), to
// the first.
func (it *SpanIterator) Next() bool {
	if it.i < 0 {
		return it.at(0)
	}
	return it.at(min(it.i, it.n()) + 1)
}

// Prev moves to the previous fragment; from past the last, to the last.
func (it *SpanIterator) Prev() bool {
	if n := it.n(); it.i >= n {
		return it.at(n - 1)
	}
	return it.at(it.i - 1)
}

// Span returns the current fragment, or a zero Span when the iterator is
// at none. Its slices stay valid until Close (see Span).
func (it *SpanIterator) Span() Span {
	if it.i < 0 || it.i >= it.n() {
		return Span{}
	}
	start, end, values := it.blk.Fragment(it.i)
	return Span{Start: start, End: end, Values: values}
}

// Err returns the error that stopped the iterator, if any.
func (it *SpanIterator) Err() error { return it.err }

// Close releases the iterator and returns its error, if any. Later calls
// return nil.
func (it *SpanIterator) Close() error {
	if it.done {
		return nil
	}
	it.done = true
	if !it.closed {
		it.closed = true
		it.r.release()
	}
	err := it.err
	it.blk, it.i = nil, -1
	if err == nil {
		it.err = ErrClosed
	}
	return err
}
