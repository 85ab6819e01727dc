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

// TestSpansCharged: the decoded span block's value slices (and, without
// a mapping, the block's bytes) are charged to the cache from the first
// SpanAt to Close.
func TestSpansCharged(t *testing.T) {
	var buf bytes.Buffer
	bl := builder.New(&buf, nil)
	const n = 20000
	for i := range n {
		if err := bl.AddSpan(fmt.Appendf(nil, "k%08d", 2*i), fmt.Appendf(nil, "k%08d", 2*i+1), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := bl.Finish(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, mapped := range []bool{false, true} {
		if mapped && !mmapSupported {
			continue
		}
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
		before := c.Stats().Held
		if _, err := r.SpanAt([]byte("k00000100")); err != nil {
			t.Fatal(err)
		}
		if held := c.Stats().Held - before; held < n*24 {
			t.Errorf("mapped=%v: the span block charged %d bytes, want at least %d", mapped, held, n*24)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if held := c.Stats().Held; held != 0 {
			t.Errorf("mapped=%v: Held %d after Close", mapped, held)
		}
	}
}
