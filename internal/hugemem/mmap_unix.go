//go:build unix

package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapHuge maps n bytes and a huge page more, so that a 2 MiB boundary
// falls in the first huge page, advises huge pages where they may come,
// and returns the mapping and its n bytes from that boundary; nil, nil
// if the mapping failed.
func mapHuge(n int) (mapping, b []byte) {
	m, err := unix.Mmap(-1, 0, n+hugePageBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil
	}
	if Possible() {
		Advise(m, true)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	skip := int((base+hugePageBytes-1)&^(hugePageBytes-1) - base)
	return m, m[skip : skip+n : skip+n]
}

func unmap(m []byte) { _ = unix.Munmap(m) }
