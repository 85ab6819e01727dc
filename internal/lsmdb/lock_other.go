//go:build !unix

package lsmdb

// Lock is a no-op where flock and fcntl locks are missing.
type Lock struct{}

// LockDir takes no lock here.
func LockDir(dir string, errLocked error, pkg string) (*Lock, error) { return &Lock{}, nil }

// Release does nothing.
func (l *Lock) Release() error { return nil }
