//go:build unix

package cache

import "golang.org/x/sys/unix"

// mmapAnon maps n bytes of private anonymous memory, reserved lazily
// (MAP_NORESERVE): a page takes memory only once written. It returns nil
// on failure.
func mmapAnon(n int) []byte {
	data, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	// Transparent huge pages, where the kernel leaves them to madvise:
	// lookups land on random blocks of the whole budget, and 2 MiB pages
	// spare them most TLB misses. Pages still fill only as blocks do,
	// within the capacity.
	_ = unix.Madvise(data, unix.MADV_HUGEPAGE)
	return data
}

func munmap(b []byte) { _ = unix.Munmap(b) }
