package fuzz

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// FuzzFooter decodes arbitrary bytes as a footer, with the file size given
// and with sizes derived from it, both as the bytes are and with their
// magic number and checksum repaired so that the handle checks run, and
// once more with a known version (1 to 4). The seeds are the footers of
// the seed tables (versions 1 to 4) and footers of every version.
func FuzzFooter(f *testing.F) {
	for _, p := range seedParts(f) {
		f.Add(bytes.Clone(p.footerBytes), p.fileSize)
	}
	var ft footer.Footer
	for _, v := range []uint32{format.Version1, format.Version2, format.Version3, format.Version4, format.Version + 1} {
		ft.Version = v
		f.Add(ft.Append(nil), int64(footer.Size+3*format.BlockTrailerLen))
	}
	ft.Version = format.Version
	ft.Index = format.BlockHandle{Offset: 1 << 62, Length: 1 << 62}
	f.Add(ft.Append(nil), int64(math.MaxInt64))
	f.Add([]byte{}, int64(0))
	f.Add(make([]byte, footer.Size), int64(-1))
	f.Fuzz(func(t *testing.T, buf []byte, fileSize int64) {
		sizes := []int64{fileSize, int64(len(buf)), footer.Size, footer.Size + 4*format.BlockTrailerLen, math.MaxInt64, math.MinInt64}
		if fileSize > math.MinInt64 {
			sizes = append(sizes, fileSize-1)
		}
		for _, size := range sizes {
			checkFooter(t, buf, size)
		}
		if len(buf) == footer.Size {
			fixed := bytes.Clone(buf)
			repair := func() {
				binary.LittleEndian.PutUint64(fixed[56:], footer.Magic)
				binary.LittleEndian.PutUint32(fixed[52:], codec.MaskCRC(crc32.Checksum(fixed[:52], crc32.MakeTable(crc32.Castagnoli))))
			}
			repair()
			for _, size := range sizes {
				checkFooter(t, fixed, size)
			}
			// And with a known version (1 to 4, by the low two bits of
			// the stored one), so that the handle checks run.
			binary.LittleEndian.PutUint32(fixed[48:], format.Version1+uint32(buf[48]&3))
			repair()
			for _, size := range sizes {
				checkFooter(t, fixed, size)
			}
		}
	})
}

func checkFooter(t *testing.T, buf []byte, fileSize int64) {
	ft, err := footer.Decode(buf, fileSize)
	if err != nil {
		wantErr(t, "footer.Decode", err, format.ErrCorrupt)
		return
	}
	if len(buf) != footer.Size || fileSize < footer.Size {
		t.Fatalf("footer.Decode accepted %d bytes for a %d-byte file", len(buf), fileSize)
	}
	if ft.Version < format.Version1 || ft.Version > format.Version {
		t.Fatalf("footer.Decode accepted version %d (known: %d to %d)", ft.Version, format.Version1, format.Version)
	}
	if got := binary.LittleEndian.Uint32(buf[48:]); got != ft.Version {
		t.Fatalf("footer.Decode returned version %d, the footer holds %d", ft.Version, got)
	}
	start := uint64(fileSize - footer.Size)
	for _, h := range []format.BlockHandle{ft.Index, ft.Filter, ft.Properties} {
		if end := h.End(); end < h.Offset || end > start {
			t.Fatalf("handle %+v (end %d) does not fit before the footer at %d", h, end, start)
		}
	}
	if got := ft.Append(nil); !bytes.Equal(got, buf) {
		t.Fatalf("footer re-encodes differently:\n got %x\nwant %x", got, buf)
	}
}
