//go:build unix

package blockcache

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// mmapAnon maps n bytes of private anonymous memory, reserved lazily
// (MAP_NORESERVE): a page takes memory only once written. A mapping of n
// bytes a closed cache left (spare) is reused first. It returns the
// mmap error on failure.
func mmapAnon(n int) (mem []byte, offHeap bool, err error) {
	if b := spare.take(n); b != nil {
		return b, true, nil
	}
	data, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// munmap releases a closed cache's memory: its pages go back to the
// kernel lazily (MADV_FREE, which reclaims them only under memory
// pressure), and the mapping is kept, up to maxSpareBytes in all, for the
// next cache of the same capacity, which then fills it without a page
// fault per 4 KiB for the pages the kernel has not taken back (as a
// malloc reuses freed memory). Where MADV_FREE is refused, or past the
// bound, the mapping is unmapped.
func munmap(b []byte) {
	if unix.Madvise(b, unix.MADV_FREE) != nil || !spare.put(b) {
		_ = unix.Munmap(b)
	}
}

// mapHeld maps n bytes, rounded up to whole pages, of private anonymous
// memory for Hold, faulted in at once where the kernel can (one call
// rather than a fault per page as the holder fills it). It reports false
// if the mapping cannot be made.
func mapHeld(n int) ([]byte, bool) {
	page := unix.Getpagesize()
	b, err := unix.Mmap(-1, 0, (n+page-1)/page*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, false
	}
	_ = populate(b)
	return b, true
}

// dropHeld returns held memory's pages to the kernel at its Release,
// leaving it mapped and reading as zeros (MADV_DONTNEED) for a holder
// that may still read it. Should the call fail, the pages stay until
// unmapHeld.
func dropHeld(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }

// heldUnmaps counts the mappings unmapHeld gave back; for tests.
var heldUnmaps atomic.Int64

// unmapHeld unmaps held memory, once its Table is garbage.
func unmapHeld(b []byte) {
	_ = unix.Munmap(b)
	heldUnmaps.Add(1)
}

// maxSpareBytes bounds the memory of closed caches kept mapped for reuse.
const maxSpareBytes = 1 << 30

// spare holds the mappings of closed caches.
var spare = spareMaps{limit: maxSpareBytes}

type spareMaps struct {
	mu    sync.Mutex
	maps  [][]byte
	bytes int
	limit int // bytes kept at most
}

func (s *spareMaps) put(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+len(b) > s.limit {
		return false
	}
	s.maps = append(s.maps, b)
	s.bytes += len(b)
	return true
}

// take returns a kept mapping of exactly n bytes, or nil.
func (s *spareMaps) take(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range s.maps {
		if len(b) == n {
			s.maps = append(s.maps[:i], s.maps[i+1:]...)
			s.bytes -= n
			return b
		}
	}
	return nil
}
