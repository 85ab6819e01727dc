package blockcache

import "sync/atomic"

// entry is the state of one cached block. refs is 0 while the entry is
// free; a listed entry holds 1 for the cache plus 1 per pin. The other
// fields are written under the shard's lock while refs is 0 (or by the
// pinning filler before publication), and read by lock-free lookups only
// after a successful pin, which orders them after the writes. An entry
// is 64 bytes, a cache line (the array of a cache over 1 MiB starts on a
// page): at 56, most entries straddled two lines, and in a cache whose
// entries outgrow the CPU's caches a lookup or an eviction paid two misses.
type entry struct {
	refs  atomic.Int32
	freq  atomic.Uint32 // S3-FIFO access count, 0 to 3
	chunk uint32        // first chunk, an index into Cache.mem in chunks
	n     uint32        // bytes of block
	aux   uint32        // the caller's word, set by Publish
	table *Table
	slot  int32 // the block's slot in table
	idx   int32 // this entry's index in Cache.entries
	prev  int32 // queue links, entry indices; -1 at the ends
	next  int32
	queue uint8
	shard uint8
	_     [6]byte
	held  *heldMem // Hold's memory, outside mem; nil for any other entry
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
		e.table.c.shards[e.shard].freeUnlisted(e)
	}
}
