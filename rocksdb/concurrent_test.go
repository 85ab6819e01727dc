package rocksdb_test

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/rocksdb"
)

// TestConcurrentReads reads one table from many goroutines at once (Gets
// and scans, under -race in CI) and checks each sees the entries a single
// scan saw.
func TestConcurrentReads(t *testing.T) {
	paths, _ := filepath.Glob("testdata/golden/native/*/*.sst")
	if len(paths) == 0 {
		t.Fatal("no golden tables")
	}
	for _, path := range paths[:min(3, len(paths))] {
		tb, err := rocksdb.OpenTable(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		type ent struct {
			key, value []byte
			seq        uint64
		}
		var want []ent
		it := tb.NewIter(nil)
		for ok := it.First(); ok; ok = it.Next() {
			want = append(want, ent{bytes.Clone(it.Key()), bytes.Clone(it.Value()), it.Seq()})
		}
		if err := it.Close(); err != nil || len(want) == 0 {
			t.Fatalf("%s: %d entries, %v", path, len(want), err)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		deadline := time.Now().Add(30 * time.Second)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				it := tb.NewIter(nil)
				defer it.Close()
				i := 0
				for ok := it.First(); ok && time.Now().Before(deadline); ok = it.Next() {
					if !bytes.Equal(it.Key(), want[i].key) || it.Seq() != want[i].seq || !bytes.Equal(it.Value(), want[i].value) {
						errs <- "scan differs"
						return
					}
					i++
				}
				if i != len(want) {
					errs <- "scan stopped short"
					return
				}
				for j := g; j < len(want); j += 8 {
					e, err := tb.Get(want[j].key, rocksdb.MaxSequence)
					if err != nil && !bytesIsUnresolved(err) {
						errs <- err.Error()
						return
					}
					if e.Seq < want[j].seq {
						errs <- "Get found an older version than a scan"
						return
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("%s: %s", path, e)
		}
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func bytesIsUnresolved(err error) bool {
	_, ok := err.(*rocksdb.UnresolvedError)
	return ok
}
