package rocksblob_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/rocksblob"
	"github.com/sstkit/sstable/internal/rocksblock"
)

// FuzzDecodeIndex: any bytes decode or give a corruption error, never a
// panic; what decodes re-encodes to an index that decodes the same.
func FuzzDecodeIndex(f *testing.F) {
	f.Add([]byte{1, 12, 62, 20, 0})
	f.Add([]byte{2, 0x80, 0x01, 12, 62, 20, 7})
	f.Add([]byte{0, 5, 'v'})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		x, err := rocksblob.DecodeIndex(v)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		y, err := rocksblob.DecodeIndex(rocksblob.AppendIndex(nil, x))
		if err != nil || y.String() != x.String() || !bytes.Equal(y.Inlined, x.Inlined) {
			t.Fatalf("%x decodes to %v; re-encoded, to %v (%v)", v, x, y, err)
		}
	})
}

// FuzzValue opens any bytes as a blob file and, when they open, verifies
// them and reads a value through any index: errors, never a panic.
// The seeds are the golden blob files with an index of each.
func FuzzValue(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "*", "*.blob"))
	for _, p := range paths {
		d, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// The first record's key and index, from the file's own bytes.
		if len(d) > 62 && d[30] < 100 {
			klen := int(d[30])
			key := d[62 : 62+klen]
			vlen := uint64(d[38]) | uint64(d[39])<<8
			idx := rocksblob.AppendIndex(nil, rocksblob.Index{Type: 1, FileNumber: rocksblob.NumberFromName(p), Offset: uint64(62 + klen), Size: vlen, Compression: d[13]})
			f.Add(d, key, idx, true)
		}
	}
	f.Fuzz(func(t *testing.T, d, key, index []byte, noFooter bool) {
		file, err := rocksblob.New(bytes.NewReader(d), int64(len(d)), &rocksblob.Options{AllowNoFooter: noFooter})
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, rocksblock.ErrUnsupportedCompression) {
				t.Fatalf("New: %v", err)
			}
			return
		}
		if _, err := file.Verify(); err != nil && !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, rocksblock.ErrUnsupportedCompression) {
			t.Fatalf("Verify: %v", err)
		}
		idx, err := rocksblob.DecodeIndex(index)
		if err != nil {
			return
		}
		v, err := file.Value(key, idx, nil)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, rocksblock.ErrUnsupportedCompression) {
				t.Fatalf("Value: %v", err)
			}
			return
		}
		if file.Compression() == rocksblock.NoCompression && uint64(len(v)) != idx.Size {
			t.Fatalf("Value: %d bytes of an uncompressed %d-byte value", len(v), idx.Size)
		}
	})
}
