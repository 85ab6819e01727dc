package blockcache

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/internal/prefetch"
)

// Table is one user's view of a Cache: a fixed array of numbered block
// slots. Lookups go through the slots, so a hit costs an array load and a
// compare-and-swap, with no hashing and no lock. Safe for concurrent use.
type Table struct {
	c      *Cache
	id     uint64
	slots  []atomic.Uint64
	closed atomic.Bool
	user   *tableUser

	chargeMu sync.Mutex
	charges  []Handle // set aside by Charge, released by Close
}

// Cache returns the Cache t belongs to.
func (t *Table) Cache() *Cache { return t.c }

// Len returns the number of slots.
func (t *Table) Len() int { return len(t.slots) }

// GetAt is Get for a caller about to read the block's bytes from offset
// off: it starts loading their first cache lines before it pins the
// block, so that the two memory accesses overlap rather than follow one
// another. off is only a hint; an offset past the block prefetches
// nothing useful but does no harm.
func (t *Table) GetAt(i, off int) (Handle, bool) {
	if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 && off >= 0 {
		if p := int(uint32(w))*ChunkSize + off; p < len(t.c.mem) {
			prefetch.Bytes(t.c.mem[p:], 192)
		}
	}
	return t.Get(i)
}

// GetAtStart is GetAt for a caller that will also read the block's first
// bytes (a version 4 table's entry shares its key with the block's first
// entry): it asks for their cache line too.
func (t *Table) GetAtStart(i, off int) (Handle, bool) {
	if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 && off >= 0 {
		base := int(uint32(w)) * ChunkSize
		if p := base + off; p < len(t.c.mem) {
			prefetch.Bytes(t.c.mem[p:], 192)
			prefetch.Bytes(t.c.mem[base:], 64)
		}
	}
	return t.Get(i)
}

// Window returns the cache memory where block i lies, its first n bytes,
// if it is cached; nil if not. The block is not pinned: it may be evicted
// and its memory reused at any time, so the bytes must never be read,
// only handed to package prefetch, which never faults. A forward scan
// asks for the next block's lines a few at a time while it reads the
// current one, as it cannot know a cached block's address otherwise:
// blocks decoded by point lookups lie scattered in the cache's memory,
// where the CPU's own prefetcher does not follow. It also starts loading
// the block's entry, which the Get that pins the block reads.
func (t *Table) Window(i, n int) []byte {
	if i < 0 || i >= len(t.slots) {
		return nil
	}
	w := t.slots[i].Load()
	if w == 0 || w&ghostBit != 0 {
		return nil
	}
	if e := int(w>>32) - 1; e < len(t.c.entries) {
		prefetch.Line(unsafe.Pointer(&t.c.entries[e]))
	}
	p := int(uint32(w)) * ChunkSize
	if p >= len(t.c.mem) {
		return nil
	}
	return t.c.mem[p:min(p+n, len(t.c.mem))]
}

// Get returns block i pinned, if cached. Release the Handle when done.
// i must be in [0, Len()).
func (t *Table) Get(i int) (Handle, bool) {
	w := t.slots[i].Load()
	if w == 0 || w&ghostBit != 0 {
		return Handle{}, false
	}
	c := t.c
	e := &c.entries[int32(w>>32)-1]
	for {
		r := e.refs.Load()
		if r <= 0 {
			return Handle{}, false
		}
		if e.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	// The slot was read before the pin: the entry may since have been
	// evicted and reused, even for block i of t again, in the same chunks,
	// by a Reserve whose caller is still filling it. Once pinned, the
	// entry cannot be freed, so if the slot still holds w, the entry is
	// the block published there.
	if t.slots[i].Load() != w {
		h := Handle{e: e}
		h.Release()
		return Handle{}, false
	}
	if f := e.freq.Load(); f < 3 {
		e.freq.CompareAndSwap(f, f+1) // a lost race loses one count, never exceeds 3
	}
	c.shards[e.shard].hits.Add(1)
	off := uintptr(e.chunk) * ChunkSize
	return Handle{e: e, b: c.mem[off : off+uintptr(e.n) : off+uintptr(e.n)]}, true
}

// Reserve counts a miss of block i and sets aside n bytes for it, pinned
// and not yet visible to Get. Fill Bytes, then Publish the Handle, or
// Release it to give the bytes back. It reports false, and the caller
// should use memory of its own, when n is 0 or larger than a shard, when
// t is closed, or when every block that could make room is pinned.
func (t *Table) Reserve(i, n int) (Handle, bool) { return t.reserve(i, n, false) }

// ReserveAdmitted is Reserve for a caller that can as well use memory of
// its own, at the cost of the same work again on the block's next miss
// (a decompression of a mapped block, not a read): when the block would
// take the place of others, it admits the block only if it missed
// recently before. A block missed for the first time is then not
// admitted: its slot remembers it as a ghost, as if it had passed through
// the small queue, and a miss within the ghost window (as many misses
// and small-queue evictions as the main queue holds blocks) is admitted,
// straight to the main queue. One-off lookups of a table many times the
// cache thus neither pay for an insertion and an eviction nor churn the
// blocks lookups keep using: TinyLFU's doorkeeper (Gil Einziger, Roy
// Friedman, Ben Manes: "TinyLFU: A Highly Efficient Cache Admission
// Policy", ACM TOS 2017) on S3-FIFO's ghosts. While the shard has room,
// a free entry and a run of free chunks for the block, every block is
// admitted; when either is missing, as the entries are in a shard of
// blocks smaller than 2 KiB on average however many chunks are free,
// admitting the block would evict.
func (t *Table) ReserveAdmitted(i, n int) (Handle, bool) { return t.reserve(i, n, true) }

func (t *Table) reserve(i, n int, doorkeeper bool) (Handle, bool) {
	s := t.c.shardOf(t.id, i)
	s.misses.Add(1)
	if n <= 0 || n > s.nchunks*ChunkSize || t.closed.Load() {
		return Handle{}, false
	}
	k := (n + ChunkSize - 1) / ChunkSize
	s.mu.Lock()
	if t.closed.Load() { // again under the lock: see hold
		s.mu.Unlock()
		return Handle{}, false
	}
	if doorkeeper && !s.hasRoom(k) {
		w := t.slots[i].Load()
		if w&ghostBit == 0 || s.clock-uint32(w) > uint32(s.main.n) {
			if w == 0 || w&ghostBit != 0 {
				s.clock++
				t.slots[i].Store(ghostBit | uint64(s.clock))
			}
			s.refused++
			s.mu.Unlock()
			return Handle{}, false
		}
	}
	e, ok := s.alloc(k)
	if !ok {
		s.mu.Unlock()
		return Handle{}, false
	}
	e.slot, e.n, e.aux, e.queue = int32(i), uint32(n), 0, qNone
	s.owner(e).table = t
	e.freq.Store(0)
	e.refs.Store(1) // the caller's pin
	limit := s.limit
	s.mu.Unlock()
	off := uintptr(e.chunk) * ChunkSize
	if pf := t.c.prefault; pf != nil {
		// Never the set-aside region's pages: they are to take no memory.
		pf.reserved(int(off), n, s.base*ChunkSize, (s.base+limit)*ChunkSize)
	}
	return Handle{e: e, b: t.c.mem[off : off+uintptr(n) : off+uintptr(n)]}, true
}

// Publish makes the block of h, a Handle from Reserve(i, ...) filled by the
// caller, visible to Get as block i, with aux as its Aux word. The Handle
// stays pinned. If another caller published block i first, or t is
// closed, the block stays private to h and is freed on its Release.
func (t *Table) Publish(i int, h Handle, aux uint32) {
	e := h.e
	if e == nil || e.cache != t.c.num || int(e.shard) >= len(t.c.shards) {
		return // not a Handle of t's cache
	}
	s := &t.c.shards[e.shard]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner(e).table != t || e.slot != int32(i) || e.queue != qNone {
		return // not a Handle from t.Reserve(i, ...), or published already
	}
	e.aux = aux
	old := t.slots[i].Load()
	if t.closed.Load() || (old != 0 && old&ghostBit == 0) {
		e.queue = qDetached
		return
	}
	q := &s.small
	if old&ghostBit != 0 && s.clock-uint32(old) <= uint32(s.main.n) {
		q = &s.main // S3-FIFO: a ghost comes back to the main queue
	}
	s.push(q, e)
	e.refs.Add(1) // the cache's reference
	t.slots[i].Store(liveWord(e.idx, e.chunk))
	// Close does not take the lock for a slot it finds empty or a ghost:
	// if it set closed after the check above, it may have passed slot i
	// before the Store. Closed, seen after the Store, means it did; drop
	// the block as Close would have.
	if t.closed.Load() {
		s.unlink(e)
		t.slots[i].Store(0)
		e.queue = qDetached
		e.refs.Add(-1) // never the last: h's pin remains
	}
}

// Close drops every block of t from the cache. Pinned blocks are freed
// when their last Handle is released. Later Reserves report false. Close
// is idempotent; it does not wait for Handles to be released.
func (t *Table) Close() {
	if t.closed.Swap(true) {
		return
	}
	for i := range t.slots {
		w := t.slots[i].Load()
		if w&ghostBit != 0 {
			t.slots[i].Store(0)
			continue
		}
		if w == 0 {
			continue
		}
		s := t.c.shardOf(t.id, i)
		s.mu.Lock()
		if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 {
			e := &t.c.entries[int32(w>>32)-1]
			s.unlink(e)
			t.slots[i].Store(0)
			e.queue = qDetached
			if e.refs.Add(-1) == 0 {
				s.release(e)
			}
		}
		s.mu.Unlock()
	}
	t.chargeMu.Lock()
	for i := range t.charges {
		t.charges[i].Release()
	}
	t.charges = nil
	t.chargeMu.Unlock()
	t.c.mu.Lock()
	if t.user.open--; t.user.open == 0 {
		t.c.tables--
	}
	t.c.mu.Unlock()
}
