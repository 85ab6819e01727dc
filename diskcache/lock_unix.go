//go:build unix

package diskcache

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// haveFlock tells whether Open refuses a directory another Cache holds.
const haveFlock = true

// lockFile takes an exclusive flock on f without waiting: ErrLocked if
// another open file description holds one.
func lockFile(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
