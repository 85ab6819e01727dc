package reader_test

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestPrefixFilterFPR builds a table of versioned keys with
// format.Suffix(8) and Bloom(10): n user keys "u" + big-endian 2i (near
// neighbours, the hard case for weak hashes), each with 1 to 4 versions.
// MayContainPrefix must find every present prefix and rule out all but at
// most 1% of the absent ones, 2i+1. n is 1,000,000 with
// SSTABLE_LONG_TESTS=1 (as CI sets), else 100,000.
func TestPrefixFilterFPR(t *testing.T) {
	n := 100_000
	if os.Getenv("SSTABLE_LONG_TESTS") != "" {
		n = 1_000_000
	}
	if testing.Short() {
		n = 20_000
	}
	path := t.TempDir() + "/fpr.sst"
	b, err := builder.Create(path, &builder.Options{Splitter: format.Suffix(8), Filter: filterblock.Bloom(10), Compression: format.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	prefix := func(dst []byte, i uint64) []byte { return binary.BigEndian.AppendUint64(append(dst[:0], 'u'), i) }
	var key []byte
	entries := 0
	for i := range uint64(n) {
		versions := 1 + (i*2654435761)>>7%4
		for v := versions; v >= 1; v-- {
			key = binary.BigEndian.AppendUint64(prefix(key, 2*i), ^v)
			if err := b.Add(key, nil); err != nil {
				t.Fatal(err)
			}
			entries++
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p []byte
	fp := 0
	for i := range uint64(n) {
		if !r.MayContainPrefix(prefix(p, 2*i)) {
			t.Fatalf("false negative: prefix %d", 2*i)
		}
		if r.MayContainPrefix(prefix(p, 2*i+1)) {
			fp++
		}
	}
	rate := float64(fp) / float64(n)
	t.Logf("%d prefixes, %d entries, filter %d bytes (%.2f bits per prefix): %d false positives in %d absent prefixes, %.3f%%",
		n, entries, r.Properties().FilterSize, float64(8*r.Properties().FilterSize)/float64(n), fp, n, 100*rate)
	if rate > 0.01 {
		t.Fatalf("false positive rate %.3f%% exceeds 1%%", 100*rate)
	}
}
