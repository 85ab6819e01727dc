package reader

import (
	"math"
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
// Per block it keeps three arrays, not one array of structs, so the part a
// hit reads first is small enough to stay in cache: an 8-byte pointer to
// the contents (224 KiB for the 28k blocks of a 1M-entry table, against
// 900 KiB for 32-byte slots), the contents' length and end of entries
// packed in 8 bytes, loaded in parallel with the pointer, and a reference
// byte. A hit allocates nothing and chases no slice header. An evicted
// block's memory is not reused: readers still holding it keep a valid
// slice, and the garbage collector frees it once they are done, so no
// reference counting is needed. Inserting (on a miss, after a read or a
// decompression that costs far more) takes a mutex.
type blockCache struct {
	budget int64
	data   []atomic.Pointer[byte] // first byte of block i's contents; nil when not cached
	meta   []atomic.Uint64        // len<<32 | end of entries (or noEntries), set before data
	ref    []atomic.Bool          // CLOCK reference bits

	mu   sync.Mutex
	used int64       // bytes of resident blocks
	ring []ringEntry // resident blocks, in clock order
	hand int
}

// noEntries in a block's meta marks contents whose restart array is
// malformed; lookups then take the slow path, which reports it.
const noEntries = math.MaxUint32

type ringEntry struct {
	block int32
	size  int64 // bytes charged: the allocation's capacity
}

func newBlockCache(blocks int, budget int64) *blockCache {
	return &blockCache{
		budget: budget,
		data:   make([]atomic.Pointer[byte], blocks),
		meta:   make([]atomic.Uint64, blocks),
		ref:    make([]atomic.Bool, blocks),
	}
}

// blocks returns the number of block slots.
func (c *blockCache) blocks() int { return len(c.data) }

// get returns block i's contents if cached. The meta of block i is the
// same for every copy of the block and is stored before the pointer is
// published, so a reader that sees the pointer sees the right length.
func (c *blockCache) get(i int) ([]byte, bool) {
	p := c.data[i].Load()
	if p == nil {
		return nil, false
	}
	if r := &c.ref[i]; !r.Load() {
		r.Store(true)
	}
	return unsafe.Slice(p, c.meta[i].Load()>>32), true
}

// getEntries is get, plus the end of the block's entries (the restart
// array's offset), recorded by put; ok is false for a malformed block.
func (c *blockCache) getEntries(i int) (b []byte, end int, ok bool) {
	p := c.data[i].Load()
	m := c.meta[i].Load()
	if p == nil {
		return nil, 0, false
	}
	if r := &c.ref[i]; !r.Load() {
		r.Store(true)
	}
	n, e := m>>32, m&math.MaxUint32
	if e == noEntries || e > n {
		return unsafe.Slice(p, n), 0, false
	}
	return unsafe.Slice(p, n), int(e), true
}

// put caches b as block i's contents and returns the cached contents,
// which are another goroutine's copy if it got there first. Blocks larger
// than the whole budget or than 4 GiB, and empty ones, are not cached.
func (c *blockCache) put(i int, b []byte) []byte {
	size := int64(cap(b))
	if size > c.budget || len(b) == 0 || uint64(len(b)) >= noEntries {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.data[i].Load(); p != nil {
		return unsafe.Slice(p, c.meta[i].Load()>>32)
	}
	for c.used+size > c.budget && len(c.ring) > 0 {
		c.evictOne()
	}
	end := uint64(noEntries)
	if e, err := format.EntriesEnd(b, 0); err == nil {
		end = uint64(e)
	}
	c.meta[i].Store(uint64(len(b))<<32 | end)
	c.data[i].Store(&b[0])
	c.ref[i].Store(false)
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
		if c.ref[e.block].Load() {
			c.ref[e.block].Store(false)
			c.hand++
			continue
		}
		c.used -= e.size
		c.data[e.block].Store(nil)
		last := len(c.ring) - 1
		c.ring[c.hand] = c.ring[last]
		c.ring = c.ring[:last]
		return
	}
}

// clear evicts every block; readers holding a block keep a valid slice.
func (c *blockCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.ring {
		c.data[e.block].Store(nil)
	}
	c.ring, c.used, c.hand = nil, 0, 0
}

// full reports whether caching n more bytes would evict a block.
func (c *blockCache) full(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used+n > c.budget
}
