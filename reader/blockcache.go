package reader

import (
	"sync"
	"sync/atomic"
)

// DefaultBlockCacheSize is the default budget, in bytes, of a Reader's
// cache of decoded data blocks.
const DefaultBlockCacheSize = 64 << 20

// blockCache keeps decoded data blocks (snappy-decompressed, or read
// through ReadAt) by block number, within a byte budget, evicting with the
// CLOCK algorithm (Corbató, 1968): a hit sets the block's reference bit;
// the clock hand clears set bits and evicts the first block found clear.
//
// A hit is one atomic load and allocates nothing. An evicted block's
// memory is not reused: readers still holding it keep a valid slice, and
// the garbage collector frees it once they are done, so no reference
// counting is needed. Inserting (on a miss, after a read or a
// decompression that costs far more) takes a mutex.
type blockCache struct {
	budget int64
	slots  []cacheSlot // one per data block

	mu   sync.Mutex
	used int64   // bytes of resident blocks
	ring []int32 // resident block numbers, in clock order
	hand int
}

type cacheSlot struct {
	block atomic.Pointer[[]byte]
	ref   atomic.Bool
}

func newBlockCache(blocks int, budget int64) *blockCache {
	return &blockCache{budget: budget, slots: make([]cacheSlot, blocks)}
}

// get returns block i's contents if cached.
func (c *blockCache) get(i int) ([]byte, bool) {
	s := &c.slots[i]
	p := s.block.Load()
	if p == nil {
		return nil, false
	}
	if !s.ref.Load() {
		s.ref.Store(true)
	}
	return *p, true
}

// put caches b as block i's contents and returns the cached contents,
// which are another goroutine's copy if it got there first. Blocks larger
// than the whole budget are not cached.
func (c *blockCache) put(i int, b []byte) []byte {
	size := int64(cap(b))
	if size > c.budget {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.slots[i]
	if p := s.block.Load(); p != nil {
		return *p
	}
	for c.used+size > c.budget && len(c.ring) > 0 {
		c.evictOne()
	}
	s.block.Store(&b)
	s.ref.Store(false)
	c.ring = append(c.ring, int32(i))
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
		i := c.ring[c.hand]
		s := &c.slots[i]
		if s.ref.Load() {
			s.ref.Store(false)
			c.hand++
			continue
		}
		c.used -= int64(cap(*s.block.Load()))
		s.block.Store(nil)
		last := len(c.ring) - 1
		c.ring[c.hand] = c.ring[last]
		c.ring = c.ring[:last]
		return
	}
}
