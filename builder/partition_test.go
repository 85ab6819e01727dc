package builder_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// buildSized builds, to io.Discard, a table of n entries of 16-byte keys
// and 100-byte random values with opts, and returns its properties.
func buildSized(t *testing.T, n int, opts *builder.Options) format.Properties {
	t.Helper()
	p, _ := buildSizedLen(t, n, opts)
	return p
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// buildSizedLen is buildSized that also returns the file's length.
func buildSizedLen(t *testing.T, n int, opts *builder.Options) (format.Properties, int64) {
	t.Helper()
	var w countWriter
	b := builder.New(&w, opts)
	rng := rand.New(rand.NewPCG(1, 2))
	key := make([]byte, 16)
	value := make([]byte, 104)
	for i := range n {
		copy(key, "key-")
		binary.BigEndian.PutUint64(key[8:], uint64(i))
		for j := 0; j < len(value); j += 8 {
			binary.LittleEndian.PutUint64(value[j:], rng.Uint64())
		}
		if err := b.Add(key, value[:100]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Properties(), w.n
}

// TestDefaultPartitionThreshold checks the default threshold, the rule
// "partition whenever the index and filter do not fit the default tail",
// on tables of 16-byte keys and 100-byte values: 10k entries (about 20
// KiB of index and filter) keep version 1 (2 with a hash index); 200k and
// 1M entries (about 0.4 and 1.7 MB, more than the 256 KiB tail a reader
// over a ReaderAt reads on open) and 5M (about 8.8 MB; with
// SSTABLE_LONG_TESTS=1, as CI runs it) are partitioned, with a hash
// index too. The largest table the default keeps one-level has its
// filter, index, properties and footer within reader.DefaultTailSize. A
// threshold of -1 never partitions, and a larger one (4 MiB) keeps the
// 1M table one-level.
func TestDefaultPartitionThreshold(t *testing.T) {
	sizes := []int{10_000, 200_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	if os.Getenv("SSTABLE_LONG_TESTS") != "" {
		sizes = append(sizes, 5_000_000)
	}
	for _, n := range sizes {
		for _, hash := range []bool{false, true} {
			want, oneLevel := format.Version3, format.Version1
			if hash {
				oneLevel = format.Version2
			}
			if n <= 10_000 {
				want = oneLevel
			}
			p := buildSized(t, n, &builder.Options{HashIndex: hash})
			if p.FormatVersion != want || (p.HashIndexSize != 0) != hash {
				t.Fatalf("%d entries, default options, hash index %v: format version %d (hash index size %d), want %d", n, hash, p.FormatVersion, p.HashIndexSize, want)
			}
			if hash {
				continue
			}
			// The same entries one-level: index and filter within the
			// threshold exactly when kept one-level by default.
			p = buildSized(t, n, &builder.Options{PartitionThreshold: -1})
			if p.FormatVersion != format.Version1 {
				t.Fatalf("%d entries, threshold -1: format version %d, want 1", n, p.FormatVersion)
			}
			size := p.IndexSize + p.FilterSize
			if (size <= builder.DefaultPartitionThreshold) != (want != format.Version3) {
				t.Fatalf("%d entries: %d bytes of index and filter one-level, default threshold %d, default layout version %d", n, size, builder.DefaultPartitionThreshold, want)
			}
		}
	}
	if p := buildSized(t, 1_000_000, &builder.Options{PartitionThreshold: 4 << 20}); p.FormatVersion != format.Version1 {
		t.Fatalf("1M entries, 4 MiB threshold: format version %d, want 1", p.FormatVersion)
	}

	// The largest table the default keeps one-level (found by bisection
	// between 10k and 200k entries): its sections after the data blocks
	// fit in the default tail, so that a reader over a ReaderAt reads
	// them all on open.
	lo, hi := 10_000, 200_000
	for hi-lo > 500 {
		mid := (lo + hi) / 2
		if buildSized(t, mid, nil).FormatVersion == format.Version1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p, size := buildSizedLen(t, lo, nil)
	if p.FormatVersion != format.Version1 {
		t.Fatalf("%d entries: format version %d, want 1", lo, p.FormatVersion)
	}
	if after := size - int64(p.DataSize); after > reader.DefaultTailSize {
		t.Fatalf("%d entries, kept one-level: %d bytes after the data blocks, more than the %d-byte default tail", lo, after, reader.DefaultTailSize)
	}
	t.Logf("largest one-level table by default: about %d entries, %d bytes of filter, index, properties and footer", lo, size-int64(p.DataSize))
}

// TestPartitionThresholdBoundary checks that the builder partitions
// exactly the tables whose index block and filter bits together exceed
// PartitionThreshold, with a hash index (which does not count) or
// without: the same entries at a threshold of that sum stay version 1
// (2), and at one byte less are partitioned.
func TestPartitionThresholdBoundary(t *testing.T) {
	for _, hash := range []bool{false, true} {
		oneLevel := format.Version1
		if hash {
			oneLevel = format.Version2
		}
		for _, n := range []int{1, 100, 5000} {
			p := buildSized(t, n, &builder.Options{PartitionThreshold: -1, HashIndex: hash})
			// The index block's contents and the filter's bits: the
			// stored sizes less trailers, the filter section's name and
			// padding. The hash index does not count.
			name := len(filterblock.Bloom(builder.DefaultBitsPerKey).Name())
			pad := (filterblock.Alignment - int(p.DataSize+p.HashIndexSize+1+uint64(name))%filterblock.Alignment) % filterblock.Alignment
			size := int(p.IndexSize+p.FilterSize) - 2*format.BlockTrailerLen - 1 - name - pad
			for _, c := range []struct {
				threshold int
				want      uint32
			}{{size, oneLevel}, {size - 1, format.Version3}} {
				t.Run(fmt.Sprintf("hash=%v/%d/%d", hash, n, c.threshold), func(t *testing.T) {
					p := buildSized(t, n, &builder.Options{PartitionThreshold: c.threshold, HashIndex: hash})
					if p.FormatVersion != c.want || (p.HashIndexSize != 0) != hash {
						t.Fatalf("%d entries with %d bytes of index and filter, threshold %d: format version %d (hash index size %d), want %d", n, size, c.threshold, p.FormatVersion, p.HashIndexSize, c.want)
					}
				})
			}
		}
	}
}
