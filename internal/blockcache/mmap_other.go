//go:build !unix

package blockcache

// mmapAnon is unavailable here: the budget is Go heap memory.
func mmapAnon(n int) (mem []byte, offHeap bool, err error) { return make([]byte, n), false, nil }

func munmap(b []byte) {}

func keepReadable(b []byte) {}
