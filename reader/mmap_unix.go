//go:build unix

package reader

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps size bytes of f read-only and shared. The mapping stays
// valid after f is closed.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errNoMmap
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// Point lookups touch a few pages at random; read-ahead would waste I/O.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	return data, nil
}

func munmap(data []byte) error { return unix.Munmap(data) }

// adviseAccess tells the kernel how the mapping will be read: sequentially
// (full scans, Verify: read-ahead pays) or randomly (point lookups).
func adviseAccess(data []byte, sequential bool) {
	advice := unix.MADV_RANDOM
	if sequential {
		advice = unix.MADV_SEQUENTIAL
	}
	_ = unix.Madvise(data, advice)
}
