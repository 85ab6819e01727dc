package reader

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"
)

func TestBlockCacheBudgetAndClock(t *testing.T) {
	c := newBlockCache(10, 300)
	block := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	for i := 0; i < 3; i++ {
		c.put(i, block(i))
	}
	if c.used != 300 {
		t.Fatalf("used = %d, want 300", c.used)
	}
	c.get(0)                                                     // referenced: the clock must pass over it once
	held := unsafe.Slice(c.data[1].Load(), c.meta[1].Load()>>32) // without setting the reference bit
	c.put(3, block(3))
	if _, ok := c.get(1); ok {
		t.Fatal("block 1 (unreferenced, first after 0) should have been evicted")
	}
	for _, i := range []int{0, 2, 3} {
		if b, ok := c.get(i); !ok || !bytes.Equal(b, block(i)) {
			t.Fatalf("block %d: ok=%v", i, ok)
		}
	}
	if !bytes.Equal(held, block(1)) {
		t.Fatal("a slice handed out before eviction changed")
	}
	if c.used > c.budget {
		t.Fatalf("used %d exceeds budget %d", c.used, c.budget)
	}
	// Larger than the whole budget: returned, not cached.
	big := make([]byte, 400)
	if got := c.put(9, big); len(got) != 400 {
		t.Fatal("oversized block not returned")
	}
	if _, ok := c.get(9); ok {
		t.Fatal("block larger than the budget was cached")
	}
	// A second put of a resident block returns the first copy.
	if got := c.put(0, block(7)); got[0] != 0 {
		t.Fatal("put replaced a resident block")
	}
}

func TestBlockCacheConcurrent(t *testing.T) {
	const blocks = 64
	c := newBlockCache(blocks, 16*128)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 5000; n++ {
				i := (n*7 + g*13) % blocks
				b, ok := c.get(i)
				if !ok {
					b = c.put(i, bytes.Repeat([]byte{byte(i)}, 128))
				}
				if len(b) != 128 || b[0] != byte(i) || b[127] != byte(i) {
					t.Errorf("block %d has wrong contents", i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if c.used > c.budget || c.used != int64(128*len(c.ring)) {
		t.Fatalf("used %d, budget %d, %d resident", c.used, c.budget, len(c.ring))
	}
}
