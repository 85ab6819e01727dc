package blockcache

import (
	"runtime"
	"time"
)

// Hold sets aside n bytes of the budget for a user's own long-lived data
// (a reader's copy of its table's filter), pinned until the Handle's
// Release: counted in Stats.Size and Stats.Held, never evicted, never seen
// by Get. It evicts blocks to make room, and reports false when it cannot
// (n is larger than a shard, or blocks in the way stay pinned for a few
// milliseconds), or when the memory cannot be mapped.
//
// The bytes themselves lie outside the budget's mapping, in a private
// mapping of their own (n rounded up to whole pages), faulted in at once;
// the budget's chunks set aside for them, as Charge's, are in its
// shard's set-aside region, whose pages take no memory (see
// shard.setAside). Such memory outlives its Release and even the
// Cache's Close: from the Release it reads as zeros (its pages go back to
// the kernel then), and it stays mapped for as long as t is reachable,
// unmapped only once t is garbage. A holder that reads it while it can
// reach t, as a reader racing its own Close probes its filter copy while
// its source keeps its Table, thus never faults; and Close gives the
// cache's own address range back at once, whatever was held in it.
func (t *Table) Hold(n int) (Handle, bool) { return t.hold(-1, n, true) }

// hold is Hold in the shard of key (negative: never a block's); readable
// says the holder reads and writes the memory (Charge's never does), which
// is then mapped apart.
func (t *Table) hold(key, n int, readable bool) (Handle, bool) {
	s := t.c.shardOf(t.id, key)
	if n <= 0 || n > s.nchunks*ChunkSize || t.closed.Load() {
		return Handle{}, false
	}
	var hm *heldMem
	if readable {
		mem, ok := mapHeld(n)
		if !ok {
			return Handle{}, false
		}
		hm = &heldMem{mem: mem}
	}
	k := (n + ChunkSize - 1) / ChunkSize
	var e *entry
	for try := 0; ; try++ {
		s.mu.Lock()
		// Checked again under the lock, which Cache.Close takes to see
		// that the shard holds nothing: the Table's Close, and so the
		// Cache's, may have come since the check above. Either Close
		// finds this block held (and fails), or this finds t closed.
		if t.closed.Load() {
			s.mu.Unlock()
			hm.unmap()
			return Handle{}, false
		}
		var ok bool
		if e, ok = s.setAside(k); ok {
			break
		}
		s.mu.Unlock()
		// A block in the region's way is pinned: by a lookup, for a
		// moment, or by an iterator, for longer.
		if try == holdTries-1 {
			hm.unmap()
			return Handle{}, false
		}
		time.Sleep(time.Duration(try+1) * 50 * time.Microsecond)
	}
	e.chunk = uint32(s.base + s.limit) // the region's: no place of its own
	e.slot, e.n, e.aux, e.queue = -1, uint32(n), 0, qHeld
	e.freq.Store(0)
	e.refs.Store(1) // the holder's pin, its only reference
	*s.owner(e) = owner{table: t, held: hm}
	s.mu.Unlock()
	t.c.held.Add(int64(k * ChunkSize))
	if hm == nil {
		return Handle{e: e}, true
	}
	// Unmapped when t is garbage: a reader probing the memory after its
	// Release can reach t (its source keeps it).
	runtime.AddCleanup(t, unmapHeld, hm.mem)
	return Handle{e: e, b: hm.mem[:n:n]}, true
}

// The set-aside region. What Hold and Charge set aside is a count of
// chunks, not a place: the memory they stand for lies elsewhere (Hold's
// mapping, the Go heap), and their chunks are never written. Set aside
// anywhere in the shard, as blocks are placed, those chunks were memory
// all the same: blocks had written there before, or the 2 MiB range
// around them was faulted in for its blocks, so a process paid for its
// readers' filter copies and state twice, once in the budget and once
// where they lie (200 readers under a 64 MiB cache, 17.4 MiB of Held:
// 88.8 MiB of anonymous memory at the peak, against 71.1 with the
// region below). So each shard sets aside chunks from its top
// down, as one region [limit, nchunks) that blocks never enter, and
// gives the region's pages back (MADV_DONTNEED) as it grows: the budget's
// memory in use is then at most its blocks' part. The region grows and
// shrinks by asideStep (1/128 of a shard, at least a page), keeping up to
// two steps of slack (neither blocks nor counted in Size), so that
// readers opening and closing do not move it each time: growing it
// evicts the blocks in its way, which costs a pass over the shard's
// entries.

// setAside sets k chunks aside in the region, growing it as needed,
// and returns an entry for them, or false when the region cannot grow
// (pinned blocks in the way) or no entry can be freed. Called with mu
// held.
func (s *shard) setAside(k int) (*entry, bool) {
	if s.aside+k > s.nchunks-s.limit && !s.growAside(s.aside+k) {
		return nil, false
	}
	if !s.hasEntry() {
		if _, _, ok := s.evictOne(); !ok {
			s.shrinkAside()
			return nil, false
		}
	}
	s.aside += k
	s.used += k
	return s.newEntry(), true
}

// asideStep is what the region grows and shrinks by, in chunks: 1/128
// of the shard, in whole pages.
func (s *shard) asideStep() int {
	page := pageSize / ChunkSize
	return max(page, s.nchunks/128/page*page)
}

// pageFloor rounds chunk c of the shard down to a page of mem, not
// below the shard's start.
func (s *shard) pageFloor(c int) int {
	page := pageSize / ChunkSize
	return max((s.base+c)/page*page-s.base, 0)
}

// growAside grows the region to at least need chunks (rounded up to
// steps), evicting every block in the way, and gives its pages back. It
// reports false, leaving the region as it was, when a block in the way
// cannot be evicted: pinned, or being filled. Called with mu held.
func (s *shard) growAside(need int) bool {
	if need > s.nchunks {
		return false
	}
	step := s.asideStep()
	lo := s.pageFloor(max(s.nchunks-(need+step-1)/step*step, 0))
	if s.evictRange(lo, s.limit) >= 0 {
		return false
	}
	old := s.limit
	s.setBits(lo, old-lo, true)
	s.limit = lo
	if s.cursor > lo {
		s.cursor = 0
	}
	c := s.c
	if !c.offHeap {
		return true
	}
	from, to := (s.base+lo)*ChunkSize, (s.base+old)*ChunkSize
	if pf := c.prefault; pf != nil {
		from = pf.setAside(from, to, s.base*ChunkSize, (s.base+s.nchunks)*ChunkSize, func(at int) bool {
			return s.evictRange(at/ChunkSize-s.base, lo) < 0
		})
	}
	from = (from + pageSize - 1) / pageSize * pageSize
	to = to / pageSize * pageSize
	if from < to {
		dropPages(c.mem[from:to:to])
	}
	return true
}

// shrinkAside gives chunks of the region back to blocks once it holds
// two steps of slack or more: all of it when nothing is set aside, else
// all but one step of slack. Called with mu held.
func (s *shard) shrinkAside() {
	step := s.asideStep()
	region := s.nchunks - s.limit
	want := 0
	if s.aside > 0 {
		if region-s.aside < 2*step {
			return
		}
		want = (s.aside+step-1)/step*step + step
	}
	if want >= region {
		return
	}
	// The region's new start, rounded up to a page of mem so that its
	// pages are whole; the page rounded over is slack.
	page := pageSize / ChunkSize
	hi := min((s.base+s.nchunks-want+page-1)/page*page-s.base, s.nchunks)
	if hi <= s.limit {
		return
	}
	old := s.limit
	s.setBits(old, hi-old, false)
	s.limit = hi
	if pf := s.c.prefault; pf != nil {
		pf.unsetAside((s.base+old)*ChunkSize, (s.base+hi)*ChunkSize, s.base*ChunkSize, (s.base+s.nchunks)*ChunkSize)
	}
}

// evictRange evicts every block with chunks in [lo, hi) of the shard and
// returns -1, or, when one of them cannot be evicted (pinned, being
// filled, or dropped by its Table's Close but still pinned), the first
// chunk of the lowest such block, having evicted the others. It scans
// the shard's entries, unless no chunk there is held. Called with mu
// held.
func (s *shard) evictRange(lo, hi int) int {
	if lo >= hi || !s.anyHeld(lo, hi) {
		return -1
	}
	stuck := -1
	for i := s.first; i < s.fresh; i++ {
		e := &s.c.entries[i]
		o := s.owner(e)
		if o.table == nil || e.queue == qHeld {
			continue // free, or set aside: no place in mem
		}
		at := int(e.chunk) - s.base
		if at >= hi || at+(int(e.n)+ChunkSize-1)/ChunkSize <= lo {
			continue
		}
		if (e.queue == qSmall || e.queue == qMain) && e.refs.CompareAndSwap(1, 0) {
			s.unlink(e)
			o.table.slots[e.slot].Store(0)
			s.evictions++
			s.release(e)
			continue
		}
		if stuck < 0 || at < stuck {
			stuck = at
		}
	}
	return stuck
}

// anyHeld reports whether a chunk of [lo, hi) is held. Called with mu
// held.
func (s *shard) anyHeld(lo, hi int) bool {
	for lo < hi {
		w := s.bits[lo>>6] >> uint(lo&63)
		if n := min(64-lo&63, hi-lo); n < 64 {
			w &= 1<<uint(n) - 1
		}
		if w != 0 {
			return true
		}
		lo += 64 - lo&63
	}
	return false
}

// holdTries is how many times hold tries to set its chunks aside while
// blocks in the way are pinned, waiting a little longer each time (2.75
// ms in all).
const holdTries = 10

// heldMem is the mapping of Hold's memory, whole pages.
type heldMem struct{ mem []byte }

// unmap unmaps memory never handed out; nil does nothing.
func (hm *heldMem) unmap() {
	if hm != nil {
		unmapHeld(hm.mem)
	}
}

// Charge sets aside n bytes of the budget for memory the user keeps
// outside the cache, on the Go heap (a reader's per-block state, its
// partitions' keys), as RocksDB's cache reservations charge the block
// cache for memory it does not hold: counted in Stats.Size and Stats.Held,
// never evicted, until t is closed. The chunks set aside are in their
// shard's set-aside region, whose pages take no memory (see
// shard.setAside). A charge is taken in pieces of at most an eighth of a shard,
// each from the shard its piece number maps to, evicting blocks to make
// room. It reports false, leaving what it took charged, when a piece
// finds no room (blocks in the way stay pinned) or t is closed: the
// memory is then in use all the same, uncounted.
func (t *Table) Charge(n int) bool {
	piece := max(ChunkSize, t.c.shards[0].nchunks*ChunkSize/8)
	for j := 0; n > 0; j++ {
		k := min(n, piece)
		h, ok := t.hold(-(j+1)*shardRun, k, false) // a shard per piece
		if !ok {
			return false
		}
		t.chargeMu.Lock()
		if t.closed.Load() {
			t.chargeMu.Unlock()
			h.Release()
			return false
		}
		t.charges = append(t.charges, h)
		t.chargeMu.Unlock()
		n -= k
	}
	return true
}

// MinCharge is the smallest slot array, in bytes, a Table charges to the
// budget: a reader keeps a few KiB of its own uncounted, as the cost of
// being open, rather than charge for every table however small.
const MinCharge = 4 << 10

// chargeSlots charges t's slot array, 8 bytes a slot, from MinCharge
// bytes up.
func (t *Table) chargeSlots() {
	if b := len(t.slots) * 8; b >= MinCharge {
		t.Charge(b)
	}
}
