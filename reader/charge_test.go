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

// TestSpansCharged: the decoded span block's value slices, value
// offsets and sampled prefixes (SpanBlock.HeapBytes: 24 bytes a value, 4
// a fragment, 8 every 64 fragments) are charged to the cache from the
// first SpanAt to Close; without a mapping, so is the block itself (its
// bytes and trailer, read onto the Go heap), and with one it is not (it
// is read in place). The two paths' charges are told apart: each within
// a chunk (blockcache.ChunkSize) of its own sum, and the io.ReaderAt
// path's above the mapped one's by the block's size; for a span block
// read on first use and one copied from the tail reader.New read. An audit stopped
// charging the block's bytes over an io.ReaderAt and the lower bound
// both paths shared did not notice.
func TestSpansCharged(t *testing.T) {
	// 20,000 fragments: a span block of about 700 KB, read on first use;
	// 2,000: one in the 256 KiB tail reader.New reads, copied from it.
	for _, n := range []int{20000, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testSpansCharged(t, n) })
	}
}

func testSpansCharged(t *testing.T, n int) {
	var buf bytes.Buffer
	bl := builder.New(&buf, nil)
	for i := range n {
		if err := bl.AddSpan(fmt.Appendf(nil, "k%08d", 2*i), fmt.Appendf(nil, "k%08d", 2*i+1), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := bl.Finish(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	block := int64(tableProps(t, data).SpanBlockSize) // with its trailer
	heap := int64(n*24 + (n+1)*4 + (n+63)/64*8)
	const chunk = 64 // blockcache.ChunkSize: the cache counts whole chunks
	charged := map[bool]int64{}
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
		held := c.Stats().Held - before
		charged[mapped] = held
		want := heap // mapped: the decoded block only
		if !mapped {
			want += block // and the block's bytes with their trailer
		}
		if held < want || held >= want+chunk {
			t.Errorf("mapped=%v: the span block charged %d bytes, want %d (%d decoded, %d of block and trailer read onto the heap), rounded up to a %d-byte chunk", mapped, held, want, heap, want-heap, chunk)
		}
		if _, err := r.SpanAt([]byte("k00000300")); err != nil {
			t.Fatal(err)
		}
		if again := c.Stats().Held - before; again != held {
			t.Errorf("mapped=%v: a second SpanAt charged %d bytes more", mapped, again-held)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if held := c.Stats().Held; held != 0 {
			t.Errorf("mapped=%v: Held %d after Close", mapped, held)
		}
	}
	if m, ok := charged[true]; ok && charged[false]-m < block-chunk {
		t.Errorf("over an io.ReaderAt the span block charged %d bytes, mapped %d: the block's %d bytes on the heap are not charged", charged[false], m, block)
	}
}
