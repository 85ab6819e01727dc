package footer_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// sample is a footer that fits a 10000-byte file.
var sample = footer.Footer{
	Index:      format.BlockHandle{Offset: 5000, Length: 300},
	Filter:     format.BlockHandle{Offset: 3000, Length: 1995},
	Properties: format.BlockHandle{Offset: 5305, Length: 4000},
	Version:    format.Version1,
}

const sampleFileSize = 10000

func encode(f footer.Footer) []byte { return f.Append(nil) }

// checkErr checks that err is a corruption of section at file offset off
// whose message mentions msg.
func checkErr(t rapid.TB, err error, section string, off int64, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error mentioning %q, got none", msg)
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("%v does not wrap format.ErrCorrupt", err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("%v is not a *format.CorruptError", err)
	}
	if ce.Section != section || ce.Offset != off {
		t.Fatalf("error %q names %q at offset %d, want %q at %d", err, ce.Section, ce.Offset, section, off)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q does not mention %q", err, msg)
	}
}

func TestRoundTrip(t *testing.T) {
	buf := encode(sample)
	if len(buf) != footer.Size || footer.Size != 64 {
		t.Fatalf("footer is %d bytes, Size %d; want 64", len(buf), footer.Size)
	}
	got, err := footer.Decode(buf, sampleFileSize)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestRoundTripRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fileSize := rapid.OneOf(rapid.Int64Range(footer.Size+format.BlockTrailerLen, 1<<20), rapid.Int64Range(footer.Size+format.BlockTrailerLen, math.MaxInt64)).Draw(t, "fileSize")
		start := uint64(fileSize - footer.Size)
		handle := func(name string) format.BlockHandle {
			// Any handle whose block and trailer end at or before the footer.
			end := rapid.Uint64Range(format.BlockTrailerLen, start).Draw(t, name+"End")
			off := rapid.Uint64Range(0, end-format.BlockTrailerLen).Draw(t, name+"Offset")
			return format.BlockHandle{Offset: off, Length: end - format.BlockTrailerLen - off}
		}
		version := rapid.SampledFrom([]uint32{format.Version1, format.Version2, format.Version3, format.Version4}).Draw(t, "version")
		f := footer.Footer{Index: handle("index"), Filter: handle("filter"), Properties: handle("properties"), Version: version}
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 10).Draw(t, "prefix")
		enc := f.Append(bytes.Clone(prefix))
		if len(enc) != len(prefix)+footer.Size || !bytes.Equal(enc[:len(prefix)], prefix) {
			t.Fatalf("Append did not append exactly %d bytes after dst", footer.Size)
		}
		got, err := footer.Decode(enc[len(prefix):], fileSize)
		if err != nil {
			t.Fatalf("Decode(%+v, file %d): %v", f, fileSize, err)
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	})
}

// TestLayout pins the documented byte layout.
func TestLayout(t *testing.T) {
	buf := encode(sample)
	le := binary.LittleEndian
	got := []uint64{le.Uint64(buf[0:]), le.Uint64(buf[8:]), le.Uint64(buf[16:]), le.Uint64(buf[24:]), le.Uint64(buf[32:]), le.Uint64(buf[40:])}
	want := []uint64{5000, 300, 3000, 1995, 5305, 4000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handles (-want +got):\n%s", diff)
	}
	if v := le.Uint32(buf[48:]); v != 1 {
		t.Errorf("version field = %d, want 1", v)
	}
	for _, version := range []uint32{format.Version2, format.Version3, format.Version4} {
		f := sample
		f.Version = version
		enc := encode(f)
		if v := le.Uint32(enc[48:]); v != version {
			t.Errorf("version field of a version %d footer = %d", version, v)
		}
		// Only the version field and the checksum over it differ.
		if !bytes.Equal(enc[:48], buf[:48]) || !bytes.Equal(enc[56:], buf[56:]) {
			t.Errorf("version %d footer differs from version 1's outside the version and checksum", version)
		}
	}
	crc := crc32.Checksum(buf[:52], crc32.MakeTable(crc32.Castagnoli))
	if got, want := le.Uint32(buf[52:]), (crc>>15|crc<<17)+0xa282ead8; got != want {
		t.Errorf("checksum field = %#08x, want masked CRC-32C of [0,52) %#08x", got, want)
	}
	if got := string(buf[56:]); got != "\x8bSST\r\n\x1a\n" {
		t.Errorf("magic bytes = %q, want %q", got, "\x8bSST\r\n\x1a\n")
	}
	if le.Uint64(buf[56:]) != footer.Magic {
		t.Errorf("magic bytes do not read as Magic")
	}
}

func TestBadMagic(t *testing.T) {
	buf := encode(sample)
	for bit := 56 * 8; bit < 64*8; bit++ {
		bad := bytes.Clone(buf)
		bad[bit/8] ^= 1 << (bit % 8)
		_, err := footer.Decode(bad, sampleFileSize)
		checkErr(t, err, format.SectionFooter, sampleFileSize-64+56, "magic")
	}
	// Another table format's footer is named.
	leveldb := bytes.Clone(buf)
	binary.LittleEndian.PutUint64(leveldb[56:], 0xdb4775248b80fb57)
	_, err := footer.Decode(leveldb, sampleFileSize)
	checkErr(t, err, format.SectionFooter, sampleFileSize-64+56, "LevelDB")
	// A foreign file: all zeros, or text.
	for _, b := range [][]byte{make([]byte, 64), bytes.Repeat([]byte("text"), 16)} {
		_, err := footer.Decode(b, 64)
		checkErr(t, err, format.SectionFooter, 56, "magic")
	}
}

func TestBitFlipsFailChecksum(t *testing.T) {
	buf := encode(sample)
	for bit := 0; bit < 56*8; bit++ {
		bad := bytes.Clone(buf)
		bad[bit/8] ^= 1 << (bit % 8)
		_, err := footer.Decode(bad, sampleFileSize)
		checkErr(t, err, format.SectionFooter, sampleFileSize-64, "checksum")
	}
}

// TestVersions checks the documented version numbers and that Decode
// accepts every version from Version1 to Version.
func TestVersions(t *testing.T) {
	if format.Version1 != 1 || format.Version2 != 2 || format.Version3 != 3 || format.Version4 != 4 || format.Version5 != 5 || format.Version != format.Version5 {
		t.Fatalf("Version1 = %d, Version2 = %d, Version3 = %d, Version4 = %d, Version5 = %d, Version = %d; want 1, 2, 3, 4, 5, 5", format.Version1, format.Version2, format.Version3, format.Version4, format.Version5, format.Version)
	}
	for v := format.Version1; v <= format.Version; v++ {
		f := sample
		f.Version = v
		got, err := footer.Decode(encode(f), sampleFileSize)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Fatalf("version %d (-want +got):\n%s", v, diff)
		}
	}
}

func TestWrongVersion(t *testing.T) {
	for _, v := range []uint32{0, 6, format.Version + 1, 1 << 16, math.MaxUint32} {
		f := sample
		f.Version = v
		_, err := footer.Decode(encode(f), sampleFileSize)
		checkErr(t, err, format.SectionFooter, sampleFileSize-64+48, "version")
	}
}

func TestHandlesOutsideFile(t *testing.T) {
	const fileSize = 1000
	const start = fileSize - footer.Size // 936: blocks and trailers must end by here
	h := func(off, length uint64) format.BlockHandle { return format.BlockHandle{Offset: off, Length: length} }
	ok := h(0, 10)
	bad := []struct {
		name string
		h    format.BlockHandle
	}{
		{"offset past the footer", h(start+1, 0)},
		{"offset at the footer", h(start, 0)},
		{"trailer overlaps the footer by one byte", h(start-format.BlockTrailerLen, 1)},
		{"trailer does not fit", h(start-4, 0)},
		{"length past the end", h(100, fileSize)},
		{"huge offset", h(math.MaxUint64, 0)},
		{"huge length", h(0, math.MaxUint64)},
		{"offset+length wraps", h(math.MaxUint64-5, 10)},
		{"length wraps to fit", h(10, math.MaxUint64-4)},
	}
	for field, name := range []string{format.SectionIndex, format.SectionFilter, format.SectionProperties} {
		for _, c := range bad {
			f := footer.Footer{Index: ok, Filter: ok, Properties: ok, Version: format.Version}
			*[]*format.BlockHandle{&f.Index, &f.Filter, &f.Properties}[field] = c.h
			_, err := footer.Decode(encode(f), fileSize)
			checkErr(t, err, format.SectionFooter, start+int64(16*field), name+" handle")
		}
		// A block whose trailer ends exactly at the footer fits.
		f := footer.Footer{Index: ok, Filter: ok, Properties: ok, Version: format.Version}
		*[]*format.BlockHandle{&f.Index, &f.Filter, &f.Properties}[field] = h(start-format.BlockTrailerLen-7, 7)
		if _, err := footer.Decode(encode(f), fileSize); err != nil {
			t.Errorf("%s handle ending at the footer: %v", name, err)
		}
	}
}

func TestFileTooSmall(t *testing.T) {
	buf := encode(sample)
	for _, size := range []int64{-1, 0, 1, 63} {
		_, err := footer.Decode(buf, size)
		checkErr(t, err, format.SectionFile, 0, "too small")
	}
	// A buffer that is not exactly Size bytes.
	for _, b := range [][]byte{nil, buf[:63], append(bytes.Clone(buf), 0)} {
		_, err := footer.Decode(b, sampleFileSize)
		if !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("Decode of a %d-byte buffer: %v, want a corruption", len(b), err)
		}
	}
	// A file of exactly the footer cannot hold the blocks its handles name.
	_, err := footer.Decode(buf, footer.Size)
	checkErr(t, err, format.SectionFooter, 0, "index block handle")
}

// TestGoldenFooters decodes the footer of every golden table, of format
// versions 1 to 4: the version must be the one the properties record,
// and the handles must follow the layout of package format's doc, the
// same in every version: the filter section (in a partitioned table, the
// span of the partitions) ends where the index block (the top-level
// index) starts, which ends where the properties start, which end at the
// footer; and the filter section starts at the data size plus the hash
// index size.
func TestGoldenFooters(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(data))
		f, err := footer.Decode(data[size-footer.Size:], size)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pb := data[f.Properties.Offset : f.Properties.Offset+f.Properties.Length]
		p, err := codec.DecodeProperties(pb, int64(f.Properties.Offset))
		if err != nil {
			t.Fatalf("%s: properties: %v", path, err)
		}
		if f.Version != p.FormatVersion {
			t.Errorf("%s: footer version %d, properties say %d", path, f.Version, p.FormatVersion)
		}
		if f.Filter.End() != f.Index.Offset || f.Index.End()+p.SpanBlockSize != f.Properties.Offset || f.Properties.End() != uint64(size-footer.Size) || f.Filter.Offset != p.DataSize+p.HashIndexSize {
			t.Errorf("%s (version %d): filter %+v, index %+v, properties %+v, footer at %d, data size %d, hash index size %d: the sections do not follow each other",
				path, f.Version, f.Filter, f.Index, f.Properties, size-footer.Size, p.DataSize, p.HashIndexSize)
		}
		seen[f.Version] = true
	}
	for v := format.Version1; v <= format.Version; v++ {
		if !seen[v] {
			t.Errorf("no golden table of format version %d", v)
		}
	}
}
