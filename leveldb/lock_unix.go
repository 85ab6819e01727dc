//go:build unix

package leveldb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockFile is a shared lock on a database's LOCK file: the flock goleveldb
// takes and the fcntl (POSIX record) lock LevelDB takes, so that neither
// can open the database for writing while it is held, and neither holds
// it now.
type lockFile struct{ f *os.File }

func lockDB(dir string) (*lockFile, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("leveldb: open %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("leveldb: open %s: not a directory", dir)
	}
	path := filepath.Join(dir, "LOCK")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &lockFile{}, nil // never opened by LevelDB (a copy): no one holds it
	}
	if err != nil {
		return nil, fmt.Errorf("leveldb: open %s: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (flock)", ErrLocked, path)
		}
		return nil, fmt.Errorf("leveldb: lock %s: %w", path, err)
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("%w: %s (fcntl)", ErrLocked, path)
		}
		return nil, fmt.Errorf("leveldb: lock %s: %w", path, err)
	}
	return &lockFile{f: f}, nil
}

// release drops both locks (closing the file does).
func (l *lockFile) release() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
