package reader

import (
	"fmt"
	"unsafe"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
)

// Test hooks into the reader's use of the block cache.

// CachedBlock reports whether data block i of r is in the cache. It pins
// and releases the block, which counts as a hit.
func CachedBlock(r *Reader, i int) bool {
	if r.blocks == nil || i >= r.blocks.Len() {
		return false
	}
	h, ok := r.blocks.Get(i)
	h.Release()
	return ok
}

// BlockTable returns r's cache table of data blocks, nil if it has none.
func BlockTable(r *Reader) *cache.Table { return r.blocks }

// ScratchAliasesMapping reads data block 0 of the mapped reader r the
// way a block whose number lies past the index's is read (through read,
// which returns the mapping itself), and reports whether the scratch
// buffer left for the next user of the pool points into the mapping.
func ScratchAliasesMapping(r *Reader) (bool, error) {
	r.initBlocks()
	idx, err := r.indexBlock(new(cache.Handle))
	if err != nil {
		return false, err
	}
	var it format.BlockIter
	if err := it.Init(format.SectionIndex, 0, idx); err != nil || !it.First() {
		return false, fmt.Errorf("index: %v", err)
	}
	h, _ := format.DecodeHandle(it.Value())
	s := new(scratch)
	if _, _, err := r.checkedBlock(s, len(r.verified), h); err != nil {
		return false, err
	}
	if cap(s.raw) == 0 || len(r.mapped) == 0 {
		return false, nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s.raw[:1])))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(r.mapped)))
	return p >= lo && p < lo+uintptr(len(r.mapped)), nil
}

// UsesHashIndex reports whether Get and SeekPrefixGE of r may go through
// the table's hash index.
func UsesHashIndex(r *Reader) bool { return r.useHash }

// PartitionsChecked returns how many partitions of the mapped,
// partitioned table of r have been checked, that is read at least once.
func PartitionsChecked(r *Reader) int {
	n := 0
	for i := range r.partChecked {
		if r.partChecked[i].Load() {
			n++
		}
	}
	return n
}
