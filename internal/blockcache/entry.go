package blockcache

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// entry is the state of one cached block. refs is 0 while the entry is
// free; a listed entry holds 1 for the cache plus 1 per pin. The other
// fields are written under the shard's lock while refs is 0 (or by the
// pinning filler before publication), and read by lock-free lookups only
// after a successful pin, which orders them after the writes. An entry
// is 64 bytes, a cache line (the array of a cache over 1 MiB starts on a
// page): at 56, most entries straddled two lines, and in a cache whose
// entries outgrow the CPU's caches a lookup or an eviction paid two misses.
//
// An entry holds no Go pointers: the entries lie in the cache's mapping,
// after the budget's memory, where the garbage collector neither scans
// them nor would see a pointer there; what an entry points to (its Table,
// Hold's memory) is in its shard's owners, on the Go heap.
type entry struct {
	refs  atomic.Int32
	freq  atomic.Uint32 // S3-FIFO access count, 0 to 3
	chunk uint32        // first chunk, an index into Cache.mem in chunks
	n     uint32        // bytes of block
	aux   uint32        // the caller's word, set by Publish
	slot  int32         // the block's slot in its table
	idx   int32         // this entry's index in Cache.entries
	prev  int32         // queue links, entry indices; -1 at the ends
	next  int32
	cache uint32 // the cache's number in caches, for Handle.Release
	queue uint8
	shard uint8
	_     [22]byte
}

// owner is what an entry points to, kept apart from it on the Go heap
// (shard.owners), written and read under the shard's lock.
type owner struct {
	table *Table   // the Table the block belongs to; nil while the entry is free
	held  *heldMem // Hold's memory, outside mem; nil for any other entry
}

// caches numbers the Caches, so that an entry, which holds no pointers,
// names its Cache for the Release of a Handle that drops its last
// reference (an entry a Table's Close detached while pinned, or one never
// published): the one call that needs the Cache and has no Table at
// hand. The pointers are weak, so that a Cache dropped without Close is
// still collected; a Release then has nothing to free.
var caches struct {
	next atomic.Uint32
	m    sync.Map // uint32 -> weak.Pointer[Cache]
}

// register numbers c in caches.
func register(c *Cache) {
	c.num = caches.next.Add(1)
	caches.m.Store(c.num, weak.Make(c))
	runtime.AddCleanup(c, unregister, c.num)
}

// unregister drops number n from caches once its Cache is garbage.
func unregister(n uint32) { caches.m.Delete(n) }

// cacheOf returns the Cache numbered n, nil if it is garbage.
func cacheOf(n uint32) *Cache {
	wp, ok := caches.m.Load(n)
	if !ok {
		return nil
	}
	return wp.(weak.Pointer[Cache]).Value()
}

// queue values.
const (
	qNone     = iota // free, or reserved and not yet published
	qSmall           // S3-FIFO's small queue
	qMain            // S3-FIFO's main queue
	qDetached        // dropped by the cache while pinned: freed on the last Release
	qHeld            // set aside by Hold: never listed, freed on its Release
)

// Slot words of Table.slots: 0 when empty; for a cached block, the entry
// index + 1 in bits 32-62 and its first chunk in bits 0-31; for a ghost
// (a block the small queue evicted without a second use), ghostBit and the
// shard's eviction clock at the time.
const ghostBit = 1 << 63

func liveWord(e int32, chunk uint32) uint64 { return uint64(e+1)<<32 | uint64(chunk) }

// Handle pins a cached block, or holds a block the cache could not take.
// The zero Handle holds nothing. Handles are values: copying one does not
// add a pin, and each pin must be released exactly once.
type Handle struct {
	e *entry
	b []byte
}

// Bytes returns the block: n bytes as given to Reserve. They stay valid
// until Release.
func (h Handle) Bytes() []byte { return h.b }

// Aux returns the word given to Publish.
func (h Handle) Aux() uint32 {
	if h.e == nil {
		return 0
	}
	return h.e.aux
}

// Cached reports whether h pins a block in the cache.
func (h Handle) Cached() bool { return h.e != nil }

// Release drops the pin. The block's bytes must not be used afterwards.
// Releasing the zero Handle, or releasing twice through the same *Handle,
// does nothing.
func (h *Handle) Release() {
	e := h.e
	if e == nil {
		return
	}
	h.e, h.b = nil, nil
	if e.refs.Add(-1) == 0 {
		if c := cacheOf(e.cache); c != nil {
			c.shards[e.shard].freeUnlisted(e)
		}
	}
}
