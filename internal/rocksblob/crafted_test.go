package rocksblob_test

// Crafted inputs, laid out by db/blob/blob_log_format.h and blob_index.h,
// for what RocksDB never writes: damaged headers, TTL files, hostile
// lengths under valid CRCs, read errors.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/golang/snappy"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/rocksblob"
	"github.com/sstkit/sstable/internal/rocksblock"
)

// maskedCRC is the masked CRC-32C of util/crc32c.h, written out here
// rather than taken from the package under test.
func maskedCRC(parts ...[]byte) uint32 {
	var c uint32
	for _, p := range parts {
		c = crc32.Update(c, crc32.MakeTable(crc32.Castagnoli), p)
	}
	return (c>>15 | c<<17) + 0xa282ead8
}

// blobFile lays out a blob file.
type blobFile struct {
	version, cf   uint32
	flags, comp   byte
	expHead       [2]uint64
	records       [][2][]byte // key, stored value
	noFooter      bool
	count         int64 // the footer's record count; -1: len(records)
	expFoot       [2]uint64
	offsets       []uint64 // filled by bytes: each value's offset
	recordHeaders [][]byte // replaces record i's 32-byte header when set
}

func newBlobFile(records ...[2][]byte) *blobFile {
	return &blobFile{version: 1, records: records, count: -1}
}

func (b *blobFile) bytes() []byte {
	le := binary.LittleEndian
	d := le.AppendUint32(nil, rocksblob.Magic)
	d = le.AppendUint32(d, b.version)
	d = le.AppendUint32(d, b.cf)
	d = append(d, b.flags, b.comp)
	d = le.AppendUint64(d, b.expHead[0])
	d = le.AppendUint64(d, b.expHead[1])
	b.offsets = nil
	for i, r := range b.records {
		h := le.AppendUint64(nil, uint64(len(r[0])))
		h = le.AppendUint64(h, uint64(len(r[1])))
		h = le.AppendUint64(h, 0)
		h = le.AppendUint32(h, maskedCRC(h))
		h = le.AppendUint32(h, maskedCRC(r[0], r[1]))
		if i < len(b.recordHeaders) && b.recordHeaders[i] != nil {
			h = b.recordHeaders[i]
		}
		d = append(d, h...)
		d = append(d, r[0]...)
		b.offsets = append(b.offsets, uint64(len(d)))
		d = append(d, r[1]...)
	}
	if b.noFooter {
		return d
	}
	count := uint64(b.count)
	if b.count < 0 {
		count = uint64(len(b.records))
	}
	f := le.AppendUint32(nil, rocksblob.Magic)
	f = le.AppendUint64(f, count)
	f = le.AppendUint64(f, b.expFoot[0])
	f = le.AppendUint64(f, b.expFoot[1])
	f = le.AppendUint32(f, maskedCRC(f))
	return append(d, f...)
}

func open(t *testing.T, d []byte, o *rocksblob.Options) (*rocksblob.File, error) {
	t.Helper()
	return rocksblob.New(bytes.NewReader(d), int64(len(d)), o)
}

func wantCorrupt(t *testing.T, what string, err error, section string) {
	t.Helper()
	var ce *format.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, format.ErrCorrupt) || ce.File != "crafted" || ce.Section != section {
		t.Errorf("%s: error %v, want corruption of the %s naming the file", what, err, section)
	}
}

func TestDecodeIndex(t *testing.T) {
	u := binary.AppendUvarint
	for _, c := range []struct {
		name string
		in   []byte
		want rocksblob.Index
	}{
		{"blob", append(u(u(u([]byte{1}, 17), 1<<40), 300), 7), rocksblob.Index{Type: 1, FileNumber: 17, Offset: 1 << 40, Size: 300, Compression: 7}},
		{"blob TTL", append(u(u(u(u([]byte{2}, 1700000000), 5), 62), 0), 0), rocksblob.Index{Type: 2, Expiration: 1700000000, FileNumber: 5, Offset: 62, Size: 0}},
		{"inlined TTL", append(u([]byte{0}, math.MaxUint64), "value"...), rocksblob.Index{Type: 0, Expiration: math.MaxUint64, Inlined: []byte("value")}},
		{"inlined TTL, empty", u([]byte{0}, 9), rocksblob.Index{Type: 0, Expiration: 9, Inlined: []byte{}}},
		{"non-minimal varint", []byte{1, 0x85, 0x00, 62, 3, 1}, rocksblob.Index{Type: 1, FileNumber: 5, Offset: 62, Size: 3, Compression: 1}},
	} {
		got, err := rocksblob.DecodeIndex(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Type != c.want.Type || !bytes.Equal(got.Inlined, c.want.Inlined) || (got.Inlined == nil) != (c.want.Inlined == nil) ||
			got.FileNumber != c.want.FileNumber || got.Offset != c.want.Offset || got.Size != c.want.Size || got.Compression != c.want.Compression || got.Expiration != c.want.Expiration {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if back, err := rocksblob.DecodeIndex(rocksblob.AppendIndex(nil, got)); err != nil || back.String() != got.String() {
			t.Errorf("%s: re-encoded, %+v (%v)", c.name, back, err)
		}
	}
	overlong := append([]byte{1}, bytes.Repeat([]byte{0xff}, 9)...)
	for _, c := range []struct {
		name string
		in   []byte
		off  int64
	}{
		{"empty", nil, 0},
		{"unknown type", []byte{3, 1, 2, 3, 0}, 0},
		{"type 0xff", []byte{0xff}, 0},
		{"truncated varint", []byte{1, 0x80}, 1},
		{"no offset", []byte{1, 5}, 2},
		{"no compression", []byte{1, 5, 62, 3}, 4},
		{"a byte after the compression", []byte{1, 5, 62, 3, 0, 0}, 4},
		{"no expiration", []byte{2}, 1},
		{"65-bit varint", append(overlong, 0x02, 62, 3, 0), 1},
		{"11-byte varint", append(overlong, 0x80, 0x00, 62, 3, 0), 1},
	} {
		_, err := rocksblob.DecodeIndex(c.in)
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Section != rocksblob.SectionIndex || ce.Offset != c.off {
			t.Errorf("%s: %v, want corruption of the blob index at offset %d", c.name, err, c.off)
		}
	}
}

func TestNumberFromName(t *testing.T) {
	for in, want := range map[string]uint64{
		"/db/000123.blob": 123, "000001.blob": 1, "12345678.blob": 12345678, "/a.blob/000007.blob": 7,
		"000123.sst": 0, ".blob": 0, "x12.blob": 0, "-1.blob": 0, "99999999999999999999999.blob": 0, "/db/000123.blob/": 123,
	} {
		if got := rocksblob.NumberFromName(in); got != want {
			t.Errorf("NumberFromName(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestCraftedFiles covers the header and footer checks, each with one
// field of a valid file changed.
func TestCraftedFiles(t *testing.T) {
	rec := [2][]byte{[]byte("key"), []byte("a value")}
	o := &rocksblob.Options{Name: "crafted"}
	good := newBlobFile(rec)
	f, err := open(t, good.bytes(), &rocksblob.Options{Name: "crafted", Number: 9, CheckColumnFamily: true, ColumnFamilyID: 0})
	if err != nil {
		t.Fatal(err)
	}
	idx := rocksblob.Index{Type: rocksblob.TypeBlob, FileNumber: 9, Offset: good.offsets[0], Size: uint64(len(rec[1]))}
	if v, err := f.Value(rec[0], idx, nil); err != nil || string(v) != "a value" {
		t.Fatalf("Value: %q, %v", v, err)
	}
	if st, err := f.Verify(); err != nil || st.Records != 1 || st.Bytes != 32+3+7 {
		t.Fatalf("Verify: %+v, %v", st, err)
	}

	for _, c := range []struct {
		name    string
		change  func(b *blobFile)
		opt     rocksblob.Options
		section string
	}{
		{"version 2", func(b *blobFile) { b.version = 2 }, rocksblob.Options{}, rocksblob.SectionHeader},
		{"TTL flag", func(b *blobFile) { b.flags = 1 }, rocksblob.Options{}, rocksblob.SectionHeader},
		{"header expiration range", func(b *blobFile) { b.expHead[1] = 1 }, rocksblob.Options{}, rocksblob.SectionHeader},
		{"footer expiration range", func(b *blobFile) { b.expFoot[0] = 1 }, rocksblob.Options{}, rocksblob.SectionFooter},
		{"another column family", func(b *blobFile) { b.cf = 3 }, rocksblob.Options{CheckColumnFamily: true, ColumnFamilyID: 2}, rocksblob.SectionHeader},
		{"undefined compression", func(b *blobFile) { b.comp = 0x23 }, rocksblob.Options{}, rocksblob.SectionHeader},
		{"no footer", func(b *blobFile) { b.noFooter = true }, rocksblob.Options{}, rocksblob.SectionFooter},
	} {
		b := newBlobFile(rec)
		c.change(b)
		c.opt.Name = "crafted"
		_, err := open(t, b.bytes(), &c.opt)
		wantCorrupt(t, c.name, err, c.section)
	}
	// Flags other than bit 0 mean nothing to RocksDB (BlobLogHeader::DecodeFrom).
	b := newBlobFile(rec)
	b.flags = 0xfe
	if _, err := open(t, b.bytes(), o); err != nil {
		t.Errorf("flags 0xfe: %v", err)
	}
	for _, typ := range []byte{rocksblock.Xpress, 0x80, 0xfe} {
		b := newBlobFile(rec)
		b.comp = typ
		if _, err := open(t, b.bytes(), o); !errors.Is(err, rocksblock.ErrUnsupportedCompression) || errors.Is(err, format.ErrCorrupt) {
			t.Errorf("compression %#x: %v, want ErrUnsupportedCompression", typ, err)
		}
	}
	// A wrong count in a footer with a valid CRC: only Verify can see it.
	b = newBlobFile(rec, rec)
	b.count = 3
	if f, err := open(t, b.bytes(), o); err != nil {
		t.Error(err)
	} else if st, err := f.Verify(); st.Records != 2 {
		t.Errorf("footer count 3: Verify %+v", st)
	} else {
		wantCorrupt(t, "footer count 3", err, rocksblob.SectionFooter)
	}
	// Without a footer, when allowed, the records run to the end.
	b = newBlobFile(rec, rec)
	b.noFooter = true
	if f, err := open(t, b.bytes(), &rocksblob.Options{Name: "crafted", AllowNoFooter: true}); err != nil || f.HasFooter() {
		t.Errorf("no footer, allowed: %v", err)
	} else if st, err := f.Verify(); err != nil || st.Records != 2 {
		t.Errorf("no footer, allowed: Verify %+v, %v", st, err)
	}
}

// TestCraftedValues covers Value's checks: each one breaks one thing the
// index or the record must agree on.
func TestCraftedValues(t *testing.T) {
	key := []byte("the key")
	val := bytes.Repeat([]byte("snappy "), 50)
	stored := snappy.Encode(nil, val)
	b := newBlobFile([2][]byte{key, stored}, [2][]byte{[]byte("the kez"), stored})
	b.comp = rocksblock.Snappy
	d := b.bytes()
	f, err := open(t, d, &rocksblob.Options{Name: "crafted", Number: 12})
	if err != nil {
		t.Fatal(err)
	}
	idx := rocksblob.Index{Type: rocksblob.TypeBlob, FileNumber: 12, Offset: b.offsets[0], Size: uint64(len(stored)), Compression: rocksblock.Snappy}
	dst := make([]byte, 0, 1000)
	v, err := f.Value(key, idx, dst)
	if err != nil || !bytes.Equal(v, val) || &v[0] != &dst[:1][0] {
		t.Fatalf("Value: %d bytes, %v (in dst: %v)", len(v), err, err == nil && &v[0] == &dst[:1][0])
	}
	for _, c := range []struct {
		name    string
		key     string
		change  func(x *rocksblob.Index)
		section string
	}{
		{"TTL index", "the key", func(x *rocksblob.Index) { x.Type = rocksblob.TypeBlobTTL }, rocksblob.SectionIndex},
		{"inlined index", "the key", func(x *rocksblob.Index) { x.Type = rocksblob.TypeInlinedTTL }, rocksblob.SectionIndex},
		{"another file", "the key", func(x *rocksblob.Index) { x.FileNumber = 13 }, rocksblob.SectionIndex},
		{"file number 0", "the key", func(x *rocksblob.Index) { x.FileNumber = 0 }, rocksblob.SectionIndex},
		{"another compression", "the key", func(x *rocksblob.Index) { x.Compression = rocksblock.ZSTD }, rocksblob.SectionIndex},
		{"offset in the header", "the key", func(x *rocksblob.Index) { x.Offset = 40 }, rocksblob.SectionIndex},
		{"offset past the records", "the key", func(x *rocksblob.Index) { x.Offset = uint64(len(d)) - 32 - x.Size + 1 }, rocksblob.SectionIndex},
		{"size past the records", "the key", func(x *rocksblob.Index) { x.Size = math.MaxUint64 }, rocksblob.SectionIndex},
		{"offset wraps", "the key", func(x *rocksblob.Index) { x.Offset = math.MaxUint64 - 2 }, rocksblob.SectionIndex},
		{"one byte short", "the key", func(x *rocksblob.Index) { x.Size-- }, rocksblob.SectionRecord},
		{"a longer key", "the key!", func(x *rocksblob.Index) { x.Offset++ }, rocksblob.SectionRecord},
		{"another key", "the kez", func(x *rocksblob.Index) {}, rocksblob.SectionRecord},
		{"the next record's key", "the key", func(x *rocksblob.Index) { x.Offset = b.offsets[1] }, rocksblob.SectionRecord},
	} {
		x := idx
		c.change(&x)
		_, err := f.Value([]byte(c.key), x, nil)
		wantCorrupt(t, c.name, err, c.section)
	}
}

// TestHostileLengths: lengths under a valid header CRC that claim more
// than the file holds are errors before any large allocation.
func TestHostileLengths(t *testing.T) {
	le := binary.LittleEndian
	for _, lens := range [][2]uint64{{1 << 40, 1}, {1, 1 << 40}, {math.MaxUint64, 1}, {1, math.MaxUint64}, {math.MaxUint64 / 2, math.MaxUint64/2 + 3}} {
		h := le.AppendUint64(nil, lens[0])
		h = le.AppendUint64(h, lens[1])
		h = le.AppendUint64(h, 0)
		h = le.AppendUint32(h, maskedCRC(h))
		h = le.AppendUint32(h, 0)
		b := newBlobFile([2][]byte{[]byte("k"), []byte("v")})
		b.recordHeaders = [][]byte{h}
		f, err := open(t, b.bytes(), &rocksblob.Options{Name: "crafted"})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = f.Verify()
		runtime.ReadMemStats(&after)
		wantCorrupt(t, "hostile lengths", err, rocksblob.SectionRecord)
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<16 {
			t.Errorf("lengths %v: Verify allocated %d bytes", lens, n)
		}
	}
	// A snappy value whose length header claims 4 GiB.
	stored := append(binary.AppendUvarint(nil, 1<<32-1), 0)
	b := newBlobFile([2][]byte{[]byte("k"), stored})
	b.comp = rocksblock.Snappy
	d := b.bytes()
	f, err := open(t, d, &rocksblob.Options{Name: "crafted"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Value([]byte("k"), rocksblob.Index{Type: 1, FileNumber: 1, Offset: b.offsets[0], Size: uint64(len(stored)), Compression: rocksblock.Snappy}, nil)
	wantCorrupt(t, "snappy claiming 4 GiB", err, rocksblob.SectionRecord)
	_, err = f.Verify()
	wantCorrupt(t, "snappy claiming 4 GiB, Verify", err, rocksblob.SectionRecord)
}

// failingReader fails every read that includes byte off.
type failingReader struct {
	r   io.ReaderAt
	off int64
}

var errRead = errors.New("injected read error")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off <= f.off && f.off < off+int64(len(p)) {
		return 0, errRead
	}
	return f.r.ReadAt(p, off)
}

// TestReadErrors: a read error is passed on as itself, not as damage.
func TestReadErrors(t *testing.T) {
	rec := [2][]byte{[]byte("key"), []byte("a value")}
	b := newBlobFile(rec)
	d := b.bytes()
	for _, at := range []int64{0, int64(len(d)) - 1, int64(b.offsets[0]) - 1, int64(b.offsets[0])} {
		f, err := rocksblob.New(failingReader{bytes.NewReader(d), at}, int64(len(d)), &rocksblob.Options{Name: "crafted"})
		if err == nil {
			_, err = f.Value(rec[0], rocksblob.Index{Type: 1, FileNumber: 1, Offset: b.offsets[0], Size: 7}, nil)
			if !errors.Is(err, errRead) || errors.Is(err, format.ErrCorrupt) {
				t.Errorf("read error at %d: Value: %v", at, err)
			}
			_, err = f.Verify()
		}
		if !errors.Is(err, errRead) || errors.Is(err, format.ErrCorrupt) {
			t.Errorf("read error at %d: %v", at, err)
		}
	}
}

func TestClose(t *testing.T) {
	rec := [2][]byte{[]byte("key"), []byte("a value")}
	b := newBlobFile(rec)
	path := t.TempDir() + "/000042.blob"
	if err := os.WriteFile(path, b.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := rocksblob.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Number() != 42 || f.Name() != path {
		t.Errorf("Number %d, Name %q", f.Number(), f.Name())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Value(rec[0], rocksblob.Index{Type: 1, FileNumber: 42, Offset: b.offsets[0], Size: 7}, nil); !errors.Is(err, rocksblob.ErrClosed) {
		t.Errorf("Value after Close: %v", err)
	}
	if _, err := f.Verify(); !errors.Is(err, rocksblob.ErrClosed) {
		t.Errorf("Verify after Close: %v", err)
	}
	if err := f.Close(); !errors.Is(err, rocksblob.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}
