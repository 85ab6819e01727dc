//go:build unix

package blockcache

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmapAnon maps n bytes of private anonymous memory, reserved lazily
// (MAP_NORESERVE): a page takes memory only once written, and reads as
// zeros until then. A mapping of n bytes a closed cache left (spare) is
// reused first, if it reads as zeros from zeroFrom on (munmapZeroing);
// before, it holds what it held. It returns the mmap error on failure.
func mmapAnon(n, zeroFrom int) (mem []byte, offHeap bool, err error) {
	if b := spare.take(n, zeroFrom); b != nil {
		return b, true, nil
	}
	// MmapPtr, not Mmap: Close may unmap part of the mapping (releaseRegion),
	// which unix.Munmap, keyed by the whole mapping, refuses.
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, false, err
	}
	return unsafe.Slice((*byte)(p), n), true, nil
}

// pageSize is the size of a page, the unit of mmap and madvise.
var pageSize = unix.Getpagesize()

// releaseRegion releases a closed cache's mapping b: its pages go back
// to the kernel lazily (MADV_FREE, which reclaims them only under memory
// pressure), and the mapping is kept, up to maxSpareBytes in all, for the
// next cache of the same capacity, which then fills it without a page
// fault per 4 KiB for the pages the kernel has not taken back (as a
// malloc reuses freed memory). b[zeroFrom:], the shards' bitmaps and run
// trees, is emptied at once (MADV_DONTNEED), so that it reads as zeros,
// as a new cache takes it. Where madvise is refused, or past the bound,
// the budget's memory, b[:memLen], is unmapped, and the rest (the
// entries, a few percent of it) is returned, to be unmapped once the
// Cache is garbage: a Get racing the Close of its Table may still read
// an entry (and finds it free).
func releaseRegion(b []byte, memLen, zeroFrom int) (tail []byte) {
	if unix.Madvise(b[zeroFrom:], unix.MADV_DONTNEED) == nil &&
		unix.Madvise(b[:zeroFrom], unix.MADV_FREE) == nil && spare.put(b, zeroFrom) {
		return nil
	}
	cut := memLen / pageSize * pageSize
	if cut > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(cut))
	}
	tail = b[cut:]
	_ = unix.Madvise(tail, unix.MADV_DONTNEED)
	return tail
}

// unmapTail unmaps what releaseRegion left mapped, once its Cache is
// garbage.
func unmapTail(b []byte) {
	if len(b) > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b)))
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

// maxSpareBytes bounds the memory of closed caches kept mapped for reuse:
// 1 GiB of budget, and its entries and metadata (1/32 and 1/256 of it).
const maxSpareBytes = 1<<30 + 1<<30/16

// spare holds the mappings of closed caches.
var spare = spareMaps{limit: maxSpareBytes}

type spareMaps struct {
	mu    sync.Mutex
	maps  []spareMap
	bytes int
	limit int // bytes kept at most
}

// spareMap is a kept mapping, which reads as zeros from zeroFrom on.
type spareMap struct {
	b        []byte
	zeroFrom int
}

func (s *spareMaps) put(b []byte, zeroFrom int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+len(b) > s.limit {
		return false
	}
	s.maps = append(s.maps, spareMap{b, zeroFrom})
	s.bytes += len(b)
	return true
}

// take returns a kept mapping of exactly n bytes that reads as zeros
// from zeroFrom on, or nil.
func (s *spareMaps) take(n, zeroFrom int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.maps {
		if b := m.b; len(b) == n && m.zeroFrom <= zeroFrom {
			s.maps = append(s.maps[:i], s.maps[i+1:]...)
			s.bytes -= n
			return b
		}
	}
	return nil
}
