package builder_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestBinaryFuseTable builds tables with the binary fuse filter, with and
// without a hash index (keys then arrive as hashes, HashAdder): the table
// names the policy, a reader that knows it answers MayContain with no
// false negatives and a low false positive rate, and one that does not
// know it reads the table as unfiltered.
func TestBinaryFuseTable(t *testing.T) {
	ps := pairs(20000, func(i int) string { return fmt.Sprint(i * i) })
	for _, hash := range []bool{false, true} {
		t.Run(fmt.Sprint("hash=", hash), func(t *testing.T) {
			data, bp := buildPairs(t, ps, &builder.Options{Filter: filterblock.BinaryFuse8(), HashIndex: hash, Compression: format.ZstdCompression})
			if bp.FilterPolicy != filterblock.BinaryFuse8Name || bp.FilterBitsPerKey != 0 {
				t.Fatalf("filter policy %q, %g bits/key", bp.FilterPolicy, bp.FilterBitsPerKey)
			}
			if bpk := float64(8*bp.FilterSize) / float64(len(ps)); bpk > 10.5 {
				t.Fatalf("%.2f bits/key at %d keys", bpk, len(ps))
			}
			r, err := reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Filters: []filterblock.Policy{filterblock.BinaryFuse8()}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			rp := r.Properties()
			if rp.FilterUnknown || rp.FilterPolicy != filterblock.BinaryFuse8Name {
				t.Fatalf("reader properties: unknown %v, policy %q", rp.FilterUnknown, rp.FilterPolicy)
			}
			for _, p := range ps {
				if !r.MayContain([]byte(p.K)) {
					t.Fatalf("MayContain(%q) = false", p.K)
				}
				if v, err := r.Get([]byte(p.K)); err != nil || string(v) != p.V {
					t.Fatalf("Get(%q) = %q, %v", p.K, v, err)
				}
			}
			fp := 0
			const m = 100000
			for i := range m {
				if r.MayContain(fmt.Appendf(nil, "absent%d", i)) {
					fp++
				}
			}
			if fp > 600 { // 2^-8 of 100000 is 391
				t.Fatalf("%d false positives in %d", fp, m)
			}
			// Without the policy in Options.Filters: BinaryFuse8 is built in.
			got, rp2 := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if rp2.FilterUnknown {
				t.Fatalf("a reader without BinaryFuse8 in Options.Filters does not know %q", rp2.FilterPolicy)
			}
		})
	}
}

// fallbackPolicy's generator builds a Bloom(10) filter and reports it, as
// BinaryFuse8's does when its construction fails.
type fallbackPolicy struct{ filterblock.Policy }

func (fallbackPolicy) Name() string { return "test.AlwaysFallsBack" }
func (fallbackPolicy) NewGenerator() filterblock.Generator {
	return &fallbackGen{filterblock.Bloom(10).NewGenerator()}
}
func (fallbackPolicy) MayContain(filter, key []byte) bool { return true }
func (fallbackPolicy) BitsPerKey() float64                { return 3 }

type fallbackGen struct{ filterblock.Generator }

func (*fallbackGen) GeneratedPolicy() filterblock.Policy { return filterblock.Bloom(10) }

// TestFilterFallbackRecorded: when the generator reports another policy,
// the table's filter section and properties name that one, with its bits
// per key, and a reader uses it.
func TestFilterFallbackRecorded(t *testing.T) {
	ps := pairs(500, func(i int) string { return "v" })
	data, bp := buildPairs(t, ps, &builder.Options{Filter: fallbackPolicy{}})
	if bp.FilterPolicy != filterblock.BloomName || bp.FilterBitsPerKey != 10 {
		t.Fatalf("builder properties: policy %q, %g bits/key", bp.FilterPolicy, bp.FilterBitsPerKey)
	}
	got, rp := readBack(t, data)
	if diff := cmp.Diff(ps, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(bp, rp); diff != "" {
		t.Fatalf("(-builder +reader):\n%s", diff)
	}
	r := openBytes(t, data)
	defer r.Close()
	misses := 0
	for i := range 1000 {
		if !r.MayContain(fmt.Appendf(nil, "nokey%d", i)) {
			misses++
		}
	}
	if misses < 900 {
		t.Fatalf("the recorded Bloom filter rejected only %d of 1000 absent keys", misses)
	}
}

func openBytes(t *testing.T, data []byte) *reader.Reader {
	t.Helper()
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
