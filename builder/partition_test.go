package builder_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// buildSized builds, to io.Discard, a table of n entries of 16-byte keys
// and 100-byte random values with opts, and returns its properties.
func buildSized(t *testing.T, n int, opts *builder.Options) format.Properties {
	t.Helper()
	b := builder.New(io.Discard, opts)
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
	return b.Properties()
}

// TestDefaultPartitionThreshold checks the default threshold on tables of
// 16-byte keys and 100-byte values: 1M entries (about 2 MiB of index and
// filter) keep version 1, and 5M entries (about 10 MiB; with
// SSTABLE_LONG_TESTS=1, as CI runs it) are partitioned, with a hash index
// too. A threshold of -1 never partitions, and an explicit lower one
// partitions the 1M table.
func TestDefaultPartitionThreshold(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	p := buildSized(t, n, nil)
	if p.FormatVersion != format.Version1 {
		t.Fatalf("%d entries, default options: format version %d, want 1", n, p.FormatVersion)
	}
	if size := p.IndexSize + p.FilterSize; size > builder.DefaultPartitionThreshold+200 {
		t.Fatalf("%d entries: %d bytes of index and filter kept one-level, over the %d-byte threshold", n, size, builder.DefaultPartitionThreshold)
	}
	p = buildSized(t, n, &builder.Options{PartitionThreshold: 1 << 20})
	if p.FormatVersion != format.Version3 {
		t.Fatalf("%d entries, 1 MiB threshold: format version %d, want 3", n, p.FormatVersion)
	}
	if os.Getenv("SSTABLE_LONG_TESTS") == "" {
		t.Skip("the 5M-entry tables run with SSTABLE_LONG_TESTS=1")
	}
	n = 5_000_000
	p = buildSized(t, n, nil)
	if p.FormatVersion != format.Version3 {
		t.Fatalf("%d entries, default options: format version %d, want 3", n, p.FormatVersion)
	}
	// With a hash index too: the builder's defaults partition it, keeping
	// the hash index (bench/cmd/objstore's "ours hash index" table).
	p = buildSized(t, n, &builder.Options{HashIndex: true})
	if p.FormatVersion != format.Version3 || p.HashIndexSize == 0 {
		t.Fatalf("%d entries, default options with a hash index: format version %d, hash index size %d; want 3 with a hash index", n, p.FormatVersion, p.HashIndexSize)
	}
	p = buildSized(t, n, &builder.Options{PartitionThreshold: -1})
	if p.FormatVersion != format.Version1 {
		t.Fatalf("%d entries, threshold -1: format version %d, want 1", n, p.FormatVersion)
	}
	if size := p.IndexSize + p.FilterSize; size <= builder.DefaultPartitionThreshold {
		t.Fatalf("%d entries: only %d bytes of index and filter", n, size)
	}
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
