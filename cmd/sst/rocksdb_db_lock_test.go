//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRocksDBDBLocked: a database whose LOCK another process holds (as a
// running RocksDB does) is refused, saying so and naming the LOCK file.
func TestRocksDBDBLocked(t *testing.T) {
	db := copyRocksDB(t, "s6")
	lock := filepath.Join(db, "LOCK")
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Skipf("no flock: %v", err)
	}
	for _, args := range [][]string{
		{"scan", "-rocksdb", db},
		{"get", "-rocksdb", db, "k"},
		{"verify", "-rocksdb", db},
		{"info", "-rocksdb", db},
		{"build", "-rocksdb", db, "-o", filepath.Join(t.TempDir(), "x.sst")},
	} {
		wantError(t, args, 1, "held by a RocksDB process", lock)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	mustSST(t, "verify", "-rocksdb", db)
}
