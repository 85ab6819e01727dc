package reader_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestStateCharged: what a reader keeps on the Go heap per data block (a
// cache slot; for a mapped file, a checked flag) and per partition (its
// handle and top-level key) is charged to its cache from first use to
// Close (Stats.Held, inside Size), mapped or over an io.ReaderAt, for one-
// level and partitioned tables.
func TestStateCharged(t *testing.T) {
	es := numbered(40000, func(i int) string { return fmt.Sprintf("value %d", i) })
	for _, parted := range []bool{false, true} {
		for _, comp := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			opts := &builder.Options{BlockSize: 256, Compression: comp}
			if parted {
				opts.PartitionThreshold = 1
			}
			data, props := build(t, es, opts)
			blocks := int64(props.NumDataBlocks)
			for _, mapped := range []bool{false, true} {
				if mapped && !mmapSupported {
					continue
				}
				name := fmt.Sprintf("partitioned=%v/%v/mapped=%v", parted, comp, mapped)
				t.Run(name, func(t *testing.T) {
					ropts := cacheOpts(t, 64<<20)
					c := ropts.Cache
					var r *reader.Reader
					if mapped {
						r = openFile(t, data, ropts)
					} else {
						var err error
						if r, err = reader.New(bytes.NewReader(data), int64(len(data)), ropts); err != nil {
							t.Fatal(err)
						}
					}
					for i := 0; i < len(es); i += 97 {
						if _, err := r.Get([]byte(es[i].Key)); err != nil {
							t.Fatal(err)
						}
					}
					// Mapped: the filter's copy (10 bits a key), 4 bytes a
					// block of checked flags, and the slots of a compressed
					// table's cached blocks (8 bytes a block). Over a
					// ReaderAt: the slots.
					want := 8 * blocks
					if mapped {
						want = int64(len(es))*10/8 + 4*blocks
						if comp != format.NoCompression {
							want += 8 * blocks
						}
					}
					st := c.Stats()
					if st.Held < want || st.Size < st.Held || st.Size > st.Capacity {
						t.Fatalf("%d data blocks: Held %d, want at least %d; Size %d", blocks, st.Held, want, st.Size)
					}
					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
					if st := c.Stats(); st.Held != 0 || st.Size != 0 {
						t.Fatalf("after Close: Held %d, Size %d, want 0", st.Held, st.Size)
					}
				})
			}
		}
	}
}
