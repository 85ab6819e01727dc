package reader

import (
	"sync"
	"sync/atomic"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
)

// arena keeps the decoded data blocks of a compressed Version2 table in
// one anonymous memory mapping, each at its offset in the concatenation of
// all of them (format.HashIndex.DecodedStart). The table's slots hold
// entries' offsets in that concatenation, so Get loads an entry straight
// from its slot, as it does from the mapping of an uncompressed table,
// instead of first looking the block up in the block cache (one more
// cache miss: the pointer array of 224 KiB at 1M entries did not stay in
// cache).
//
// A reader uses an arena when the decoded size fits its BlockCacheSize;
// the arena then takes the place of the block cache, for iterators too,
// once the first Get has set it up. Blocks are decoded into it on first
// use and stay until Close; pages of blocks never used are never touched.
type arena struct {
	mem   []byte          // the decoded blocks, back to back
	state []atomic.Uint32 // per block: 0 until decoded, then arenaFilled | end of entries
	fill  [64]sync.Mutex  // serialises the decoding of block i under fill[i%64]
}

const (
	arenaFilled  = 1 << 31
	arenaEndMask = arenaFilled - 1
)

// newArena maps an arena for x's decoded blocks, or returns nil if the
// platform cannot.
func newArena(x *format.HashIndex) *arena {
	mem := mmapAnon(int(x.DecodedStart(x.NumBlocks())))
	if mem == nil {
		return nil
	}
	return &arena{mem: mem, state: make([]atomic.Uint32, x.NumBlocks())}
}

// arenaUsable reports whether a table's decoded blocks may go in an
// arena: the hash index holds offsets in them, they fit the cache budget,
// and every block's end of entries fits the state word.
func (r *Reader) arenaUsable() bool {
	x := &r.hidx
	if !x.DecodedOffsets() || r.cacheSize <= 0 || x.NumBlocks() == 0 {
		return false
	}
	total := x.DecodedStart(x.NumBlocks())
	return total <= uint64(r.cacheSize) && int64(int(total)) == int64(total) && r.props.MaxBlockSize < arenaFilled
}

// arenaBlock returns data block i's decoded contents from the arena,
// decoding the block into it on first use.
func (r *Reader) arenaBlock(s *scratch, a *arena, i int) ([]byte, error) {
	start, next := r.hidx.DecodedStart(i), r.hidx.DecodedStart(i+1)
	if a.state[i].Load() == 0 {
		if err := r.fillArena(s, a, i); err != nil {
			return nil, err
		}
	}
	return a.mem[start:next:next], nil
}

// arenaEntries returns the entries (up to the restart array) of data
// block i in the arena, decoding the block on first use. The slice runs
// from the block's start; callers index it with offsets made relative.
func (r *Reader) arenaEntries(a *arena, i int) (start, end uint64, err error) {
	st := a.state[i].Load()
	if st == 0 {
		s := r.getScratch()
		err := r.fillArena(s, a, i)
		r.scratch.Put(s)
		if err != nil {
			return 0, 0, err
		}
		st = a.state[i].Load()
	}
	start = r.hidx.DecodedStart(i)
	return start, start + uint64(st&arenaEndMask), nil
}

// fillArena reads data block i, checks its checksum, and decodes it into
// its place in the arena, which must be exactly its decoded size.
func (r *Reader) fillArena(s *scratch, a *arena, i int) error {
	mu := &a.fill[i%len(a.fill)]
	mu.Lock()
	defer mu.Unlock()
	if a.state[i].Load() != 0 {
		return nil
	}
	h := r.hidx.BlockHandle(i)
	stored, typ, err := r.checkedBlock(s, i, h)
	if err != nil {
		return err
	}
	start, next := r.hidx.DecodedStart(i), r.hidx.DecodedStart(i+1)
	dst := a.mem[start:next:next]
	switch typ {
	case format.BlockTypeRaw:
		if len(stored) != len(dst) {
			return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "data block %d holds %d bytes, the hash index says %d", i, len(stored), len(dst))
		}
		copy(dst, stored)
	case format.BlockTypeSnappy:
		n, err := snappy.DecodedLen(stored)
		// As format.DecodeBlock on the block cache's path: the
		// properties bound what a block may decode to.
		if err == nil && n > int(r.props.MaxBlockSize) {
			return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "snappy block claims %d decoded bytes (limit %d)", n, r.props.MaxBlockSize)
		}
		if err != nil {
			return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "bad snappy length header: %v", err)
		}
		if n != len(dst) {
			return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "data block %d decodes to %d bytes, the hash index says %d", i, n, len(dst))
		}
		if out, err := snappy.Decode(dst, stored); err != nil || len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "snappy block does not decode: %v", err)
		}
	default:
		return format.Corruptf(format.SectionDataBlock, int64(h.End())-format.BlockTrailerLen, "unknown block type %d", typ)
	}
	end, err := format.EntriesEnd(dst, int64(h.Offset))
	if err != nil {
		return err
	}
	a.state[i].Store(arenaFilled | uint32(end))
	return nil
}
