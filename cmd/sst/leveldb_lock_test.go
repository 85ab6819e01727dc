//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLevelDBLocked: a database that a LevelDB or goleveldb process has
// open (it holds LOCK) is refused, naming the LOCK file.
func TestLevelDBLocked(t *testing.T) {
	db := copyLevelDB(t)
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
		{"scan", "-leveldb", db},
		{"get", "-leveldb", db, "key00001"},
		{"verify", "-leveldb", db},
		{"build", "-leveldb", db, "-o", filepath.Join(t.TempDir(), "x.sst")},
	} {
		wantError(t, args, 1, "locked by another process", lock)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	mustSST(t, "get", "-leveldb", db, "key00001")
}
