package blockcache

import "runtime"

// Hold sets aside n bytes of the budget for a user's own long-lived data
// (a reader's copy of its table's filter), pinned until the Handle's
// Release: counted in Stats.Size and Stats.Held, never evicted, never seen
// by Get. It evicts blocks to make room, and reports false when it cannot
// (n is larger than a shard, or the blocks there are pinned), or when
// the memory cannot be mapped.
//
// The bytes themselves lie outside the budget's mapping, in a private
// mapping of their own (n rounded up to whole pages), faulted in at once;
// the chunks of the budget set aside for them are never written, as
// Charge's are not. Such memory outlives its Release and even the
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
	s.mu.Lock()
	// Checked again under the lock, which Cache.Close takes to see that
	// the shard holds nothing: the Table's Close, and so the Cache's, may
	// have come since the check above. Either Close finds this block
	// held (and fails), or this finds t closed.
	if t.closed.Load() {
		s.mu.Unlock()
		hm.unmap()
		return Handle{}, false
	}
	e, ok := s.alloc(k)
	if !ok {
		s.mu.Unlock()
		hm.unmap()
		return Handle{}, false
	}
	e.slot, e.n, e.aux, e.queue = -1, uint32(n), 0, qHeld
	e.freq.Store(0)
	e.refs.Store(1) // the holder's pin, its only reference
	*s.owner(e) = owner{table: t, held: hm}
	s.mu.Unlock()
	t.c.held.Add(int64(k * ChunkSize))
	if hm != nil {
		// Unmapped when t is garbage: a reader probing the memory
		// after its Release can reach t (its source keeps it).
		runtime.AddCleanup(t, unmapHeld, hm.mem)
		return Handle{e: e, b: hm.mem[:n:n]}, true
	}
	off := uintptr(e.chunk) * ChunkSize
	return Handle{e: e, b: t.c.mem[off : off+uintptr(n) : off+uintptr(n)]}, true
}

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
// never evicted, until t is closed. The chunks set aside are never
// written, so they cost no resident memory unless blocks used them
// before. A charge is taken in pieces of at most an eighth of a shard,
// each from the shard its piece number maps to, evicting blocks to make
// room. It reports false, leaving what it took charged, when a piece
// finds no room (the blocks there are pinned) or t is closed: the memory
// is then in use all the same, uncounted.
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
