//go:build unix

package lsmdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock is a shared lock on a database's LOCK file: the flock goleveldb
// takes and the fcntl (POSIX record) lock LevelDB and RocksDB take, so
// that none of them can open the database for writing while it is held,
// and none holds it now.
type Lock struct{ f *os.File }

// LockDir takes the shared lock on dir's LOCK file; a database another
// process holds gives an error wrapping errLocked. A directory without a
// LOCK file (a copy) is not locked. pkg prefixes other errors.
func LockDir(dir string, errLocked error, pkg string) (*Lock, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: open %s: %w", pkg, dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: open %s: not a directory", pkg, dir)
	}
	path := filepath.Join(dir, "LOCK")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Lock{}, nil // never opened by its engine (a copy): no one holds it
	}
	if err != nil {
		return nil, fmt.Errorf("%s: open %s: %w", pkg, dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (flock)", errLocked, path)
		}
		return nil, fmt.Errorf("%s: lock %s: %w", pkg, path, err)
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("%w: %s (fcntl)", errLocked, path)
		}
		return nil, fmt.Errorf("%s: lock %s: %w", pkg, path, err)
	}
	return &Lock{f: f}, nil
}

// Release drops both locks (closing the file does).
func (l *Lock) Release() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
