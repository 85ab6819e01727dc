package leveldb_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// TestConcurrentReads shares one DB, and a cache far smaller than its
// blocks, among goroutines that scan both ways, seek and Get at once
// (run under -race in CI): every read must equal the golden dump, with
// tables opened lazily by whichever goroutine needs them first.
func TestConcurrentReads(t *testing.T) {
	golden := filepath.Join("testdata", "golden", "snappy")
	dir := filepath.Join(t.TempDir(), "db")
	copyDir(t, golden, dir, false)
	dump, err := os.ReadFile(golden + ".dump")
	if err != nil {
		t.Fatal(err)
	}
	want := parseView(t, splitLines(dump))
	c, err := cache.New(64 << 10)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := leveldb.OpenDB(dir, &leveldb.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- readAll(db, want, g%2 == 1)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range want.keys {
				if i%(g+2) != 0 {
					continue
				}
				v, err := db.Get([]byte(k))
				if err != nil || !bytes.Equal(v, []byte(want.vals[i])) {
					errs <- fmt.Errorf("Get(%x) = %x, %v", k, v, err)
					return
				}
				if _, err := db.Get(append([]byte(k), 0xfe, 0xfd)); !errors.Is(err, reader.ErrNotFound) {
					errs <- fmt.Errorf("Get of an absent key: %v", err)
					return
				}
			}
			errs <- nil
		}()
	}
	// A read stuck inside the DB (a move that never returns) fails here
	// with a message rather than at the package timeout.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the concurrent reads did not end within 2 minutes")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readAll scans db forward or backward and checks it against want.
func readAll(db *leveldb.DB, want *view, backward bool) error {
	it := db.NewIterator(nil)
	defer it.Close()
	n := 0
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			i := len(want.keys) - 1 - n
			if i < 0 || string(it.Key()) != want.keys[i] || string(it.Value()) != want.vals[i] {
				return fmt.Errorf("backward scan differs at %d: %x", n, it.Key())
			}
			n++
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			if n >= len(want.keys) || string(it.Key()) != want.keys[n] || string(it.Value()) != want.vals[n] {
				return fmt.Errorf("forward scan differs at %d: %x", n, it.Key())
			}
			n++
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if n != len(want.keys) {
		return fmt.Errorf("scan read %d of %d keys", n, len(want.keys))
	}
	return nil
}
