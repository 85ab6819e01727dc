//go:build !unix

package leveldb

// lockFile is a no-op where flock and fcntl locks are missing.
type lockFile struct{}

func lockDB(dir string) (*lockFile, error) { return &lockFile{}, nil }

func (l *lockFile) release() error { return nil }
