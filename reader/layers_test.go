package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestVerifyChecksUnknownFilterSection: a reader that does not know a
// one-level table's filter policy never probes the filter, but Verify
// still reads and checks the filter section, so a flipped byte in it is
// reported.
func TestVerifyChecksUnknownFilterSection(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) {
			es := numbered(60, func(i int) string { return fmt.Sprint("v", i) })
			data, _ := build(t, es, &builder.Options{Filter: &bitmapPolicy{}, BlockSize: 256, HashIndex: v.hash, FormatVersion: v.fv})
			r := openMem(t, data, nil)
			fh := r.Footer().Filter
			r.Close()
			bad := bytes.Clone(data)
			bad[fh.Offset+fh.Length/2] ^= 0x10
			sources(t, bad, nil, func(t *testing.T, r *reader.Reader) {
				if r.FilterKnown() {
					t.Fatal("the test policy is known")
				}
				err := r.Verify()
				if !errors.Is(err, format.ErrCorrupt) {
					t.Fatalf("Verify with a flipped byte in the filter section: %v, want ErrCorrupt", err)
				}
			})
		})
	}
}
