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

	// fences[i] is the 8 bytes of separator i's user key after skip (the
	// bytes every separator's user key starts with), big-endian, zero-
	// padded: in the same order as the separators, so a search compares
	// whole keys only among separators whose fences tie.
	fences []uint64
	skip   int
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
	if err := it.Err(); err != nil {
		return err
	}
	x.setFences()
	return nil
}

// setFences computes the fences, once the separators are read.
func (x *blockIndex) setFences() {
	n := len(x.handles)
	if n == 0 {
		return
	}
	first, last := x.key(0), x.key(n-1)
	first, last = first[:len(first)-trailerLen], last[:len(last)-trailerLen]
	for x.skip < len(first) && x.skip < len(last) && first[x.skip] == last[x.skip] {
		x.skip++
	}
	x.fences = make([]uint64, n)
	for i := range x.fences {
		k := x.key(i)
		x.fences[i] = fence(k[:len(k)-trailerLen], x.skip)
	}
}

// fence returns the 8 bytes of user key u after its first skip bytes,
// big-endian, zero-padded; it keeps the order of user keys that share
// those skip bytes.
func fence(u []byte, skip int) uint64 {
	if skip > len(u) {
		skip = len(u)
	}
	u = u[skip:]
	if len(u) >= 8 {
		return binary.BigEndian.Uint64(u)
	}
	var b [8]byte
	copy(b[:], u)
	return binary.BigEndian.Uint64(b[:])
}

// search returns the first block whose separator is at or above the
// internal key target: the only block that can hold target's successor
// in a table whose separators are LevelDB's; len() if none. It binary-
// searches the fences, then the whole separators among those that tie.
// A target whose user key lacks the separators' common bytes compares
// whole keys throughout.
func (x *blockIndex) search(target []byte) int {
	lo, hi := 0, len(x.handles)
	if u := target[:len(target)-trailerLen]; len(u) >= x.skip && string(u[:x.skip]) == string(x.keys[:x.skip]) {
		f := fence(u, x.skip)
		for lo < hi { // the first fence >= f
			mid := int(uint(lo+hi) >> 1)
			if x.fences[mid] < f {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		hi = lo
		for end := len(x.handles); hi < end; { // the first fence > f
			mid := int(uint(hi+end) >> 1)
			if x.fences[mid] <= f {
				hi = mid + 1
			} else {
				end = mid
			}
		}
	}
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
