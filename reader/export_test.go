package reader

import (
	"fmt"
	"unsafe"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// Test hooks into the reader's use of the block cache.

// CachedBlock reports whether data block i of r is in the cache. It pins
// and releases the block, which counts as a hit.
func CachedBlock(r *Reader, i int) bool {
	t := r.src.blockTable()
	if t == nil || i >= t.Len() {
		return false
	}
	h, ok := t.Get(i)
	h.Release()
	return ok
}

// BlockTable returns r's cache table of data blocks, nil if it has none.
func BlockTable(r *Reader) *blockcache.Table { return r.src.blockTable() }

// ScratchAliasesMapping reads data block 0 of the mapped reader r the
// way a block whose number lies past the index's is read, and reports
// whether the scratch buffer left for the next user of the pool points
// into the mapping.
func ScratchAliasesMapping(r *Reader) (bool, error) {
	m, ok := r.src.(*mmapSource)
	if !ok {
		return false, fmt.Errorf("not mapped")
	}
	bi, ok := r.index.(*blockIndex)
	if !ok {
		return false, fmt.Errorf("not a one-level table")
	}
	idx, err := bi.sec.contents(r.src, new(blockcache.Handle))
	if err != nil {
		return false, err
	}
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, 0, idx); err != nil || !it.First() {
		return false, fmt.Errorf("index: %v", err)
	}
	h, _ := codec.DecodeHandle(it.Value())
	s := new(scratch)
	if _, err := m.dataBlock(s, int(r.props.NumDataBlocks), h); err != nil {
		return false, err
	}
	if cap(s.raw) == 0 {
		return false, nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s.raw[:1])))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(m.mapped)))
	return p >= lo && p < lo+uintptr(len(m.mapped)), nil
}

// UsesHashIndex reports whether Get and SeekPrefixGE of r may go through
// the table's hash index.
func UsesHashIndex(r *Reader) bool {
	switch r.index.(type) {
	case *hashedIndex, *compactIndex:
		return true
	}
	return false
}

// HoldsFilter reports whether r has made a copy of the table's whole
// filter on the heap, which it probes before pinning the table (a mapped
// version 4 reader, once it has served a Get or Has).
func HoldsFilter(r *Reader) bool { return r.held != nil && r.held.ready.Load() }

// PartitionsChecked returns how many partitions of the mapped,
// partitioned table of r have been checked, that is read at least once.
func PartitionsChecked(r *Reader) int {
	m, ok := r.src.(*mmapSource)
	if !ok {
		return 0
	}
	n := 0
	for i := range m.partsOK {
		if m.partsOK[i].Load() {
			n++
		}
	}
	return n
}

// IterInPlace reports whether it reads its current block in place from
// the file mapping (each Next then runs under the fault guard), rather
// than from the cache or its own copy.
func IterInPlace(it *Iterator) bool { return it.loaded && it.mapped }

// FillWaiters returns the goroutines waiting for another's read and
// decode of data block i into the cache, or -1 when no fill of it is in
// progress.
func FillWaiters(r *Reader, i int) int {
	switch s := r.src.(type) {
	case *mmapSource:
		return s.fills.waiting(i)
	case *readAtSource:
		return s.fills.waiting(i)
	}
	return -1
}

// OnDecode makes r call f as each decode of a data block (into the
// cache, or into a scratch buffer when the cache cannot take it) begins,
// on the decoding goroutine. Call it before r reads any data block.
func OnDecode(r *Reader, f func(i int)) {
	switch s := r.src.(type) {
	case *mmapSource:
		s.onDecode = f
	case *readAtSource:
		s.onDecode = f
	default:
		panic(fmt.Sprintf("OnDecode: source %T", r.src))
	}
}

// FencesKnown returns how many data blocks of r's version 4 table have a
// fence (index_compact.go), and the number of data blocks; 0, 0 when the
// reader keeps none.
func FencesKnown(r *Reader) (known, blocks int) {
	x, ok := r.index.(*compactIndex)
	if !ok || !x.fenceReady.Load() {
		return 0, 0
	}
	for i := range x.fences {
		if x.fences[i].Load() != 0 {
			known++
		}
	}
	return known, len(x.fences)
}

// ScanAhead returns the lines of the next data block the forward walk of
// it has still to prefetch.
func ScanAhead(it *Iterator) []byte { return it.ahead }

// SeekFences reports whether r's SeekGE goes through seek fences (a
// version 4 table whose fences are made), and how many of its data
// blocks have their sub-fences recorded.
func SeekFences(r *Reader) (made bool, subs int) {
	x := fencesOf(r)
	if x == nil {
		return false, 0
	}
	f := x.seek.Load()
	if f == nil {
		return false, 0
	}
	for i := 3; i < len(f.sub); i += 4 {
		if f.sub[i].Load() != 0 {
			subs++
		}
	}
	return true, subs
}

// SeekFenceBlock returns the data block a SeekGE(key) in r reads through
// its seek fences, and false when the fences do not decide it (a tie, a
// key without the keys' common bytes, past the last block, or no fences
// made), when the seek searches the index.
func SeekFenceBlock(r *Reader, key []byte) (block int, ok bool) {
	x := fencesOf(r)
	if x == nil {
		return 0, false
	}
	f := x.seek.Load()
	if f == nil {
		return 0, false
	}
	block, _, ok = f.block(key)
	return block, ok
}
