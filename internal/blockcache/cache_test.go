package blockcache

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"
)

func newTable(t *testing.T, c *Cache, n int) *Table {
	t.Helper()
	tb, err := c.NewTable(n)
	if err != nil {
		t.Fatalf("NewTable(%d): %v", n, err)
	}
	return tb
}

func mustPublish(t *testing.T, tb *Table, i, n int, v uint32) Handle {
	t.Helper()
	h, ok := publish(tb, i, n, v)
	if !ok {
		t.Fatalf("Reserve(%d, %d) failed", i, n)
	}
	return h
}

func mustPut(t *testing.T, tb *Table, i, n int, v uint32) {
	t.Helper()
	h := mustPublish(t, tb, i, n, v)
	h.Release()
}

// checkHit Gets block i of tb and checks it holds version v.
func checkHit(t *testing.T, tb *Table, i int, v uint32) {
	t.Helper()
	h, ok := tb.Get(i)
	if !ok {
		t.Fatalf("Get(%d) missed", i)
	}
	defer h.Release()
	if h.Aux() != v || !matches(h.Bytes(), tb.id, i, v) {
		t.Fatalf("Get(%d): Aux %d, bytes match version %d: %v", i, h.Aux(), v, matches(h.Bytes(), tb.id, i, v))
	}
}

func closeAll(t *testing.T, c *Cache, tables ...*Table) {
	t.Helper()
	for _, tb := range tables {
		tb.Close()
	}
	if st := c.Stats(); st.Size != 0 {
		t.Errorf("Size %d after every Table closed", st.Size)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestShards(t *testing.T) {
	for _, tc := range []struct {
		capacity int64
		shards   int
	}{
		{-1, 1}, {0, 1}, {1, 1}, {4 << 20, 1}, {8<<20 - 1, 1}, {8 << 20, 2},
		{32 << 20, 8}, {64 << 20, 16}, {1 << 30, MaxShards},
	} {
		c := newCache(tc.capacity)
		if c.Shards() != tc.shards {
			t.Errorf("newCache(%d): %d shards, want %d", tc.capacity, c.Shards(), tc.shards)
		}
		if want := max(tc.capacity, 0); c.Capacity() != want || c.Stats().Capacity != want {
			t.Errorf("newCache(%d): Capacity %d, Stats %+v", tc.capacity, c.Capacity(), c.Stats())
		}
		c.Close()
	}
}

// A cache below one chunk holds nothing and never panics.
// TestEntryLines checks that each entry fills one cache line: the
// eviction path's misses in a large cache count lines, not entries. An
// array of entries over 32 KiB (a cache over 1 MiB) is a large object on
// the Go heap and starts on a page; a smaller one starts 8 bytes past a
// line (the heap's header for small objects holding pointers), but then
// all of the cache's metadata fits the CPU's caches anyway.
func TestEntryLines(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 64 {
		t.Fatalf("entry is %d bytes, want 64", n)
	}
	for _, capacity := range []int64{2 << 20, 64 << 20} {
		c := newCache(capacity)
		if p := uintptr(unsafe.Pointer(&c.entries[0])); p%64 != 0 {
			t.Errorf("capacity %d: entries at %#x, not on a 64-byte line", capacity, p)
		}
		c.Close()
	}
}

func TestTinyCapacity(t *testing.T) {
	for _, capacity := range []int64{-5, 0, 1, ChunkSize - 1} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			c := newCache(capacity)
			tb := newTable(t, c, 4)
			for _, n := range []int{-1, 0, 1, ChunkSize - 1, ChunkSize, 1 << 20} {
				h, ok := tb.Reserve(1, n)
				if ok || h.Cached() || h.Bytes() != nil {
					t.Errorf("Reserve(1, %d) on a cache of %d: %v", n, capacity, ok)
				}
				tb.Publish(1, h, 7) // the zero Handle: nothing happens
				h.Release()
				if _, ok := tb.Get(1); ok {
					t.Errorf("Get hit on a cache of %d", capacity)
				}
			}
			if st := c.Stats(); st != (Stats{Capacity: max(capacity, 0), Misses: 6}) {
				t.Errorf("Stats %+v", st)
			}
			closeAll(t, c, tb)
		})
	}
}

// A Table of no slots is allowed and useless.
func TestZeroSlots(t *testing.T) {
	c := newCache(64 << 10)
	for _, n := range []int{0, -3} {
		tb := newTable(t, c, n)
		if tb.Len() != 0 {
			t.Errorf("NewTable(%d).Len() = %d", n, tb.Len())
		}
		tb.Close()
	}
	closeAll(t, c)
}

// Blocks up to exactly one shard are cached; larger ones are not.
func TestShardSizedBlocks(t *testing.T) {
	for _, capacity := range []int64{64 << 10, 64<<10 + ChunkSize - 1, 32 << 20} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			c := newCache(capacity)
			tb := newTable(t, c, 64)
			shard := int(capacity) / c.Shards() / ChunkSize * ChunkSize
			// Fill the cache with small blocks first: the shard-sized
			// block must evict them all.
			for i := range 32 {
				mustPut(t, tb, i, 3*ChunkSize, 1)
			}
			if h, ok := tb.Reserve(40, shard+1); ok {
				h.Release()
				t.Fatalf("Reserve(%d) of a block larger than a shard (%d) succeeded", shard+1, shard)
			}
			for i := 40; i < 40+2*c.Shards(); i++ {
				before := c.Stats()
				h := mustPublish(t, tb, i, shard, 2)
				if len(h.Bytes()) != shard {
					t.Fatalf("Reserve(%d): %d bytes", shard, len(h.Bytes()))
				}
				h.Release()
				checkHit(t, tb, i, 2)
				st := c.Stats()
				if st.Size > st.Capacity || st.Size < int64(shard) {
					t.Fatalf("Size %d, capacity %d, block %d", st.Size, st.Capacity, shard)
				}
				if st.Evictions < before.Evictions {
					t.Fatalf("Evictions went down")
				}
			}
			closeAll(t, c, tb)
		})
	}
}

func TestReserveZero(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 2)
	for _, n := range []int{0, -1} {
		if _, ok := tb.Reserve(0, n); ok {
			t.Errorf("Reserve(0, %d) succeeded", n)
		}
	}
	if st := c.Stats(); st.Misses != 2 || st.Size != 0 {
		t.Errorf("Stats %+v", st)
	}
	closeAll(t, c, tb)
}

func TestCounters(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 100)
	mustPut(t, tb, 0, 100, 1)
	checkHit(t, tb, 0, 1)
	checkHit(t, tb, 0, 1)
	if _, ok := tb.Get(1); ok {
		t.Fatal("Get(1) hit")
	}
	want := Stats{Capacity: 64 << 10, Size: int64(chunksOf(100) * ChunkSize), Hits: 2, Misses: 1}
	if st := c.Stats(); st != want {
		t.Fatalf("Stats %+v, want %+v", st, want)
	}
	// 64 KiB of 4 KiB blocks holds 16 of them: 100 evict at least 84.
	tb2 := newTable(t, c, 100)
	for i := range 100 {
		mustPut(t, tb2, i, 4096, 1)
	}
	st := c.Stats()
	if st.Misses != 101 || st.Evictions < 84 || st.Size > st.Capacity {
		t.Fatalf("Stats %+v after 100 blocks of 4 KiB", st)
	}
	size := int64(0)
	if listed(tb, 0) {
		size += int64(chunksOf(100) * ChunkSize)
	}
	for i := range 100 {
		if listed(tb2, i) {
			size += 4096
		}
	}
	if size != st.Size {
		t.Fatalf("listed blocks hold %d bytes, Size %d", size, st.Size)
	}
	closeAll(t, c, tb, tb2)
}

// With every block pinned, Reserve reports false rather than evicting one.
func TestAllPinned(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 64)
	var hs []Handle
	for i := range 16 {
		hs = append(hs, mustPublish(t, tb, i, 4096, uint32(i)))
	}
	before := c.Stats()
	for i := 16; i < 32; i++ {
		for _, n := range []int{1, 4096, 64 << 10} {
			if h, ok := tb.Reserve(i, n); ok {
				h.Release()
				t.Fatalf("Reserve(%d, %d) succeeded with the cache full of pinned blocks", i, n)
			}
		}
	}
	if st := c.Stats(); st.Evictions != before.Evictions || st.Size != 64<<10 {
		t.Fatalf("Stats %+v, before %+v", st, before)
	}
	for i, h := range hs {
		if !matches(h.Bytes(), tb.id, i, uint32(i)) {
			t.Fatalf("pinned block %d changed", i)
		}
		h.Release()
		checkHit(t, tb, i, uint32(i))
	}
	closeAll(t, c, tb)
}

// A pinned block survives any amount of pressure, and stays listed.
func TestPinnedSurvivesPressure(t *testing.T) {
	c := newCache(256 << 10)
	tb := newTable(t, c, 4000)
	pin := mustPublish(t, tb, 0, 10000, 42)
	for i := 1; i < 4000; i++ {
		mustPut(t, tb, i, 1+i*37%(64<<10), uint32(i))
		if i%7 == 0 {
			checkHit(t, tb, i, uint32(i)) // some blocks go to the main queue
		}
	}
	if c.Stats().Evictions < 1000 {
		t.Fatalf("too little pressure: %+v", c.Stats())
	}
	if !matches(pin.Bytes(), tb.id, 0, 42) || pin.Aux() != 42 {
		t.Fatal("pinned block changed under pressure")
	}
	checkHit(t, tb, 0, 42)
	pin.Release()
	closeAll(t, c, tb)
}

// Regression: a pinned block in one S3-FIFO queue kept Reserve from
// evicting the unpinned blocks of the other queue (evictOne only ever
// looked at the queue its size rule chose, and gave up after cycling its
// pinned blocks).
func TestReserveEvictsPastPinnedQueue(t *testing.T) {
	t.Run("small pinned", func(t *testing.T) {
		// 128 chunks. Eight 16-chunk blocks read twice go to the main
		// queue on the first eviction; then a pinned block of 16 chunks
		// fills the small queue above its 10%.
		c := newCache(64 << 10)
		tb := newTable(t, c, 16)
		for i := range 8 {
			mustPut(t, tb, i, 8192, 1)
			checkHit(t, tb, i, 1)
		}
		pin := mustPublish(t, tb, 8, 8192, 2)
		s := &c.shards[0]
		if s.small.n != 1 || s.main.n != 7 {
			t.Fatalf("small %+v main %+v, want the pinned block alone in small", s.small, s.main)
		}
		for i := 9; i < 16; i++ {
			if !put(tb, i, 8192, 3) {
				t.Fatalf("Reserve(%d) failed with %d unpinned blocks in the main queue", i, s.main.n)
			}
		}
		pin.Release()
		closeAll(t, c, tb)
	})
	t.Run("main pinned", func(t *testing.T) {
		// A pinned, often read block in the main queue, and a small queue
		// under its 10% holding one unpinned block.
		c := newCache(64 << 10)
		tb := newTable(t, c, 16)
		pin := mustPublish(t, tb, 0, 60<<10, 1)
		for range 3 {
			checkHit(t, tb, 0, 1)
		}
		mustPut(t, tb, 1, 2048, 2)
		// Making room for 4 KiB moves the pinned block to main, evicts
		// block 1 and leaves block 2 in small: evicting it is the only
		// way to make room from then on.
		mustPut(t, tb, 2, 4096, 3)
		s := &c.shards[0]
		if s.main.n != 1 || s.small.n != 1 || s.small.chunks*10 >= s.nchunks {
			t.Fatalf("small %+v main %+v, want the pinned block in main, one below 10%% in small", s.small, s.main)
		}
		for i := 3; i < 8; i++ {
			if !put(tb, i, 4096, 4) {
				t.Fatalf("Reserve(%d) failed though the small queue holds an unpinned block", i)
			}
		}
		pin.Release()
		closeAll(t, c, tb)
	})
}

// Regression: when every entry was in use, alloc evicted blocks only to
// look around each one for room, and gave up when the rest were pinned,
// though a free run of chunks was there all along.
func TestReserveFindsRunWhenEntriesRunOut(t *testing.T) {
	c := newCache(64 << 10) // 128 chunks
	ne := len(c.entries)
	if ne+8 > 128 {
		t.Skipf("%d entries for 128 chunks", ne)
	}
	tb := newTable(t, c, ne+1)
	hs := make([]Handle, ne)
	for i := range ne { // one chunk each: chunks 0 to ne-1
		hs[i] = mustPublish(t, tb, i, 1, uint32(i))
	}
	hs[5].Release() // the only unpinned block, between two pinned ones
	h, ok := tb.Reserve(ne, 5*ChunkSize)
	if !ok {
		t.Fatalf("Reserve of 5 chunks failed with %d chunks free", 128-ne)
	}
	h.Release()
	for i, h := range hs {
		if i != 5 {
			h.Release()
		}
	}
	closeAll(t, c, tb)
}

func TestCacheClose(t *testing.T) {
	c := newCache(64 << 10)
	t1 := newTable(t, c, 4)
	t2 := newTable(t, c, 4)
	mustPut(t, t1, 0, 100, 1)
	if err := c.Close(); !errors.Is(err, ErrInUse) {
		t.Fatalf("Close with two Tables open: %v", err)
	}
	t1.Close()
	if err := c.Close(); !errors.Is(err, ErrInUse) {
		t.Fatalf("Close with a Table open: %v", err)
	}
	// Still usable after a refused Close.
	mustPut(t, t2, 1, 100, 2)
	checkHit(t, t2, 1, 2)
	t3 := newTable(t, c, 1)
	t3.Close()
	t2.Close()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if tb, err := c.NewTable(4); !errors.Is(err, ErrClosed) || tb != nil {
		t.Fatalf("NewTable after Close: %v, %v", tb, err)
	}
}

// Regression: Cache.Close unmapped the memory under Handles that outlived
// their (closed) Table; reading them then faulted.
func TestCacheCloseWhilePinned(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 4)
	h := mustPublish(t, tb, 0, 1000, 1)
	r := mustPublish(t, tb, 1, 1000, 2)
	r.Release()
	g, ok := tb.Get(1)
	if !ok {
		t.Fatal("Get(1) missed")
	}
	tb.Close()
	if err := c.Close(); !errors.Is(err, ErrInUse) || err.Error() != "cache: close: in use: blocks still pinned" {
		t.Fatalf("Close with Handles pinned: %v", err)
	}
	if !matches(h.Bytes(), tb.id, 0, 1) || !matches(g.Bytes(), tb.id, 1, 2) {
		t.Fatal("pinned blocks changed")
	}
	h.Release()
	if err := c.Close(); !errors.Is(err, ErrInUse) {
		t.Fatalf("Close with a Handle pinned: %v", err)
	}
	g.Release()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// After Table.Close, pinned blocks stay readable until released; then
// their chunks go back. The Table is then empty and refuses Reserve.
func TestTableClosePinned(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 8)
	other := newTable(t, c, 8)
	mustPut(t, other, 0, 3000, 9)
	h0 := mustPublish(t, tb, 0, 5000, 1)
	mustPut(t, tb, 1, 5000, 2)
	g1, ok := tb.Get(1)
	if !ok {
		t.Fatal("Get(1) missed")
	}
	mustPut(t, tb, 2, 5000, 3)
	res, ok := tb.Reserve(3, 700) // reserved, not yet published
	if !ok {
		t.Fatal("Reserve(3) failed")
	}
	fill(res.Bytes(), tb.id, 3, 4)
	if got, want := c.Stats().Size, int64(chunksOf(3000)+3*chunksOf(5000)+chunksOf(700))*ChunkSize; got != want {
		t.Fatalf("Size %d, want %d", got, want)
	}
	tb.Close()
	tb.Close()
	if got, want := c.Stats().Size, int64(chunksOf(3000)+2*chunksOf(5000)+chunksOf(700))*ChunkSize; got != want {
		t.Fatalf("Size %d after Close, want %d (block 2 dropped, pinned ones kept)", got, want)
	}
	for i := range 4 {
		if _, ok := tb.Get(i); ok {
			t.Fatalf("Get(%d) hit on a closed Table", i)
		}
	}
	if h, ok := tb.Reserve(5, 100); ok {
		h.Release()
		t.Fatal("Reserve on a closed Table succeeded")
	}
	// Heavy pressure from another Table cannot touch the pinned blocks.
	for i := range 200 {
		put(other, i%8, 1+i*997%(60<<10), uint32(i))
	}
	// Publish after Close keeps the block private.
	tb.Publish(3, res, 4)
	if listed(tb, 3) {
		t.Fatal("Publish after Close listed the block")
	}
	if !matches(h0.Bytes(), tb.id, 0, 1) || !matches(g1.Bytes(), tb.id, 1, 2) || !matches(res.Bytes(), tb.id, 3, 4) || res.Aux() != 4 {
		t.Fatal("a block pinned across Table.Close changed")
	}
	before := c.Stats().Size
	h0.Release()
	g1.Release()
	res.Release()
	if got, want := c.Stats().Size, before-int64(2*chunksOf(5000)+chunksOf(700))*ChunkSize; got != want {
		t.Fatalf("Size %d after the releases, want %d", got, want)
	}
	closeAll(t, c, other)
}

// Two fillers of one block: the first Publish wins, the second block stays
// private to its Handle and is freed on Release.
func TestPublishTwice(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 4)
	a, ok1 := tb.Reserve(0, 1000)
	b, ok2 := tb.Reserve(0, 3000)
	if !ok1 || !ok2 {
		t.Fatal("Reserve failed")
	}
	fill(a.Bytes(), tb.id, 0, 1)
	fill(b.Bytes(), tb.id, 0, 2)
	tb.Publish(0, a, 1)
	tb.Publish(0, b, 2)
	if a.Aux() != 1 || b.Aux() != 2 {
		t.Fatalf("Aux %d, %d", a.Aux(), b.Aux())
	}
	if got, want := c.Stats().Size, int64(chunksOf(1000)+chunksOf(3000))*ChunkSize; got != want {
		t.Fatalf("Size %d, want %d", got, want)
	}
	checkHit(t, tb, 0, 1)
	b.Release()
	if got, want := c.Stats().Size, int64(chunksOf(1000))*ChunkSize; got != want {
		t.Fatalf("Size %d after releasing the private block, want %d", got, want)
	}
	checkHit(t, tb, 0, 1)
	a.Release()
	checkHit(t, tb, 0, 1)
	if c.Stats().Size != int64(chunksOf(1000))*ChunkSize {
		t.Fatal("published block freed on Release")
	}
	closeAll(t, c, tb)
}

// Reserve then Release without Publish gives the chunks back.
func TestReserveRelease(t *testing.T) {
	c := newCache(64 << 10)
	tb := newTable(t, c, 4)
	h, ok := tb.Reserve(0, 64<<10)
	if !ok {
		t.Fatal("Reserve failed")
	}
	if _, ok := tb.Get(0); ok {
		t.Fatal("Get hit a reserved block")
	}
	if c.Stats().Size != 64<<10 {
		t.Fatalf("Size %d", c.Stats().Size)
	}
	h.Release()
	h.Release()
	var zero Handle
	zero.Release()
	if zero.Aux() != 0 || zero.Cached() || zero.Bytes() != nil {
		t.Fatal("zero Handle not empty")
	}
	if st := c.Stats(); st.Size != 0 || st.Evictions != 0 {
		t.Fatalf("Stats %+v", st)
	}
	closeAll(t, c, tb)
}

// TestLargeBlockUsesFreeSpace checks that a block larger than the near
// search (a cached section of megabytes) takes free chunks wherever they
// are rather than evicting: an unmapped reader's index and filter must
// not evict each other from a cache with room for both.
func TestLargeBlockUsesFreeSpace(t *testing.T) {
	c := newCache(64 << 20) // 16 shards of 4 MiB
	tb := newTable(t, c, 4)
	mustPut(t, tb, 0, 4096, 1)
	for i, n := range []int{1 << 20, 2 << 20} {
		h, ok := tb.Reserve(i+1, n)
		if !ok {
			t.Fatalf("Reserve(%d, %d) failed", i+1, n)
		}
		fill(h.Bytes(), tb.id, i+1, 2)
		tb.Publish(i+1, h, 0)
		h.Release()
	}
	if st := c.Stats(); st.Evictions != 0 {
		t.Fatalf("%d evictions in a shard with room: %+v", st.Evictions, st)
	}
	checkHit(t, tb, 0, 1)
	closeAll(t, c, tb)
}

// TestSiblingsCountOnce checks that Close counts a Table and its siblings
// as one user in its error, and that the user stays counted until its last
// Table is closed: a reader with a sections table and a blocks table is
// one table reader still open, not two.
func TestSiblingsCountOnce(t *testing.T) {
	c := newCache(1 << 20)
	a := newTable(t, c, 4)
	a2, err := a.NewSibling(8)
	if err != nil {
		t.Fatal(err)
	}
	a3, err := a2.NewSibling(0)
	if err != nil {
		t.Fatal(err)
	}
	b := newTable(t, c, 1)
	mustPut(t, a2, 3, 100, 1)
	want := func(sub string) {
		t.Helper()
		err := c.Close()
		if !errors.Is(err, ErrInUse) || err == nil || err.Error() != "cache: close: in use: "+sub {
			t.Fatalf("Close: %v, want ErrInUse, \"cache: close: in use: %s\"", err, sub)
		}
	}
	want("2 users (table readers) still open")
	b.Close()
	want("1 user (table readers) still open")
	a.Close()
	a3.Close()
	want("1 user (table readers) still open") // a2 remains
	a2.Close()
	if err := c.Close(); err != nil {
		t.Fatalf("Close after every Table closed: %v", err)
	}
	if _, err := a.NewSibling(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewSibling on a closed Cache: %v, want ErrClosed", err)
	}
}

// TestHold: held bytes count in Size and Held, are never evicted however
// many blocks pass through, and go back at Release; Get never sees them.
func TestHold(t *testing.T) {
	c := newCache(1 << 20)
	tb, _ := c.NewTable(4096)
	slots := c.Stats().Held // the slot array's charge
	if slots != 4096*8 {
		t.Fatalf("Held %d after NewTable(4096), want the slots' %d bytes", slots, 4096*8)
	}
	h, ok := tb.Hold(100 << 10)
	if !ok {
		t.Fatal("Hold(100 KiB) in a 1 MiB cache failed")
	}
	for i := range h.Bytes() {
		h.Bytes()[i] = byte(i)
	}
	if st := c.Stats(); st.Held != slots+100<<10 || st.Size < st.Held {
		t.Fatalf("after Hold: %+v", st)
	}
	for i := range 4096 { // 16 MiB of blocks through a 1 MiB cache
		put(tb, i, 4096, uint32(i))
	}
	for i, b := range h.Bytes() {
		if b != byte(i) {
			t.Fatalf("held byte %d is %d after thrashing, want %d", i, b, byte(i))
		}
	}
	if _, ok := tb.Hold(2 << 20); ok {
		t.Fatal("Hold of more than a shard succeeded")
	}
	h.Release()
	if st := c.Stats(); st.Held != slots {
		t.Fatalf("after Release: Held %d, want %d", st.Held, slots)
	}
	tb.Close()
	if st := c.Stats(); st.Held != 0 {
		t.Fatalf("after Close: Held %d", st.Held)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCharge: a charge counts in Size and Held, in pieces spread over the
// shards when it is larger than one, pushes blocks out of the budget, and
// goes back at the Table's Close; small slot arrays are not charged.
func TestCharge(t *testing.T) {
	c := newCache(64 << 20) // 16 shards
	small, _ := c.NewTable(MinCharge/8 - 1)
	if st := c.Stats(); st.Held != 0 {
		t.Fatalf("a table of %d slots charged %d bytes", MinCharge/8-1, st.Held)
	}
	const blocks = 16 << 10
	tb, _ := c.NewTable(blocks)
	for i := range blocks { // 64 MiB of blocks: fills the cache
		put(tb, i, 4096, uint32(i))
	}
	shard := c.shards[0].nchunks * ChunkSize
	n := 3*shard + 1000 // more than any one shard can set aside
	if !small.Charge(n) {
		t.Fatalf("Charge(%d) in a cache of %d-byte shards failed", n, shard)
	}
	st := c.Stats()
	want := int64(blocks*8 + (n+ChunkSize-1)/ChunkSize*ChunkSize)
	if st.Held != want || st.Size > st.Capacity {
		t.Fatalf("after Charge: %+v, want Held %d and Size within Capacity", st, want)
	}
	cached := 0
	for i := range blocks {
		if h, ok := tb.Get(i); ok {
			cached++
			h.Release()
		}
	}
	if max := int(st.Capacity-st.Held) / 4096; cached > max {
		t.Fatalf("%d blocks cached beside the charge, room for %d", cached, max)
	}
	small.Close()
	if st := c.Stats(); st.Held != blocks*8 {
		t.Fatalf("after the charging Table's Close: Held %d, want the other's slots, %d", st.Held, blocks*8)
	}
	if small.Charge(100) {
		t.Fatal("Charge on a closed Table succeeded")
	}
	tb.Close()
	if st := c.Stats(); st.Held != 0 || st.Size != 0 {
		t.Fatalf("after every Close: %+v", st)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
