package blockcache

import (
	"testing"
	"unsafe"
)

// TestWindow: Window gives the memory a cached block's Handle reads,
// clipped to n bytes and to the mapping, and nothing for a slot that is
// empty, a ghost or out of range.
func TestWindow(t *testing.T) {
	c := newCache(4 << 20)
	defer c.Close()
	tb, _ := c.NewTable(4)
	defer tb.Close()
	if !put(tb, 0, 5000, 1) || !put(tb, 1, 100, 2) {
		t.Fatal("put failed")
	}
	for i, size := range []int{5000, 100} {
		h, ok := tb.Get(i)
		if !ok {
			t.Fatalf("block %d not cached", i)
		}
		w := tb.Window(i, 4608)
		if len(w) != 4608 || unsafe.SliceData(w) != unsafe.SliceData(h.Bytes()) {
			t.Errorf("block %d (%d bytes): window of %d bytes at %p, want 4608 at %p", i, size, len(w), unsafe.SliceData(w), unsafe.SliceData(h.Bytes()))
		}
		h.Release()
	}
	// The last block of the mapping: the window stops at its end.
	last := len(c.mem) - ChunkSize
	tb.slots[3].Store(liveWord(0, uint32(last/ChunkSize)))
	if w := tb.Window(3, 4608); len(w) != ChunkSize {
		t.Errorf("window at the mapping's end: %d bytes, want %d", len(w), ChunkSize)
	}
	tb.slots[3].Store(0)
	tb.slots[2].Store(ghostBit | 7)
	for _, i := range []int{-1, 2, 3, 4} {
		if w := tb.Window(i, 4608); w != nil {
			t.Errorf("Window(%d) = %d bytes, want nil", i, len(w))
		}
	}
}
