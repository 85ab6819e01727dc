//go:build linux

package blockcache

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentBytes returns how many bytes of b's pages are resident
// (mincore).
func residentBytes(t *testing.T, b []byte) int64 {
	t.Helper()
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	var n int64
	for _, v := range vec {
		n += int64(v & 1)
	}
	return n * int64(pageSize)
}

// TestSetAsideTakesNoMemory: what Hold and Charge set aside is counted in
// the budget but lies elsewhere (Hold's mappings, the Go heap), so the
// budget's pages under it must take no memory, however many blocks pass
// through. Readers' filter copies, a quarter of a 16 MiB cache here, and
// a slot array's charge, under 32 MiB of blocks: the cache's mapping
// holds at most Capacity less Held resident (and a few steps of slack),
// where before the chunks set aside lay among the blocks' and the whole
// budget was resident (16 MiB, with 4 MiB held besides). Once the holds
// are released, blocks take the room back.
func TestSetAsideTakesNoMemory(t *testing.T) {
	const capacity = 16 << 20 // 4 shards of 4 MiB
	c := newCache(capacity)
	defer c.Close()
	if !c.offHeap {
		t.Skip("no anonymous mapping here")
	}
	const blocks = 8192
	tb := newTable(t, c, blocks) // charges its 64 KiB of slots
	var users []*heldUser
	for range 8 {
		users = append(users, newHeldUser(t, c, 512<<10))
	}
	for round := range 2 {
		for i := range blocks {
			put(tb, i, 4096, uint32(round))
		}
	}
	st := c.Stats()
	if st.Held < 8*512<<10 || st.Size > st.Capacity {
		t.Fatalf("after the holds and 32 MiB of blocks: %+v", st)
	}
	var slack int64
	for i := range c.shards {
		slack += int64((2*c.shards[i].asideStep() + pageSize/ChunkSize) * ChunkSize)
	}
	res := residentBytes(t, c.mem)
	t.Logf("resident %d KiB of the %d KiB budget, %d KiB held (cache Size %d KiB)", res>>10, capacity>>10, st.Held>>10, st.Size>>10)
	if res > capacity-st.Held+slack {
		t.Fatalf("%d KiB of the budget resident with %d KiB of it held elsewhere: more than %d KiB", res>>10, st.Held>>10, (capacity-st.Held+slack)>>10)
	}
	// No cached block lies in its shard's region, and the held copies
	// kept their bytes.
	checkRegions(t, c, tb)
	for _, u := range users {
		for i := range uint64(64) {
			if v := u.probe(i * 8191); v != byte((i*8191%uint64(len(u.b)))*7+1) {
				t.Fatalf("held byte %d is %d", i*8191, v)
			}
		}
	}
	for _, u := range users {
		u.close()
	}
	// Only the slot array's charge is left: the regions shrink to it.
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		region, aside, step := s.nchunks-s.limit, s.aside, s.asideStep()
		s.mu.Unlock()
		if region > aside+2*step+pageSize/ChunkSize {
			t.Fatalf("shard %d: a region of %d chunks for %d set aside", i, region, aside)
		}
	}
	for i := range blocks {
		put(tb, i, 4096, 2)
	}
	if st := c.Stats(); st.Size < capacity-st.Held-slack {
		t.Fatalf("blocks took %d KiB back of the %d KiB not held", (st.Size-st.Held)>>10, (capacity-st.Held)>>10)
	}
	checkRegions(t, c, tb)
	tb.Close()
}

// checkRegions checks that no block of tb lies in its shard's set-aside
// region.
func checkRegions(t *testing.T, c *Cache, tb *Table) {
	t.Helper()
	for i := range tb.slots {
		h, ok := tb.Get(i)
		if !ok {
			continue
		}
		s := &c.shards[h.e.shard]
		s.mu.Lock()
		at, limit := int(h.e.chunk)-s.base, s.limit
		s.mu.Unlock()
		if at+chunksOf(len(h.Bytes())) > limit {
			t.Fatalf("block %d at chunks [%d, %d) of shard %d, whose region starts at %d", i, at, at+chunksOf(len(h.Bytes())), h.e.shard, limit)
		}
		h.Release()
	}
}

// TestSetAsideWaitsForPins: a pinned block in the region's way is never
// evicted; Hold tries again for a while and then gives up, leaving the
// block and the cache as they were; once the pin is gone, Hold takes the
// room.
func TestSetAsideWaitsForPins(t *testing.T) {
	c := newCache(4 << 20) // one shard
	defer c.Close()
	tb := newTable(t, c, 1024)
	for i := range 1024 {
		if !put(tb, i, 4096, 1) {
			t.Fatalf("put %d failed", i)
		}
	}
	s := &c.shards[0]
	top, at := -1, -1
	for i := range tb.slots {
		if w := tb.slots[i].Load(); w != 0 && w&ghostBit == 0 && int(uint32(w)) > at {
			top, at = i, int(uint32(w))
		}
	}
	h, ok := tb.Get(top)
	if !ok {
		t.Fatal("the top block is not cached")
	}
	before := c.Stats()
	u, err := c.NewTable(4)
	if err != nil {
		t.Fatal(err)
	}
	// Enough that the region must grow over the pinned block.
	n := (s.nchunks - at) * ChunkSize
	limit := s.limit
	if _, ok := u.Hold(n); ok {
		t.Fatalf("Hold(%d) took the room of a pinned block (chunk %d, shard of %d chunks)", n, at, s.nchunks)
	}
	if st := c.Stats(); st.Held != before.Held || s.limit != limit {
		t.Fatalf("a failed Hold left Held %d (was %d), region from %d (was %d)", st.Held, before.Held, s.limit, limit)
	}
	if !matches(h.Bytes(), tb.id, top, 1) || !listed(tb, top) {
		t.Fatal("the pinned block changed or left the cache")
	}
	h.Release()
	held, ok := u.Hold(n)
	if !ok {
		t.Fatal("Hold failed with nothing pinned")
	}
	if listed(tb, top) {
		t.Fatal("the block in the region's way is still cached")
	}
	checkRegions(t, c, tb)
	held.Release()
	u.Close()
	tb.Close()
}
