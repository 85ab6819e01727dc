package blockcache

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/internal/prefetch"
)

// shard owns a contiguous part of the cache's memory and a fixed range of
// entries, under one lock. Lookups (Table.Get) never take the lock.
type shard struct {
	mu       sync.Mutex
	c        *Cache
	index    uint8
	base     int      // first chunk of the shard, in Cache.mem chunks
	nchunks  int      // chunks in the shard
	bits     []uint64 // chunk bitmap, 1 = held; bits past nchunks are set
	runs     runTree  // the free runs of bits, up to date but for words dirtyLo to dirtyHi
	dirtyLo  int      // words changed since runs was last brought up to date; dirtyLo > dirtyHi when none
	dirtyHi  int
	used     int     // chunks held: by blocks, and set aside (aside)
	limit    int     // blocks lie in chunks [0, limit); [limit, nchunks) is the set-aside region (see setAside), its bits set
	aside    int     // chunks of the region Hold and Charge have set aside; the rest of it is slack
	cursor   int     // where the next search for free chunks starts
	free     int32   // released entries, linked through next; -1 when none
	first    int32   // the shard's first entry
	fresh    int32   // the shard's next entry never yet used: entries fresh to freshEnd-1 are free too
	freshEnd int32   // the end of the shard's entries
	owners   []owner // what entries first to fresh-1 point to, by index - first
	small    fifo
	main     fifo
	clock    uint32 // evictions from the small queue and blocks refused by ReserveAdmitted: the ghosts' clock
	refused  int64  // blocks ReserveAdmitted did not admit

	evictions int64
	_         [64]byte // keep the counters below off the lock's cache line
	hits      atomic.Int64
	misses    atomic.Int64
	_         [48]byte
}

// fifo is an intrusive queue of entries: push at the head, evict at the tail.
type fifo struct {
	head, tail int32
	n          int // entries
	chunks     int // their chunks
}

// init sets up shard index of c, its bitmap and run tree taken from meta
// (zeroed memory, or nil: the Go heap).
func (s *shard) init(c *Cache, index, base, nchunks int, firstEntry int32, entries int, meta *arena) {
	s.c, s.index, s.base, s.nchunks = c, uint8(index), base, nchunks
	s.bits = carve[uint64](meta, (nchunks+63)/64)
	if r := nchunks % 64; r != 0 {
		s.bits[len(s.bits)-1] = ^uint64(0) << r
	}
	s.runs = newRunTree(s.bits, meta)
	s.dirtyLo, s.dirtyHi = 0, -1
	s.limit = nchunks
	s.small = fifo{head: -1, tail: -1}
	s.main = fifo{head: -1, tail: -1}
	// The entries are handed out in index order as first needed (take),
	// not linked up here: see newEntries.
	s.free = -1
	s.first, s.fresh, s.freshEnd = firstEntry, firstEntry, firstEntry+int32(entries)
}

// owner returns what e, one of the shard's entries handed out, points to.
// Called with mu held.
func (s *shard) owner(e *entry) *owner { return &s.owners[e.idx-s.first] }

// hasEntry reports whether an entry is free, released or never used.
func (s *shard) hasEntry() bool { return s.free >= 0 || s.fresh < s.freshEnd }

// alloc finds k free chunks and a free entry, evicting blocks as needed,
// and returns the entry with its chunks held. Called with mu held. Free
// chunks anywhere in the shard are used before anything is evicted; each
// search costs O(log chunks) (runTree).
func (s *shard) alloc(k int) (*entry, bool) {
	if s.hasEntry() {
		if at := s.findRun(k); at >= 0 {
			return s.take(at, k), true
		}
	}
	// Each eviction frees one block and one entry; bound the work by the
	// blocks there are. Pinned blocks may keep the freed chunks split into
	// runs too short for k.
	for budget := s.small.n + s.main.n; budget > 0; budget-- {
		at, n, ok := s.evictOne()
		if !ok {
			break
		}
		if lo, hi := s.runAround(at, n, k); hi-lo >= k {
			return s.take(lo, k), true
		}
		if at := s.findRun(k); at >= 0 {
			return s.take(at, k), true
		}
	}
	return nil, false
}

// hasRoom reports whether alloc(k) would find its chunks and its entry
// free, evicting nothing. Called with mu held. The entries (one per
// entryBytes of budget) run out before the chunks do when blocks are
// smaller than entryBytes on average, and free chunks may lie in runs
// shorter than k: either way a block then takes the place of others.
func (s *shard) hasRoom(k int) bool {
	return s.hasEntry() && s.findRun(k) >= 0
}

// take holds chunks [at, at+k) (shard-local) for a free entry: a
// released one first, else the next never used (hasEntry).
func (s *shard) take(at, k int) *entry {
	s.setBits(at, k, true)
	s.used += k
	s.cursor = at + k
	e := s.newEntry()
	e.chunk = uint32(s.base + at)
	return e
}

// newEntry hands out a free entry, a released one first, else the next
// never used (hasEntry), unlinked. Called with mu held.
func (s *shard) newEntry() *entry {
	var e *entry
	if s.free >= 0 {
		e = &s.c.entries[s.free]
		s.free = e.next
		if s.free >= 0 { // the next take's entry, freed maybe long ago
			prefetch.Line(unsafe.Pointer(&s.c.entries[s.free]))
		}
	} else {
		// Never used since New: its memory may hold anything (newEntries).
		// Of the fields take and its callers do not set, Get reads refs
		// once the entry is named by a slot, after its caller set it.
		e = &s.c.entries[s.fresh]
		e.idx, e.shard, e.cache, e.queue = s.fresh, s.index, s.c.num, qNone
		e.refs.Store(0)
		s.owners = append(s.owners, owner{})
		s.fresh++
	}
	e.prev, e.next = -1, -1
	return e
}

// evictOne evicts one block by S3-FIFO and returns its shard-local chunks;
// false when every block is pinned. Called with mu held.
func (s *shard) evictOne() (at, n int, ok bool) {
	// A block is looked at most 5 times: up to 3 trips round the main
	// queue, a move from small to main, and once more to evict it.
	// smallPinned counts the pinned blocks seen in the small queue (the
	// others leave it when seen), mainPinned the pinned blocks seen in a
	// row in the main queue: once a queue has shown nothing but pinned
	// blocks, evict from the other one, whatever its size.
	smallPinned, mainPinned := 0, 0
	for tries := 5*(s.small.n+s.main.n) + 1; tries > 0; tries-- {
		fromSmall := s.small.n > smallPinned
		fromMain := s.main.n > mainPinned
		if fromSmall && (s.small.chunks*10 >= s.nchunks || !fromMain) {
			e := &s.c.entries[s.small.tail]
			s.prefetchPrev(e)
			s.unlink(e)
			if e.freq.Load() > 0 {
				e.freq.Store(0)
				s.push(&s.main, e)
				continue
			}
			if !e.refs.CompareAndSwap(1, 0) { // pinned
				s.push(&s.small, e)
				smallPinned++
				continue
			}
			s.clock++
			s.owner(e).table.slots[e.slot].Store(ghostBit | uint64(s.clock))
			s.evictions++
			at, n = s.release(e)
			s.prefetchVictims()
			return at, n, true
		}
		if !fromMain {
			return 0, 0, false
		}
		e := &s.c.entries[s.main.tail]
		s.prefetchPrev(e)
		s.unlink(e)
		if f := e.freq.Load(); f > 0 {
			e.freq.Store(f - 1)
			s.push(&s.main, e)
			mainPinned = 0
			continue
		}
		if !e.refs.CompareAndSwap(1, 0) { // pinned
			s.push(&s.main, e)
			mainPinned++
			continue
		}
		s.owner(e).table.slots[e.slot].Store(0)
		s.evictions++
		at, n = s.release(e)
		s.prefetchVictims()
		return at, n, true
	}
	return 0, 0, false
}

// prefetchPrev starts loading the entry queued before e, the next to be
// looked at once e leaves the tail, while e is dealt with.
func (s *shard) prefetchPrev(e *entry) {
	if e.prev >= 0 {
		prefetch.Line(unsafe.Pointer(&s.c.entries[e.prev]))
		if o := int(e.prev - s.first); o >= 0 && o < len(s.owners) {
			prefetch.Line(unsafe.Pointer(&s.owners[o])) // its Table, which prefetchVictim and evictOne read
		}
	}
}

// prefetchVictims starts loading what the next evictions will touch:
// for the tail of each queue, its slot, bitmap word and run tree
// summaries, and the entry queued before it. In a large cache each is a
// miss to memory; asked for now, they arrive while the caller fills its
// block and makes its next lookup, rather than one after another inside
// the next eviction. Which queue evicts next depends on the sizes of
// blocks yet to come, so both are prepared. The tails' own entries were
// asked for by the eviction before (prefetchPrev).
func (s *shard) prefetchVictims() {
	s.prefetchVictim(s.small.tail)
	s.prefetchVictim(s.main.tail)
}

func (s *shard) prefetchVictim(tail int32) {
	if tail < 0 {
		return
	}
	e := &s.c.entries[tail]
	s.prefetchPrev(e)
	if t := s.owner(e).table; t != nil && e.slot >= 0 && int(e.slot) < len(t.slots) {
		prefetch.Line(unsafe.Pointer(&t.slots[e.slot]))
	}
	if w := (int(e.chunk) - s.base) >> 6; w >= 0 && w < len(s.bits) {
		prefetch.Line(unsafe.Pointer(&s.bits[w]))
		prefetch.Line(unsafe.Pointer(&s.runs.leaves[w]))
		if len(s.runs.levels) > 1 {
			prefetch.Line(unsafe.Pointer(&s.runs.levels[0][w/fanout]))
		}
	}
}

// freeUnlisted frees an entry whose last reference was just dropped
// outside the lock: one Close detached, or one never published.
func (s *shard) freeUnlisted(e *entry) {
	s.mu.Lock()
	s.release(e)
	s.mu.Unlock()
}

// release returns e's chunks and e itself to the free pools, poisoning the
// chunks in debug builds, and reports the chunks, shard-local.
func (s *shard) release(e *entry) (at, n int) {
	at = int(e.chunk) - s.base
	n = (int(e.n) + ChunkSize - 1) / ChunkSize
	o := s.owner(e)
	if e.queue == qHeld {
		s.c.held.Add(-int64(n * ChunkSize))
		if hm := o.held; hm != nil {
			// The holder may still read it (racing its own Close): its
			// pages go, the mapping stays until its Table is garbage.
			o.held = nil
			dropHeld(hm.mem)
		}
		// Its chunks are the region's, not a place in mem.
		s.aside -= n
		s.used -= n
		s.shrinkAside()
		o.table, e.queue = nil, qNone
		e.next = s.free
		s.free = e.idx
		return 0, 0
	}
	if poison {
		mem := s.c.mem[int(e.chunk)*ChunkSize : (int(e.chunk)+n)*ChunkSize]
		for i := range mem {
			mem[i] = PoisonByte
		}
	}
	s.setBits(at, n, false)
	s.used -= n
	// The next search for free chunks starts here: when the shard is full,
	// the chunks just freed are usually the ones the next block takes.
	s.cursor = at
	o.table, e.queue = nil, qNone
	e.next = s.free
	s.free = e.idx
	return at, n
}

// push puts e at the head of q.
func (s *shard) push(q *fifo, e *entry) {
	e.prev, e.next = -1, q.head
	if q.head >= 0 {
		s.c.entries[q.head].prev = e.idx
	} else {
		q.tail = e.idx
	}
	q.head = e.idx
	q.n++
	q.chunks += (int(e.n) + ChunkSize - 1) / ChunkSize
	if q == &s.small {
		e.queue = qSmall
	} else {
		e.queue = qMain
	}
}

// unlink removes e from its queue, if any.
func (s *shard) unlink(e *entry) {
	var q *fifo
	switch e.queue {
	case qSmall:
		q = &s.small
	case qMain:
		q = &s.main
	default:
		return
	}
	if e.prev >= 0 {
		s.c.entries[e.prev].next = e.next
	} else {
		q.head = e.next
	}
	if e.next >= 0 {
		s.c.entries[e.next].prev = e.prev
	} else {
		q.tail = e.prev
	}
	q.n--
	q.chunks -= (int(e.n) + ChunkSize - 1) / ChunkSize
	e.prev, e.next, e.queue = -1, -1, qNone
}

// findRun returns the first chunk of a run of k free chunks, searching
// from the cursor (next fit, so that blocks filled one after another, as a
// scan fills them, lie one after another) and then from the start, or -1.
func (s *shard) findRun(k int) int {
	s.flushRuns()
	if s.runs.longest() < k {
		return -1
	}
	if at := s.runs.find(s.cursor, k); at >= 0 {
		return at
	}
	return s.runs.find(0, k)
}

// runAround returns the run of free chunks around [at, at+n), extended
// only until it holds k. It steps a word at a time: a chunk at a time, it
// cost a quarter of a thrashing 64 MiB cache's inserts, whose blocks of up
// to 64 KiB are up to 1024 chunks.
func (s *shard) runAround(at, n, k int) (lo, hi int) {
	lo, hi = at, at+n
	// Upwards; the bits past nchunks are held, so this stops there.
	for hi-lo < k && hi < s.nchunks {
		left := 64 - hi&63 // chunks from hi to the end of its word
		free := min(bits.TrailingZeros64(s.bits[hi>>6]>>uint(hi&63)), left)
		hi += min(free, k-(hi-lo))
		if free < left {
			break
		}
	}
	// Downwards, from the word holding chunk lo-1.
	for hi-lo < k && lo > 0 {
		below := lo - (lo-1)&^63 // chunks of that word below lo: 1 to 64
		free := min(bits.LeadingZeros64(s.bits[(lo-1)>>6]<<uint(64-below)), below)
		lo -= min(free, k-(hi-lo))
		if free < below {
			break
		}
	}
	return lo, hi
}

func (s *shard) held(c int) bool { return s.bits[c>>6]&(1<<uint(c&63)) != 0 }

func (s *shard) setBits(at, n int, v bool) {
	if n <= 0 {
		return
	}
	first, last := at>>6, (at+n-1)>>6
	for n > 0 {
		lo := at & 63
		k := min(n, 64-lo)
		mask := (^uint64(0) >> uint(64-k)) << uint(lo)
		if v {
			s.bits[at>>6] |= mask
		} else {
			s.bits[at>>6] &^= mask
		}
		at, n = at+k, n-k
	}
	// The tree is brought up to date lazily: a block freed by eviction
	// and its chunks taken again at once, as in a thrashing cache, then
	// cost one pass that stops at the first level, not two to the root.
	switch {
	case s.dirtyLo > s.dirtyHi:
		s.dirtyLo, s.dirtyHi = first, last
	case first <= s.dirtyHi+1 && last >= s.dirtyLo-1:
		s.dirtyLo, s.dirtyHi = min(s.dirtyLo, first), max(s.dirtyHi, last)
	default:
		s.flushRuns()
		s.dirtyLo, s.dirtyHi = first, last
	}
}

// flushRuns brings runs up to date with bits.
func (s *shard) flushRuns() {
	if s.dirtyLo <= s.dirtyHi {
		s.runs.update(s.dirtyLo, s.dirtyHi)
		s.dirtyLo, s.dirtyHi = 0, -1
	}
}
