package leveldb_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// countingReaderAt counts the reads made through it.
type countingReaderAt struct {
	r     io.ReaderAt
	reads atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// TestGetThroughFilters reads a table of many filters (one per 2 KiB of
// data-block offsets), under both filter names: every key is found
// through its block's filter, and absent keys are not found, nearly all
// of them without a data block read. Absent keys lie between present
// ones, so that only the filter rules them out: a filter that always said
// yes would find none of them either, but read a block for each (the
// test counts the table's reads of its file, over an io.ReaderAt, on a
// table opened afresh with a cache of its own). 10 bits per key give
// LevelDB's filter a false-positive rate of about 1%, 2%: 4 to 8 keys.
func TestGetThroughFilters(t *testing.T) {
	var es []ldbtest.Entry
	for i := 0; i < 400; i++ {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", 2*i)), Seq: uint64(i + 1), Kind: 1, Value: bytes.Repeat([]byte{'v'}, 100)})
	}
	for _, name := range []string{leveldb.FilterLevelDB, leveldb.FilterGoLevelDB} {
		data := ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 1000, FilterName: name})
		c, err := cache.New(cache.MinCapacity)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		src := &countingReaderAt{r: bytes.NewReader(data)}
		tb, err := leveldb.NewTable(src, int64(len(data)), &leveldb.TableOptions{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		info := tb.Info()
		if info.Filters < 10 || "filter."+info.Filter != name {
			t.Fatalf("%s: %d filters named %q", name, info.Filters, info.Filter)
		}
		// Absent keys first, while no data block is cached.
		src.reads.Store(0)
		for i := 0; i < 400; i++ {
			k := []byte(fmt.Sprintf("k%04d", 2*i+1))
			if _, err := tb.Get(k, leveldb.MaxSequence); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%s) of an absent key: %v", k, err)
			}
		}
		absentReads := src.reads.Load()
		src.reads.Store(0)
		for _, e := range es {
			if got, err := tb.Get(e.Key, leveldb.MaxSequence); err != nil || got.Seq != e.Seq {
				t.Fatalf("Get(%s) = %+v, %v", e.Key, got, err)
			}
		}
		presentReads := src.reads.Load()
		// A present key costs a read of its block (400 measured): what
		// each absent key would cost past a filter saying yes. 7 absent
		// keys of 400 pass the filters (measured; deterministic input).
		if presentReads < 200 || absentReads > 20 {
			t.Fatalf("%s: %d reads for 400 absent keys, %d for 400 present ones: the filters rule out too few", name, absentReads, presentReads)
		}
		t.Logf("%s: %d reads for 400 absent keys, %d for 400 present ones", name, absentReads, presentReads)
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
