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
	return data
}

func munmap(b []byte) { _ = unix.Munmap(b) }
