package leveldb

import (
	"encoding/binary"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// blockIndex is a table's index block decoded into arrays: separator i
// (an internal key at or above every key of data block i and below every
// key of block i+1) and block i's handle. Seeks binary-search it with the
// internal key order, which the block's own search (bytes.Compare)
// cannot use.
type blockIndex struct {
	keys    []byte   // the separators, one after another
	ends    []uint32 // ends[i]: end of separator i in keys
	handles []format.BlockHandle
}

func (x *blockIndex) len() int { return len(x.handles) }

func (x *blockIndex) key(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.keys[start:x.ends[i]:x.ends[i]]
}

// init decodes the index block's contents (at file offset off), checking
// that separators are internal keys in increasing order and that the
// handles follow one another inside the first limit bytes of the file.
func (x *blockIndex) init(contents []byte, off int64, limit uint64) error {
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, off, contents); err != nil || emptyBlock(contents) {
		return err
	}
	var prev []byte
	next := uint64(0)
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		i := len(x.handles)
		// Any trailer will do: LevelDB tags a shortened separator with
		// its largest sequence number and kind 1, Pebble with kind 17.
		if len(k) < trailerLen {
			return format.Corruptf(format.SectionIndex, off, "separator %d (%q) is shorter than an internal key's 8-byte trailer", i, k)
		}
		if i > 0 && compareKeys(prev, k) >= 0 {
			return format.Corruptf(format.SectionIndex, off, "separator %d (%q) does not sort after separator %d", i, k, i-1)
		}
		h, n := codec.DecodeHandle(it.Value())
		if n <= 0 || n != len(it.Value()) {
			return format.Corruptf(format.SectionIndex, off, "entry %d: bad block handle", i)
		}
		if h.Offset < next || !inside(h, limit) {
			return format.Corruptf(format.SectionIndex, off, "entry %d: data block handle (offset %d, %d bytes) overlaps the block before it or lies outside the file", i, h.Offset, h.Length)
		}
		next = h.End()
		x.keys = append(x.keys, k...)
		x.ends = append(x.ends, uint32(len(x.keys)))
		x.handles = append(x.handles, h)
		prev = x.key(i)
	}
	return it.Err()
}

// search returns the first block whose separator is at or above the
// internal key target: the only block that can hold target's successor
// in a table whose separators are LevelDB's; len() if none.
func (x *blockIndex) search(target []byte) int {
	lo, hi := 0, len(x.handles)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if compareKeys(x.key(mid), target) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// inside reports whether the block at h, with its trailer, lies within
// the first limit bytes of the file.
func inside(h format.BlockHandle, limit uint64) bool {
	return limit >= format.BlockTrailerLen && h.Length <= limit-format.BlockTrailerLen && h.Offset <= limit-format.BlockTrailerLen-h.Length
}

// emptyBlock reports whether a block (checked by BlockIter.Init) holds no
// entries: only its restart array, which LevelDB's block builder writes
// with one restart point at 0 even when no entry follows (an empty
// metaindex block, goleveldb's index block of an empty table).
func emptyBlock(contents []byte) bool {
	n := len(contents)
	return n >= 4 && uint64(n) == 4+4*uint64(binary.LittleEndian.Uint32(contents[n-4:]))
}
