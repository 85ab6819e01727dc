//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"errors"
	"os"
)

// lockDir reports that there is no flock here: builds run unlocked, and
// no working directory is taken for stale.
func lockDir(f *os.File) (bool, error) {
	return false, errors.New("no flock on this system")
}
