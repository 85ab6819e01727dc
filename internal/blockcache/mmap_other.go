//go:build !unix

package blockcache

// mmapAnon is unavailable here: the budget is Go heap memory, as are the
// entries and metadata New carves from it.
func mmapAnon(n int) (mem []byte, offHeap bool, err error) {
	return make([]byte, n), false, nil
}

// pageSize aligns a cache's metadata in its memory, as on unix.
const pageSize = 4096

func releaseRegion(b []byte, memLen, metaFrom int) (tail []byte) { return nil }

func dropPages(b []byte) {}

func unmapTail(b []byte) {}

// mapHeld takes Hold's memory from the heap, as the budget's.
func mapHeld(n int) ([]byte, bool) { return make([]byte, n), true }

func dropHeld(b []byte) {}

func unmapHeld(b []byte) {}
