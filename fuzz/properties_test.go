package fuzz

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// FuzzProperties decodes arbitrary bytes as a properties block; whatever
// decodes must re-encode to bytes that decode to the same value.
func FuzzProperties(f *testing.F) {
	for _, p := range seedParts(f) {
		if p.props != nil {
			f.Add(p.props, int64(p.footer.Properties.Offset))
		}
	}
	f.Add([]byte{}, int64(0))
	f.Add(codec.AppendProperties(nil, &format.Properties{
		FormatVersion: format.Version, NumEntries: 1, SmallestKey: []byte{}, LargestKey: []byte{0xff},
		Compression: format.NoCompression, FilterPolicy: "p", FilterBitsPerKey: 0.001,
	}), int64(1<<40))
	// Unknown tags are skipped.
	f.Add([]byte{1, 1, 1, 40, 2, 0xab, 0xcd}, int64(7))
	f.Fuzz(func(t *testing.T, src []byte, off int64) {
		p, err := codec.DecodeProperties(src, off)
		if err != nil {
			wantErr(t, "DecodeProperties", err, format.ErrCorrupt)
			return
		}
		_ = p.String()
		enc := codec.AppendProperties(nil, &p)
		q, err := codec.DecodeProperties(enc, off)
		if err != nil {
			t.Fatalf("re-encoded properties do not decode: %v\nproperties:\n%s", err, p.String())
		}
		if diff := cmp.Diff(p, q); diff != "" {
			t.Fatalf("properties change in a round trip (-decoded +re-decoded):\n%s", diff)
		}
	})
}
