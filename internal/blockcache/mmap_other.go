//go:build !unix

package blockcache

// mmapAnon is unavailable here: the budget is Go heap memory.
func mmapAnon(n int) (mem []byte, offHeap bool, err error) { return make([]byte, n), false, nil }

func munmap(b []byte) {}

// mapHeld takes Hold's memory from the heap, as the budget's.
func mapHeld(n int) ([]byte, bool) { return make([]byte, n), true }

func dropHeld(b []byte) {}

func unmapHeld(b []byte) {}
