package reader_test

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestScanAhead: a forward walk that enters data block i prefetches block
// i+1 from where it is about to be read: the cache's copy when the block
// is cached (a snappy table whose blocks point lookups decoded), the
// stored bytes in the mapping otherwise (an uncompressed table). Each
// Next takes two lines off the window.
func TestScanAhead(t *testing.T) {
	es := numbered(2000, func(i int) string { return fmt.Sprintf("value %d %s", i, bytes.Repeat([]byte{'v'}, 60)) })
	for _, c := range []format.Compression{format.SnappyCompression, format.NoCompression} {
		t.Run(c.String(), func(t *testing.T) {
			data, _ := build(t, es, &builder.Options{Compression: c})
			blocks := dataBlocks(t, data)
			if len(blocks) < 3 {
				t.Fatalf("%d data blocks, want 3 or more", len(blocks))
			}
			r := openFile(t, data, cacheOpts(t, 64<<20))
			for _, e := range es[len(blocks[0].Keys):] { // every block but the first, cached if cacheable
				if _, err := r.Get([]byte(e.Key)); err != nil {
					t.Fatal(err)
				}
			}
			it := r.NewIterator()
			defer it.Close()
			if !it.First() {
				t.Fatal(it.Err())
			}
			ahead := reader.ScanAhead(it)
			if len(ahead) == 0 {
				t.Fatal("no window after First")
			}
			if c == format.NoCompression {
				h := blocks[1].Handle
				if want := data[h.Offset:][:len(ahead)]; !bytes.Equal(ahead, want) {
					t.Errorf("window is not block 1's stored bytes")
				}
			} else {
				pin, ok := reader.BlockTable(r).Get(1)
				if !ok {
					t.Fatal("block 1 not cached")
				}
				if unsafe.SliceData(ahead) != unsafe.SliceData(pin.Bytes()) {
					t.Errorf("window at %p, block 1 cached at %p", unsafe.SliceData(ahead), unsafe.SliceData(pin.Bytes()))
				}
				pin.Release()
			}
			it.Next()
			if got := len(reader.ScanAhead(it)); got != len(ahead)-128 {
				t.Errorf("window after a Next: %d bytes, want %d", got, len(ahead)-128)
			}
			// A scan with windows sees every entry.
			got, err := scan(r)
			if err != nil || len(got) != len(es) {
				t.Fatalf("scan: %d entries, %v; want %d", len(got), err, len(es))
			}
		})
	}
}
