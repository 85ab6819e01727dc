//go:build unix

package blockcache

import "testing"

// TestStaleGetAfterClose: a Get that read its slot before its Table's
// Close may reach the entry after the Cache's Close too, now that the
// entries lie in the cache's mapping rather than on the Go heap. The
// entry must still be readable, and free, though the budget's memory is
// unmapped: the Get reports a miss.
func TestStaleGetAfterClose(t *testing.T) {
	c := newCache(8 << 20)
	tb := newTable(t, c, 4)
	if !put(tb, 1, 4096, 7) {
		t.Fatal("put failed")
	}
	w := tb.slots[1].Load()
	tb.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	tb.slots[1].Store(w) // as the racing Get read it
	if h, ok := tb.Get(1); ok {
		h.Release()
		t.Fatal("a Get after Close found the block")
	}
	_ = tb.Window(1, 64) // prefetches, never faults
}
