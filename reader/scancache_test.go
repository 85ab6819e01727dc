package reader_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestScanDoesNotEvictGets checks that the cache resists scans: blocks
// that Gets use more than once stay cached through two full scans of a
// table many times the cache's size, and the scans still see every entry.
// With LRU or plain FIFO eviction the scans would flush them.
func TestScanDoesNotEvictGets(t *testing.T) {
	es := numbered(2000, func(i int) string { return fmt.Sprintf("value-%06d-%s", i, bytes.Repeat([]byte{'x'}, 40)) })
	data, props := build(t, es, &builder.Options{Compression: format.SnappyCompression, BlockSize: 1024})
	if props.NumDataBlocks < 40 {
		t.Fatalf("only %d data blocks", props.NumDataBlocks)
	}
	// Room for about 8 decoded blocks.
	for _, open := range []func(*testing.T, []byte, *reader.Options) *reader.Reader{
		func(t *testing.T, d []byte, o *reader.Options) *reader.Reader { return openMem(t, d, o) },
		openFile,
	} {
		r := open(t, data, cacheOpts(t, 8*1400))
		// Gets of keys in the first blocks fill the cache.
		for i := 0; i < 60; i++ {
			if _, err := r.Get([]byte(es[i].Key)); err != nil {
				t.Fatal(err)
			}
		}
		var cachedBefore []int
		for i := 0; i < int(props.NumDataBlocks); i++ {
			if reader.CachedBlock(r, i) {
				cachedBefore = append(cachedBefore, i)
			}
		}
		if len(cachedBefore) == 0 {
			t.Fatal("Gets cached no block")
		}
		for pass := 0; pass < 2; pass++ {
			got, err := scan(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(es) || got[len(got)-1].Key != es[len(es)-1].Key || got[1234].Value != es[1234].Value {
				t.Fatalf("scan returned %d entries", len(got))
			}
		}
		for _, i := range cachedBefore {
			if !reader.CachedBlock(r, i) {
				t.Errorf("block %d, cached by Gets, was evicted by a scan of a full cache", i)
			}
		}
		r.Close()
	}
}
