package leveldb_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// TestGetThroughFilters reads a table of many filters (one per 2 KiB of
// data-block offsets), under both filter names: every key is found
// through its block's filter, and absent keys are not found.
func TestGetThroughFilters(t *testing.T) {
	var es []ldbtest.Entry
	for i := 0; i < 400; i++ {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", 2*i)), Seq: uint64(i + 1), Kind: 1, Value: bytes.Repeat([]byte{'v'}, 100)})
	}
	for _, name := range []string{leveldb.FilterLevelDB, leveldb.FilterGoLevelDB} {
		data := ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 1000, FilterName: name})
		tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		info := tb.Info()
		if info.Filters < 10 || "filter."+info.Filter != name {
			t.Fatalf("%s: %d filters named %q", name, info.Filters, info.Filter)
		}
		for _, e := range es {
			if got, err := tb.Get(e.Key, leveldb.MaxSequence); err != nil || got.Seq != e.Seq {
				t.Fatalf("Get(%s) = %+v, %v", e.Key, got, err)
			}
		}
		for i := 0; i < 400; i++ {
			k := []byte(fmt.Sprintf("k%04d", 2*i+1))
			if _, err := tb.Get(k, leveldb.MaxSequence); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%s) of an absent key: %v", k, err)
			}
		}
		tb.Close()
	}
}
