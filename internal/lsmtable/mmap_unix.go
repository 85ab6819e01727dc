//go:build unix

package lsmtable

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps size bytes of f read-only and shared; the mapping stays
// valid after f is closed.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("leveldb: cannot map")
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(data, unix.MADV_RANDOM) // point lookups: read-ahead would waste I/O
	return data, nil
}

func munmap(data []byte) error { return unix.Munmap(data) }
