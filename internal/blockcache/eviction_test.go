package blockcache

import "testing"

// TestScanResistance: a hot working set that fits survives a one-pass
// scan of four times the cache. With a plain FIFO (or CLOCK without the
// small queue's filter) every hot block, inserted before the scan, would
// be pushed out once 1 MiB of scan blocks had come in after it: 0% would
// survive, far below the 80% asserted. S3-FIFO moves the re-read hot
// blocks to the main queue the first time the small queue evicts, and
// the scan then only churns the small queue.
func TestScanResistance(t *testing.T) {
	const (
		blk  = 4096
		hot  = 100  // 400 KiB: 39% of the cache
		scan = 1024 // 4 MiB
	)
	c := newCache(1 << 20)
	tb := newTable(t, c, hot+scan)
	for i := range hot {
		mustPut(t, tb, i, blk, 1)
	}
	for range 2 {
		for i := range hot {
			checkHit(t, tb, i, 1)
		}
	}
	for j := range scan {
		mustPut(t, tb, hot+j, blk, 2)
		if j%16 == 0 { // the hot set keeps being read, slowly
			checkHit(t, tb, j/16%hot, 1)
		}
	}
	st := c.Stats()
	if st.Evictions < scan-(1<<20)/blk {
		t.Fatalf("the scan evicted only %d blocks", st.Evictions)
	}
	survivors := 0
	for i := range hot {
		if listed(tb, i) {
			survivors++
		}
	}
	if survivors < hot*8/10 {
		t.Fatalf("%d of %d hot blocks survived the scan, want at least 80%%", survivors, hot)
	}
	closeAll(t, c, tb)
}

// TestGhostToMain: a block evicted from the small queue without a second
// use is remembered as a ghost, and inserted again it goes to the main
// queue, where a scan does not reach it. A block inserted for the first
// time at the same moment does not survive the same scan.
func TestGhostToMain(t *testing.T) {
	const blk = 4096
	c := newCache(1 << 20)
	tb := newTable(t, c, 2000)
	// A main queue: 50 blocks read twice, moved there by a first scan.
	for i := range 50 {
		mustPut(t, tb, i, blk, 1)
		checkHit(t, tb, i, 1)
	}
	const g, fresh = 100, 101
	mustPut(t, tb, g, blk, 1)
	next := 200
	for !ghost(tb, g) {
		if next == 2000 {
			t.Fatal("block never evicted")
		}
		mustPut(t, tb, next, blk, 1)
		next++
	}
	s := &c.shards[0]
	if s.main.n < 50 {
		t.Fatalf("main queue holds %d blocks, want the 50 read twice", s.main.n)
	}
	mustPut(t, tb, g, blk, 2)
	mustPut(t, tb, fresh, blk, 2)
	if e := &c.entries[int32(tb.slots[g].Load()>>32)-1]; e.queue != qMain {
		t.Errorf("re-inserted ghost in queue %d, want main", e.queue)
	}
	for range 512 { // 2 MiB
		if next == 2000 {
			t.Fatal("out of slots")
		}
		mustPut(t, tb, next, blk, 3)
		next++
	}
	if !listed(tb, g) {
		t.Error("the re-inserted ghost did not survive the scan")
	}
	if listed(tb, fresh) {
		t.Error("a block inserted once survived a scan twice the cache")
	}
	checkHit(t, tb, g, 2)
	closeAll(t, c, tb)
}

func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newCache(64 << 10)
	tb := newTable(t, c, 1000)
	mustPut(t, tb, 0, 4096, 1)
	if n := testing.AllocsPerRun(1000, func() {
		h, ok := tb.Get(0)
		if !ok {
			panic("miss")
		}
		h.Release()
	}); n != 0 {
		t.Errorf("Get hit + Release: %v allocs", n)
	}
	i := 1
	ev := c.Stats().Evictions
	if n := testing.AllocsPerRun(1000, func() {
		i = i%999 + 1
		h, ok := tb.Reserve(i, 4096)
		if !ok {
			panic("Reserve failed")
		}
		tb.Publish(i, h, 1)
		h.Release()
	}); n != 0 {
		t.Errorf("Reserve + Publish + Release: %v allocs", n)
	}
	if got := c.Stats().Evictions - ev; got < 900 {
		t.Errorf("only %d evictions: not thrashing", got)
	}
	closeAll(t, c, tb)
}

// admit is a lookup through ReserveAdmitted: a hit, or a miss that is
// filled and published if admitted. It reports whether block i hit.
func admit(tb *Table, i, n int, v uint32) (hit bool) {
	if h, ok := tb.Get(i); ok {
		h.Release()
		return true
	}
	if h, ok := tb.ReserveAdmitted(i, n); ok {
		fill(h.Bytes(), tb.id, i, v)
		tb.Publish(i, h, v)
		h.Release()
	}
	return false
}

// TestReserveAdmitted: while the cache has room every block is admitted;
// once full, a block missed for the first time is refused and remembered
// as a ghost, and missed again soon after it is admitted.
func TestReserveAdmitted(t *testing.T) {
	const blk = 4096
	c := newCache(1 << 20)              // one shard of 256 blocks
	tb := newTable(t, c, MinCharge/8-1) // slots not charged: 256 blocks fit
	for i := range 256 {
		if admit(tb, i, blk, 1); !listed(tb, i) {
			t.Fatalf("block %d refused with room in the cache", i)
		}
	}
	if st := c.Stats(); st.Refused != 0 || st.Size != 1<<20 {
		t.Fatalf("filling: %+v", st)
	}
	if _, ok := tb.ReserveAdmitted(300, blk); ok {
		t.Fatal("a first miss in a full cache was admitted")
	}
	if !ghost(tb, 300) || c.Stats().Refused != 1 {
		t.Fatalf("a refused block: ghost %v, %+v", ghost(tb, 300), c.Stats())
	}
	admit(tb, 300, blk, 2)
	if !listed(tb, 300) {
		t.Fatal("a block missed twice in a row was not admitted")
	}
	checkHit(t, tb, 300, 2)
	closeAll(t, c, tb)
}

// TestOneOffLookupsDoNotChurn: a hot set read again and again keeps its
// hit rate through a flood of one-off lookups of blocks 40 times the
// cache, and the flood costs few insertions. With Reserve, every one-off
// block is inserted and evicts another (about 10,000 evictions here).
func TestOneOffLookupsDoNotChurn(t *testing.T) {
	const (
		blk    = 4096
		hot    = 150 // 600 KiB: 59% of the cache
		oneOff = 10240
	)
	c := newCache(1 << 20)
	tb := newTable(t, c, hot+oneOff)
	for range 3 {
		for i := range hot {
			admit(tb, i, blk, 1)
		}
	}
	for i := range 256 - hot { // fill the rest: the cache is full from here
		mustPut(t, tb, hot+oneOff-1-i, blk, 1)
	}
	before := c.Stats()
	hits, reads := 0, 0
	for j := range oneOff {
		admit(tb, hot+j, blk, 2)
		i := j % hot
		reads++
		if admit(tb, i, blk, 1) {
			hits++
		}
	}
	st := c.Stats()
	if hits < reads*9/10 {
		t.Errorf("the hot set hit %d of %d times through the one-off lookups, want at least 90%%", hits, reads)
	}
	if ev := st.Evictions - before.Evictions; ev > oneOff/10 {
		t.Errorf("%d evictions for %d one-off lookups, want at most %d", ev, oneOff, oneOff/10)
	}
	if st.Refused-before.Refused < oneOff*9/10 {
		t.Errorf("%d of %d one-off lookups refused", st.Refused-before.Refused, oneOff)
	}
	closeAll(t, c, tb)
}

// TestReserveAdmittedEntriesRunOut: a shard of small blocks runs out of
// entries (one per 2 KiB of budget) long before it runs out of chunks;
// admitting a block then evicts another as surely as when the chunks run
// out, so a first miss must be refused all the same. With 512-byte
// blocks, 1,000 one-off misses after the entries ran out were once all
// admitted (0 refused, 1,000 evictions): the doorkeeper asked only
// whether the chunks were full.
func TestReserveAdmittedEntriesRunOut(t *testing.T) {
	const (
		blk    = 512
		oneOff = 1000
	)
	c := newCache(1 << 20) // one shard: 16,384 chunks, 512 entries
	if c.Shards() != 1 || len(c.entries) != 512 {
		t.Fatalf("%d shards, %d entries; want 1 and 512", c.Shards(), len(c.entries))
	}
	tb := newTable(t, c, 512+oneOff+2) // 12 KiB of slots: charged (1 entry, 190 chunks)
	i := 0
	for ; c.shards[0].hasEntry(); i++ {
		if admit(tb, i, blk, 1); !listed(tb, i) {
			t.Fatalf("block %d refused with entries and chunks free", i)
		}
	}
	st := c.Stats()
	if st.Refused != 0 || st.Evictions != 0 || st.Size > 1<<20/2 {
		t.Fatalf("after %d blocks the entries ran out: %+v; want no refusals, no evictions, chunks mostly free", i, st)
	}
	before := st
	for j := range oneOff {
		admit(tb, i+j, blk, 2)
	}
	st = c.Stats()
	refused, evicted := st.Refused-before.Refused, st.Evictions-before.Evictions
	t.Logf("%d one-off misses with the entries used up and %d of %d bytes free: %d refused, %d evictions",
		oneOff, 1<<20-st.Size, 1<<20, refused, evicted)
	if refused != oneOff || evicted != 0 {
		t.Errorf("%d one-off misses: %d refused, %d evictions; want %d refused, 0 evictions", oneOff, refused, evicted, oneOff)
	}
	// A block missed twice in a row is still admitted, evicting one.
	k := i + oneOff
	admit(tb, k, blk, 3)
	admit(tb, k, blk, 3)
	if !listed(tb, k) {
		t.Error("a block missed twice in a row was not admitted")
	}
	closeAll(t, c, tb)
}
