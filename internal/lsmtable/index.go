package lsmtable

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/sstkit/sstable/format"
)

// Index is a table's index decoded into arrays: separator i (an internal
// key at or above every key of data block i and below every key of
// block i+1) and block i's handle. Seeks binary-search it in the
// internal key order. A format package fills it with Append, whatever
// its index block's encoding (one block, partitions, user-key
// separators, delta-encoded handles), then calls Finish.
type Index struct {
	keys    []byte   // the separators, one after another
	ends    []uint32 // ends[i]: end of separator i in keys
	handles []format.BlockHandle
	reverse bool // user keys in reverse bytewise order
	plain   bool // keys without a trailer (SetPlain)
	next    uint64

	// fences[i] is the 8 bytes of separator i's user key after skip (the
	// bytes every separator's user key starts with), big-endian, zero-
	// padded, inverted for a reverse order: in the same order as the
	// separators, so a search compares whole keys only among
	// separators whose fences tie. tree searches them.
	fences []uint64
	tree   fenceTree
	skip   int

	// blockSkips[i] is the length of the user key prefix separators i-1
	// and i share (0 for block 0), at most 65,535: every key of data
	// block i starts with it, and so does every key a search leads
	// there (sideindex.go).
	blockSkips []uint16
}

// SetReverse makes the index order user keys in reverse bytewise order
// (RocksDB's ReverseBytewiseComparator); call it before Append.
func (x *Index) SetReverse(r bool) { x.reverse = r }

// Reverse reports whether user keys are in reverse bytewise order.
func (x *Index) Reverse() bool { return x.reverse }

// SetPlain makes the table's keys, separators and data keys alike, plain
// user keys without an internal key's trailer (a table written by
// LevelDB's TableBuilder directly); call it before Append. Every entry
// then reads as sequence number 0, KindValue.
func (x *Index) SetPlain(p bool) { x.plain = p }

// Plain reports whether the table's keys are plain user keys.
func (x *Index) Plain() bool { return x.plain }

// trailerLen returns the length of the trailer after a stored key's user
// key: TrailerLen, or 0 for plain keys.
func (x *Index) trailerLen() int {
	if x.plain {
		return 0
	}
	return TrailerLen
}

// Compare orders two of the table's stored keys: internal keys by
// CompareKeys, plain keys by their bytes (reversed for a reverse order).
func (x *Index) Compare(a, b []byte) int {
	if x.plain {
		return compareUser(a, b, x.reverse)
	}
	return CompareKeys(a, b, x.reverse)
}

// Len returns the number of data blocks.
func (x *Index) Len() int { return len(x.handles) }

// Key returns separator i.
func (x *Index) Key(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.keys[start:x.ends[i]:x.ends[i]]
}

// Handle returns data block i's handle.
func (x *Index) Handle(i int) format.BlockHandle { return x.handles[i] }

// Grow makes room for blocks more data blocks whose separators take
// keyBytes bytes in all, so that Append fills arrays of their final size:
// a LevelDB index block (one restart point per entry) gives both, and
// the arrays grown by doubling instead were half the allocation of
// opening a table. It is a hint: Append grows the arrays past it.
func (x *Index) Grow(blocks, keyBytes int) {
	if blocks <= 0 || keyBytes < 0 {
		return
	}
	x.keys = slices.Grow(x.keys, keyBytes)
	x.ends = slices.Grow(x.ends, blocks)
	x.handles = slices.Grow(x.handles, blocks)
}

// Append adds the next data block: its separator, a key above the
// previous one (an internal key unless SetPlain), and its handle, after
// the previous block's and inside the first limit bytes of the file. The
// error says what is wrong; the caller names the section and offset.
func (x *Index) Append(sep []byte, h format.BlockHandle, limit uint64) error {
	i := len(x.handles)
	if len(sep) < x.trailerLen() {
		return fmt.Errorf("separator %d (%q) is shorter than an internal key's 8-byte trailer", i, sep)
	}
	if i > 0 && x.Compare(x.Key(i-1), sep) >= 0 {
		return fmt.Errorf("separator %d (%q) does not sort after separator %d", i, sep, i-1)
	}
	if h.Offset < x.next || !Inside(h, limit) {
		return fmt.Errorf("entry %d: data block handle (offset %d, %d bytes) overlaps the block before it or lies outside the file", i, h.Offset, h.Length)
	}
	x.next = h.End()
	x.keys = append(x.keys, sep...)
	x.ends = append(x.ends, uint32(len(x.keys)))
	x.handles = append(x.handles, h)
	return nil
}

// Finish computes the fences, once every separator is appended.
func (x *Index) Finish() {
	n := len(x.handles)
	if n == 0 {
		return
	}
	tl := x.trailerLen()
	// The prefix is the first and next-to-last separators': LevelDB's
	// and goleveldb's last separator is the last key's short successor
	// ("l" after keys of "k..."), which shared no byte with the others
	// and left every fence of a table of "k..." keys the same, every
	// search a binary search of whole keys.
	first, last := x.Key(0), x.Key(max(n-2, 0))
	first, last = first[:len(first)-tl], last[:len(last)-tl]
	for x.skip < len(first) && x.skip < len(last) && first[x.skip] == last[x.skip] {
		x.skip++
	}
	fences := make([]uint64, n)
	for i := range fences {
		k := x.Key(i)
		u := k[:len(k)-tl]
		if i == n-1 && (len(u) < x.skip || string(u[:x.skip]) != string(first[:x.skip])) {
			// Past every key with the prefix, in either order: the
			// largest fence (one that ties is resolved by whole keys).
			fences[i] = math.MaxUint64
			continue
		}
		fences[i] = x.fence(u)
	}
	x.tree = newFenceTree(fences)
	x.fences = x.tree.fences()
	x.blockSkips = make([]uint16, n)
	for i := 1; i < n; i++ {
		a, b := x.Key(i-1), x.Key(i)
		a, b = a[:len(a)-tl], b[:len(b)-tl]
		c := 0
		for c < len(a) && c < len(b) && c < 1<<16-1 && a[c] == b[c] {
			c++
		}
		x.blockSkips[i] = uint16(c)
	}
}

// fence returns the 8 bytes of user key u after its first skip bytes,
// big-endian, zero-padded, inverted for a reverse order; it keeps the
// order of user keys that share those skip bytes.
func (x *Index) fence(u []byte) uint64 {
	skip := min(x.skip, len(u))
	u = u[skip:]
	var f uint64
	if len(u) >= 8 {
		f = binary.BigEndian.Uint64(u)
	} else {
		var b [8]byte
		copy(b[:], u)
		f = binary.BigEndian.Uint64(b[:])
	}
	if x.reverse {
		return ^f
	}
	return f
}

// Search returns the first block whose separator is at or above target,
// a stored key (an internal key unless the keys are plain): the only
// block that can hold target's successor; Len() if none. It
// binary-searches the fences, then the whole separators among those
// that tie. A target whose user key lacks the separators' common bytes
// compares whole keys throughout.
func (x *Index) Search(target []byte) int {
	lo, hi := 0, len(x.handles)
	if u := target[:len(target)-x.trailerLen()]; len(u) >= x.skip && string(u[:x.skip]) == string(x.keys[:x.skip]) {
		f := x.fence(u)
		lo = x.tree.lowerBound(f)
		hi = lo
		if hi < len(x.fences) && x.fences[hi] > f {
			// f's fence is missing or unique (distinct keys mostly have
			// distinct fences): no whole separator needs comparing.
		} else if hi+1 < len(x.fences) && x.fences[hi+1] > f {
			hi++
		} else {
			for end := len(x.handles); hi < end; { // the first fence > f
				mid := int(uint(hi+end) >> 1)
				if x.fences[mid] <= f {
					hi = mid + 1
				} else {
					end = mid
				}
			}
		}
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.Compare(x.Key(mid), target) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Fence returns the 8 bytes of user key u after its first skip bytes,
// big-endian, zero-padded: the bytewise order of keys sharing those
// bytes, in one integer.
func Fence(u []byte, skip int) uint64 {
	var x Index
	x.skip = skip
	return x.fence(u)
}
