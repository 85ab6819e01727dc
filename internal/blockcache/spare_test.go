//go:build unix

package blockcache

import "testing"

// TestSpareMappingsReused checks that a closed cache's memory is kept for
// the next cache of the same capacity, and only up to maxSpareBytes.
func TestSpareMappingsReused(t *testing.T) {
	const capacity = 8 << 20
	c := newCache(capacity)
	if !c.offHeap {
		t.Skip("no anonymous mapping here")
	}
	mem := c.mem
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := newCache(capacity)
	defer c2.Close()
	if &c2.mem[0] != &mem[0] || len(c2.mem) != len(mem) {
		t.Fatalf("a new cache of the same capacity got a fresh mapping, not the closed cache's")
	}
	// A different size does not take it.
	c3 := newCache(capacity / 2)
	defer c3.Close()
	if len(c3.mem) == len(mem) && &c3.mem[0] == &mem[0] {
		t.Fatalf("a smaller cache reused a larger mapping")
	}
	// The spare memory is bounded.
	s := spareMaps{limit: 100}
	if !s.put(make([]byte, 50), 40) || !s.put(make([]byte, 50), 50) || s.put(make([]byte, 1), 1) {
		t.Fatalf("spare maps: bound of %d bytes not kept", s.limit)
	}
	// A mapping is taken only where it reads as zeros as far as asked.
	if s.take(50, 30) != nil || s.take(50, 45) == nil || s.take(50, 45) != nil || s.take(50, 50) == nil || s.take(50, 50) != nil || s.bytes != 0 {
		t.Fatalf("spare maps: take gave back the wrong mappings (%d bytes left)", s.bytes)
	}
}
