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
		for _, l := range layouts {
			wantParted := n > 10_000
			p := buildSized(t, n, l.opts(builder.Options{}))
			if partitioned(p) != wantParted || p.FormatVersion != l.version(wantParted) || (p.HashIndexSize != 0) != l.hashed() {
				t.Fatalf("%d entries, default options, layout %s: format version %d, partitioned %v (hash index size %d), want partitioned %v", n, l.name, p.FormatVersion, partitioned(p), p.HashIndexSize, wantParted)
			}
			if l.hash {
				continue
			}
			// The same entries one-level: index and filter within the
			// threshold exactly when kept one-level by default.
			p = buildSized(t, n, l.opts(builder.Options{PartitionThreshold: -1}))
			if partitioned(p) || p.FormatVersion != l.version(false) {
				t.Fatalf("%d entries, layout %s, threshold -1: format version %d, partitioned %v", n, l.name, p.FormatVersion, p.Partitioned)
			}
			size := p.IndexSize + p.FilterSize
			if (size <= builder.DefaultPartitionThreshold) != !wantParted {
				t.Fatalf("%d entries, layout %s: %d bytes of index and filter one-level, default threshold %d, default layout partitioned %v", n, l.name, size, builder.DefaultPartitionThreshold, wantParted)
			}
		}
	}
	if p := buildSized(t, 1_000_000, &builder.Options{PartitionThreshold: 4 << 20}); partitioned(p) || p.FormatVersion != format.Version4 {
		t.Fatalf("1M entries, 4 MiB threshold: format version %d, partitioned %v, want 4 one-level", p.FormatVersion, p.Partitioned)
	}

	// The largest table the default keeps one-level (found by bisection
	// between 10k and 200k entries): its sections after the data blocks
	// fit in the default tail, so that a reader over a ReaderAt reads
	// them all on open.
	lo, hi := 10_000, 200_000
	for hi-lo > 500 {
		mid := (lo + hi) / 2
		if !partitioned(buildSized(t, mid, nil)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	p, size := buildSizedLen(t, lo, nil)
	if partitioned(p) {
		t.Fatalf("%d entries: partitioned", lo)
	}
	// (Version 4's hash index lies before them and is not counted: a
	// reader over a ReaderAt uses it only when it fits in the tail too.)
	if after := size - int64(p.DataSize+p.HashIndexSize); after > reader.DefaultTailSize {
		t.Fatalf("%d entries, kept one-level: %d bytes of filter, index, properties and footer, more than the %d-byte default tail", lo, after, reader.DefaultTailSize)
	}
	t.Logf("largest one-level table by default: about %d entries, %d bytes of filter, index, properties and footer", lo, size-int64(p.DataSize+p.HashIndexSize))
}

// TestPartitionThresholdBoundary checks that the builder partitions
// exactly the tables whose index block and filter bits together exceed
// PartitionThreshold, with a hash index (which does not count) or
// without: the same entries at a threshold of that sum stay version 1
// (2), and at one byte less are partitioned.
func TestPartitionThresholdBoundary(t *testing.T) {
	for _, l := range layouts {
		for _, n := range []int{1, 100, 5000} {
			p := buildSized(t, n, l.opts(builder.Options{PartitionThreshold: -1}))
			// The index block's contents and the filter's bits: the
			// stored sizes less trailers, the filter section's name and
			// padding. The hash index does not count.
			name := len(filterblock.Bloom(builder.DefaultBitsPerKey).Name())
			pad := (filterblock.Alignment - int(p.DataSize+p.HashIndexSize+1+uint64(name))%filterblock.Alignment) % filterblock.Alignment
			size := int(p.IndexSize+p.FilterSize) - 2*format.BlockTrailerLen - 1 - name - pad
			for _, c := range []struct {
				threshold int
				parted    bool
			}{{size, false}, {size - 1, true}} {
				t.Run(fmt.Sprintf("%s/%d/%d", l.name, n, c.threshold), func(t *testing.T) {
					p := buildSized(t, n, l.opts(builder.Options{PartitionThreshold: c.threshold}))
					if partitioned(p) != c.parted || p.FormatVersion != l.version(c.parted) || (p.HashIndexSize != 0) != l.hashed() {
						t.Fatalf("%d entries with %d bytes of index and filter, threshold %d: format version %d, partitioned %v (hash index size %d), want partitioned %v", n, size, c.threshold, p.FormatVersion, partitioned(p), p.HashIndexSize, c.parted)
					}
				})
			}
		}
	}
}

// layout is a table layout the builder writes: version 1 (asked for),
// version 2 (HashIndex), or version 4 (the default); the first two become
// version 3 when partitioned, version 4 stays 4 with Partitioned set.
type layout struct {
	name string
	hash bool   // builder.Options.HashIndex
	fv   uint32 // builder.Options.FormatVersion
}

var layouts = []layout{{"v1", false, format.Version1}, {"v2", true, 0}, {"v4", false, 0}}

func (l layout) opts(o builder.Options) *builder.Options {
	o.HashIndex, o.FormatVersion = l.hash, l.fv
	return &o
}

// hashed reports whether the layout's tables have a hash index section.
func (l layout) hashed() bool { return l.hash || l.fv == 0 }

// version returns the format version of the layout's tables, partitioned
// or not.
func (l layout) version(parted bool) uint32 {
	switch {
	case l.fv == 0 && !l.hash:
		return format.Version4
	case parted:
		return format.Version3
	case l.hash:
		return format.Version2
	}
	return format.Version1
}

// partitioned reports whether properties p describe a partitioned table.
func partitioned(p format.Properties) bool {
	return p.FormatVersion == format.Version3 || p.Partitioned
}
