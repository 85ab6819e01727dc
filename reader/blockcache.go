package reader

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/format"
)

// DefaultBlockCacheSize is the default budget, in bytes, of a Reader's
// cache of decoded data blocks.
const DefaultBlockCacheSize = 64 << 20

// blockCache keeps decoded data blocks (snappy-decompressed, or read
// through ReadAt) by block number, within a byte budget, evicting with the
// CLOCK algorithm (Corbató, 1968): a hit sets the block's reference bit;
// the clock hand clears set bits and evicts the first block found clear.
//
// A hit is two atomic loads from the block's slot (a pointer to the
// contents and their length, so no slice header is chased through another
// cache line) and allocates nothing. An evicted block's
// memory is not reused: readers still holding it keep a valid slice, and
// the garbage collector frees it once they are done, so no reference
// counting is needed. Inserting (on a miss, after a read or a
// decompression that costs far more) takes a mutex.
type blockCache struct {
	budget int64
	slots  []cacheSlot // one per data block

	mu   sync.Mutex
	used int64       // bytes of resident blocks
	ring []ringEntry // resident blocks, in clock order
	hand int
}

type ringEntry struct {
	block int32
	size  int64 // bytes charged: the allocation's capacity
}

// cacheSlot holds one block. len is stored before data is published and
// is the same for every copy of a block, so a reader that sees data sees
// the right length.
type cacheSlot struct {
	data atomic.Pointer[byte] // first byte of the contents; nil when not cached
	len  atomic.Int64
	end  atomic.Int64 // end of the entries (restart array offset); -1 if the block is malformed
	ref  atomic.Bool
}

func newBlockCache(blocks int, budget int64) *blockCache {
	return &blockCache{budget: budget, slots: make([]cacheSlot, blocks)}
}

// get returns block i's contents if cached.
func (c *blockCache) get(i int) ([]byte, bool) {
	s := &c.slots[i]
	p := s.data.Load()
	if p == nil {
		return nil, false
	}
	if !s.ref.Load() {
		s.ref.Store(true)
	}
	return unsafe.Slice(p, s.len.Load()), true
}

// getEntries is get, plus the end of the block's entries (the restart
// array's offset), recorded by put; ok is false for a malformed block.
func (c *blockCache) getEntries(i int) (b []byte, end int, ok bool) {
	s := &c.slots[i]
	p := s.data.Load()
	if p == nil {
		return nil, 0, false
	}
	if !s.ref.Load() {
		s.ref.Store(true)
	}
	n, e := s.len.Load(), s.end.Load()
	if e < 0 || e > n {
		return nil, 0, false
	}
	return unsafe.Slice(p, n), int(e), true
}

// put caches b as block i's contents and returns the cached contents,
// which are another goroutine's copy if it got there first. Blocks larger
// than the whole budget, and empty ones, are not cached.
func (c *blockCache) put(i int, b []byte) []byte {
	size := int64(cap(b))
	if size > c.budget || len(b) == 0 {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.slots[i]
	if p := s.data.Load(); p != nil {
		return unsafe.Slice(p, s.len.Load())
	}
	for c.used+size > c.budget && len(c.ring) > 0 {
		c.evictOne()
	}
	end, err := format.EntriesEnd(b, 0)
	if err != nil {
		end = -1
	}
	s.len.Store(int64(len(b)))
	s.end.Store(int64(end))
	s.data.Store(&b[0])
	s.ref.Store(false)
	c.ring = append(c.ring, ringEntry{int32(i), size})
	c.used += size
	return b
}

// evictOne advances the clock hand to a block whose reference bit is clear
// and evicts it. Called with mu held and the ring non-empty.
func (c *blockCache) evictOne() {
	for {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		e := c.ring[c.hand]
		s := &c.slots[e.block]
		if s.ref.Load() {
			s.ref.Store(false)
			c.hand++
			continue
		}
		c.used -= e.size
		s.data.Store(nil)
		last := len(c.ring) - 1
		c.ring[c.hand] = c.ring[last]
		c.ring = c.ring[:last]
		return
	}
}
