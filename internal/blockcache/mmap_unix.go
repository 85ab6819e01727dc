//go:build unix

package blockcache

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmapAnon maps n bytes of private anonymous memory, reserved lazily
// (MAP_NORESERVE): a page takes memory only once written, and reads as
// zeros until then. A mapping of a huge page or more starts on a 2 MiB
// boundary, so that the huge pages the cache asks for line up with its
// shards (each a whole number of them for a capacity of a power of two
// from 8 MiB): a shard's set-aside region then shares a huge page with
// its blocks only where it starts (see shard.setAside). It returns the
// mmap error on failure.
func mmapAnon(n int) (mem []byte, offHeap bool, err error) {
	extra := 0
	if n >= hugePageBytes {
		extra = hugePageBytes
	}
	// MmapPtr, not Mmap: the ends are unmapped here, and Close unmaps the
	// mapping in parts (releaseRegion), which unix.Munmap, keyed by the
	// whole mapping, refuses.
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+extra), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, false, err
	}
	b := unsafe.Slice((*byte)(p), n+extra)
	if extra > 0 {
		skip := int((uintptr(p)+hugePageBytes-1)&^(hugePageBytes-1) - uintptr(p))
		end := (skip + n + pageSize - 1) / pageSize * pageSize
		if skip > 0 {
			_ = unix.MunmapPtr(p, uintptr(skip))
		}
		if end < len(b) {
			_ = unix.MunmapPtr(unsafe.Pointer(&b[end]), uintptr(len(b)-end))
		}
		b = b[skip : skip+n : skip+n]
	}
	return b, true, nil
}

// pageSize is the size of a page, the unit of mmap and madvise.
var pageSize = unix.Getpagesize()

// releaseRegion gives a closed cache's mapping back at once: the
// budget's memory, b[:memLen], and the shards' bitmaps and run trees,
// b[metaFrom:], are unmapped; the entries between them lose their pages
// (MADV_DONTNEED) and are returned, to be unmapped once the Cache is
// garbage, since a Get racing the Close of its Table may still read an
// entry (and find it free). The entries are 3% of the capacity.
func releaseRegion(b []byte, memLen, metaFrom int) (tail []byte) {
	cut := memLen / pageSize * pageSize
	if cut > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(cut))
	}
	if metaFrom < len(b) {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[metaFrom]), uintptr(len(b)-metaFrom))
	}
	tail = b[cut:metaFrom:metaFrom]
	if len(tail) > 0 {
		_ = unix.Madvise(tail, unix.MADV_DONTNEED)
	}
	return tail
}

// dropPages gives the pages of b, whole pages of the budget set aside
// for Hold and Charge, back to the kernel at once (MADV_DONTNEED): they
// read as zeros from then on, and take memory again only when a block
// is written there once the region shrinks.
func dropPages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
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
