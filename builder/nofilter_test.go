package builder_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestNoFilter: a table built with builder.NoFilter records no filter
// policy, stores no filter bits, is never partitioned, and reads back
// whole, over a mapping and over an io.ReaderAt, in every layout.
func TestNoFilter(t *testing.T) {
	ps := pairs(3000, func(i int) string { return fmt.Sprintf("value %d", i) })
	for _, l := range layouts {
		for _, split := range []format.Splitter{nil, format.Suffix(2)} {
			t.Run(fmt.Sprintf("%s/splitter=%v", l.name, split != nil), func(t *testing.T) {
				// PartitionThreshold 1 would partition any table with a
				// Bloom filter.
				opts := l.opts(builder.Options{BlockSize: 512, Filter: builder.NoFilter, Splitter: split, PartitionThreshold: 1})
				path := filepath.Join(t.TempDir(), "t.sst")
				b, err := builder.Create(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Abort()
				for _, p := range ps {
					if err := b.Add([]byte(p.K), []byte(p.V)); err != nil {
						t.Fatal(err)
					}
				}
				if err := b.Finish(); err != nil {
					t.Fatal(err)
				}
				bp := b.Properties()
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if got := b.EstimatedSize(); got != int64(len(data)) {
					t.Fatalf("EstimatedSize %d after Finish, file %d bytes", got, len(data))
				}
				// The filter section is a name length, alignment
				// padding and a trailer: no filter bits.
				if bp.FilterPolicy != "" || bp.FilterBitsPerKey != 0 || bp.Partitioned || bp.FormatVersion == format.Version3 || bp.FilterSize > 64+format.BlockTrailerLen {
					t.Fatalf("builder properties: policy %q, %g bits per key, partitioned %v, version %d, filter section %d bytes",
						bp.FilterPolicy, bp.FilterBitsPerKey, bp.Partitioned, bp.FormatVersion, bp.FilterSize)
				}
				got, rp := readBack(t, data)
				if diff := cmp.Diff(ps, got); diff != "" {
					t.Fatalf("(-want +got):\n%s", diff)
				}
				if rp.FilterPolicy != "" || rp.FilterUnknown {
					t.Fatalf("reader properties: policy %q, unknown %v", rp.FilterPolicy, rp.FilterUnknown)
				}

				r, err := reader.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if r.FilterKnown() {
					t.Fatal("FilterKnown on a table without a filter")
				}
				for _, p := range []pair{ps[0], ps[1234], ps[len(ps)-1]} {
					if v, err := r.Get([]byte(p.K)); err != nil || string(v) != p.V {
						t.Fatalf("Get(%q) = %q, %v", p.K, v, err)
					}
				}
				for _, k := range []string{"key001234x", "a", "zzz"} {
					if !r.MayContain([]byte(k)) || !r.MayContainPrefix([]byte(k)) {
						t.Fatalf("a table without a filter ruled out %q", k)
					}
					if _, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("Get(%q): %v, want ErrNotFound", k, err)
					}
				}
			})
		}
	}
}

// TestNoFilterSize: with no filter the table is smaller than with the
// default one by about the filter's 10 bits per key.
func TestNoFilterSize(t *testing.T) {
	ps := pairs(20000, func(i int) string { return "v" })
	with, _ := buildPairs(t, ps, &builder.Options{PartitionThreshold: -1})
	without, _ := buildPairs(t, ps, &builder.Options{Filter: builder.NoFilter})
	if saved := len(with) - len(without); saved < 20000*10/8 || saved > 20000*11/8+128 {
		t.Fatalf("no filter saves %d bytes of %d, want about %d", saved, len(with), 20000*10/8)
	}
}

// emptyNamed is a policy that gives no name.
type emptyNamed struct{ filterblock.Policy }

func (emptyNamed) Name() string { return "" }

// TestEmptyFilterName: an empty policy name marks a table without a
// filter, so a policy other than NoFilter may not have one.
func TestEmptyFilterName(t *testing.T) {
	err := (&builder.Options{Filter: emptyNamed{filterblock.Bloom(10)}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "builder.NoFilter") {
		t.Fatalf("Validate: %v, want an error pointing to NoFilter", err)
	}
}
