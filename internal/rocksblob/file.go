package rocksblob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/rocksblock"
)

// Sizes and the magic number of the blob file format
// (db/blob/blob_log_format.h).
const (
	Magic            = 0x00248f37 // kMagicNumber, first in the header and the footer
	Version          = 1          // kVersion1, the only version
	HeaderLen        = 30         // BlobLogHeader::kSize
	FooterLen        = 32         // BlobLogFooter::kSize
	RecordHeaderLen  = 32         // BlobLogRecord::kHeaderSize
	recordCRCCovered = 24         // the header CRC covers the three u64s
)

// Section names in this package's corruption errors.
const (
	SectionHeader = "blob file header"
	SectionRecord = "blob record"
	SectionFooter = "blob file footer"
	SectionIndex  = "blob index" // the offset is within the index's bytes; 0 for an index the file contradicts
)

// MaxValueLen is the largest value, in bytes, a record may decompress to:
// RocksDB refuses values of 4 GiB and more at Put (a write batch stores
// their length as a varint32).
const MaxValueLen = math.MaxUint32

// ErrClosed is wrapped by the errors of a File's methods after Close.
var ErrClosed = errors.New("rocksblob: blob file closed")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc returns the masked CRC-32C of data, as the blob format stores it.
func crc(data []byte) uint32 { return codec.MaskCRC(crc32.Checksum(data, castagnoli)) }

// Options configure Open and New. The zero value (or nil) requires a valid
// footer and checks neither the file number nor the column family.
type Options struct {
	// Name names the file in errors. Open uses the path.
	Name string
	// Number is the blob file's number, which Value requires of every
	// index. 0: Open takes it from a file name of the form NNNNNN.blob;
	// New leaves it unchecked.
	Number uint64
	// CheckColumnFamily makes a file whose header names a column family
	// ID other than ColumnFamilyID an error, as RocksDB's BlobFileReader
	// refuses it ("Column family ID mismatch").
	CheckColumnFamily bool
	ColumnFamilyID    uint32
	// AllowNoFooter accepts a file whose last 32 bytes are not a valid
	// footer, read as a file still being written: its records run to the
	// end of the file. RocksDB allows this only for blob direct write's
	// files (RocksDB 11, BlobFileCache's footer-skip retry); a file that
	// integrated BlobDB lists in its MANIFEST always has its footer.
	AllowNoFooter bool
}

// File is one open blob file. Its methods are safe for concurrent use.
type File struct {
	r       io.ReaderAt
	closer  io.Closer // the *os.File Open opened; nil for New
	size    int64
	name    string
	number  uint64
	cfID    uint32
	comp    byte
	hasFoot bool
	count   uint64 // the footer's record count
	closed  atomic.Bool
}

// Open opens the blob file at path: New over the file, its size from
// Stat, o.Name defaulting to path and o.Number to the number in a file name
// of the form NNNNNN.blob.
func Open(path string, o *Options) (*File, error) {
	var opt Options
	if o != nil {
		opt = *o
	}
	if opt.Name == "" {
		opt.Name = path
	}
	if opt.Number == 0 {
		opt.Number = NumberFromName(path)
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	f, err := New(fd, st.Size(), &opt)
	if err != nil {
		fd.Close()
		return nil, err
	}
	f.closer = fd
	return f, nil
}

// NumberFromName returns the file number in a path whose base name is a
// blob file's, NNNNNN.blob (RocksDB's BlobFileName: the number in decimal,
// at least 6 digits), or 0.
func NumberFromName(path string) uint64 {
	base := filepath.Base(path)
	digits, ok := strings.CutSuffix(base, ".blob")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// New opens the blob file of size bytes read through r, checking its
// header (magic number, version 1, no TTL, a zero expiration range, the
// column family when asked) and its footer (magic number, CRC, a zero
// expiration range), as RocksDB's BlobFileReader::Create does, and that
// its compression type is one this package decodes. Errors wrap
// format.ErrCorrupt, naming o.Name, or rocksblock.ErrUnsupportedCompression
// for a type RocksDB defines and this package cannot decode (Xpress, custom
// compressors), or are r's read errors.
func New(r io.ReaderAt, size int64, o *Options) (*File, error) {
	var opt Options
	if o != nil {
		opt = *o
	}
	f := &File{r: r, size: size, name: opt.Name, number: opt.Number}
	minSize := int64(HeaderLen + FooterLen)
	if opt.AllowNoFooter {
		minSize = HeaderLen
	}
	if size < minSize {
		return nil, f.corrupt(SectionHeader, 0, "file of %d bytes, shorter than the %d a blob file needs", size, minSize)
	}
	var h [HeaderLen]byte
	if err := f.readAt(SectionHeader, h[:], 0); err != nil {
		return nil, err
	}
	if m := binary.LittleEndian.Uint32(h[0:]); m != Magic {
		return nil, f.corrupt(SectionHeader, 0, "magic number %#08x, want %#08x", m, Magic)
	}
	if v := binary.LittleEndian.Uint32(h[4:]); v != Version {
		return nil, f.corrupt(SectionHeader, 4, "unknown version %d", v)
	}
	f.cfID = binary.LittleEndian.Uint32(h[8:])
	if opt.CheckColumnFamily && f.cfID != opt.ColumnFamilyID {
		return nil, f.corrupt(SectionHeader, 8, "column family ID %d, want %d", f.cfID, opt.ColumnFamilyID)
	}
	// RocksDB reads only bit 0 of the flags.
	if h[12]&1 != 0 {
		return nil, f.corrupt(SectionHeader, 12, "a TTL blob file (legacy stacked BlobDB), not integrated BlobDB's")
	}
	f.comp = h[13]
	if err := f.checkCompression(); err != nil {
		return nil, err
	}
	if lo, hi := binary.LittleEndian.Uint64(h[14:]), binary.LittleEndian.Uint64(h[22:]); lo != 0 || hi != 0 {
		return nil, f.corrupt(SectionHeader, 14, "expiration range [%d, %d] in a blob file without TTL", lo, hi)
	}
	if size >= HeaderLen+FooterLen {
		err := f.readFooter()
		if err == nil {
			f.hasFoot = true
		} else if !opt.AllowNoFooter || !errors.Is(err, format.ErrCorrupt) {
			return nil, err
		}
	}
	return f, nil
}

// checkCompression refuses a header's compression type that no value can
// have been compressed with: a type RocksDB does not define is damage,
// one it defines that this package cannot decode is unsupported.
func (f *File) checkCompression() error {
	switch t := f.comp; {
	case t <= rocksblock.ZSTD && t != rocksblock.Xpress, t == rocksblock.ZSTDNotFinal:
		return nil
	case t == rocksblock.Xpress || t >= rocksblock.FirstCustomCompression && t != 0xff:
		return fmt.Errorf("%s: %w: blob file compressed with %s (type byte %#02x)", f.name, rocksblock.ErrUnsupportedCompression, compressionName(t), t)
	default:
		return f.corrupt(SectionHeader, 13, "unknown compression type %#02x", t)
	}
}

// readFooter checks the footer (BlobLogFooter::DecodeFrom and
// BlobFileReader::ReadFooter) and keeps its record count.
func (f *File) readFooter() error {
	off := f.size - FooterLen
	var b [FooterLen]byte
	if err := f.readAt(SectionFooter, b[:], off); err != nil {
		return err
	}
	if m := binary.LittleEndian.Uint32(b[0:]); m != Magic {
		return f.corrupt(SectionFooter, off, "magic number %#08x, want %#08x", m, Magic)
	}
	if got, want := binary.LittleEndian.Uint32(b[28:]), crc(b[:28]); got != want {
		return f.corrupt(SectionFooter, off+28, "footer CRC %#08x, want %#08x", got, want)
	}
	if lo, hi := binary.LittleEndian.Uint64(b[12:]), binary.LittleEndian.Uint64(b[20:]); lo != 0 || hi != 0 {
		return f.corrupt(SectionFooter, off+12, "expiration range [%d, %d] in a blob file without TTL", lo, hi)
	}
	f.count = binary.LittleEndian.Uint64(b[4:])
	return nil
}

// Name returns the name the file's errors carry.
func (f *File) Name() string { return f.name }

// Size returns the file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Number returns the file number Value checks indexes against; 0 when
// unchecked.
func (f *File) Number() uint64 { return f.number }

// ColumnFamilyID returns the ID of the column family the header names.
func (f *File) ColumnFamilyID() uint32 { return f.cfID }

// Compression returns the compression type byte of every value in the
// file, from its header (rocksblock's type bytes; CompressionName names it).
func (f *File) Compression() byte { return f.comp }

// HasFooter reports whether the file ends in a valid footer: always, unless
// Options.AllowNoFooter.
func (f *File) HasFooter() bool { return f.hasFoot }

// BlobCount returns the record count the footer states, 0 without one.
func (f *File) BlobCount() uint64 { return f.count }

// Close releases the file Open opened; a File from New leaves its reader
// to its caller. Later calls of the File's methods return errors wrapping
// ErrClosed.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return fmt.Errorf("%s: %w", f.name, ErrClosed)
	}
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Value returns the value that idx, a blob index read from a table under
// user key key, points to. It checks what RocksDB's Version::GetBlob and
// BlobFileReader::GetBlob check with verify_checksums: an index of TypeBlob
// naming a file other than 0 (and this file, when its number is known),
// a value within the file's records, the file's compression type; then the
// record's header CRC, its key length, value length and key, and its blob
// CRC; then it decompresses the value. The value is written into dst's
// capacity when it suffices (dst's contents are overwritten), else into a
// new buffer.
//
// Errors wrap format.ErrCorrupt, naming the file, the section and the
// offset, or are read errors; a compression this package cannot decode
// wraps rocksblock.ErrUnsupportedCompression.
func (f *File) Value(key []byte, idx Index, dst []byte) ([]byte, error) {
	if f.closed.Load() {
		return nil, fmt.Errorf("%s: %w", f.name, ErrClosed)
	}
	if idx.Type != TypeBlob {
		return nil, f.corrupt(SectionIndex, 0, "blob index of type %d (TTL or inlined) in integrated BlobDB", idx.Type)
	}
	if idx.FileNumber == 0 {
		return nil, f.corrupt(SectionIndex, 0, "blob index names file number 0")
	}
	if f.number != 0 && idx.FileNumber != f.number {
		return nil, f.corrupt(SectionIndex, 0, "blob index names file %d, this is file %d", idx.FileNumber, f.number)
	}
	klen := uint64(len(key))
	if !f.validOffset(idx.Offset, klen, idx.Size) {
		return nil, f.corrupt(SectionIndex, 0, "blob index's value (offset %d, %d bytes, key of %d bytes) is not within the file's records (%d bytes)", idx.Offset, idx.Size, klen, f.size)
	}
	if idx.Compression != f.comp {
		return nil, f.corrupt(SectionIndex, 0, "blob index's compression %s, the file's %s", compressionName(idx.Compression), compressionName(f.comp))
	}
	if idx.Size > math.MaxInt {
		return nil, f.corrupt(SectionRecord, int64(idx.Offset), "value of %d bytes is too large for this platform", idx.Size)
	}
	// The record header and key first (small), then the value straight
	// into its buffer: no copy of a large uncompressed value.
	recOff := int64(idx.Offset - klen - RecordHeaderLen)
	head := make([]byte, RecordHeaderLen+klen)
	if err := f.readAt(SectionRecord, head, recOff); err != nil {
		return nil, err
	}
	vlen := int(idx.Size)
	klen2, vlen2, blobCRC, err := f.recordHeader(head, recOff)
	if err != nil {
		return nil, err
	}
	if klen2 != klen {
		return nil, f.corrupt(SectionRecord, recOff, "record's key of %d bytes, the index's key has %d", klen2, klen)
	}
	if vlen2 != idx.Size {
		return nil, f.corrupt(SectionRecord, recOff+8, "record's value of %d bytes, the index says %d", vlen2, idx.Size)
	}
	if !bytes.Equal(head[RecordHeaderLen:], key) {
		return nil, f.corrupt(SectionRecord, recOff+RecordHeaderLen, "record's key %q is not the index's key %q", clip(head[RecordHeaderLen:]), clip(key))
	}
	var stored []byte
	if f.comp == rocksblock.NoCompression && cap(dst) >= vlen {
		stored = dst[:vlen]
	} else {
		stored = make([]byte, vlen)
	}
	valOff := int64(idx.Offset)
	if err := f.readAt(SectionRecord, stored, valOff); err != nil {
		return nil, err
	}
	c := crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, stored)
	if got := codec.MaskCRC(c); got != blobCRC {
		return nil, f.corrupt(SectionRecord, recOff+28, "blob CRC %#08x, the key and value give %#08x", blobCRC, got)
	}
	return f.decompress(valOff, stored, dst)
}

// decompress returns the value stored at valOff as stored.
func (f *File) decompress(valOff int64, stored, dst []byte) ([]byte, error) {
	out, err := rocksblock.Decompress(SectionRecord, valOff, f.comp, 2, stored, nil, min(MaxValueLen, math.MaxInt), dst)
	if err != nil {
		// Decompress names the section, not the file.
		var ce *format.CorruptError
		switch {
		case errors.As(err, &ce):
			ce.File = f.name
		case f.name != "":
			err = fmt.Errorf("%s: %w", f.name, err)
		}
		return nil, err
	}
	return out, nil
}

// validOffset reports whether a value of size bytes at offset, after a key
// of klen bytes, lies within the file's records (IsValidBlobOffset,
// db/blob/blob_log_format.h).
func (f *File) validOffset(offset, klen, size uint64) bool {
	const minPrefix = HeaderLen + RecordHeaderLen
	if offset < minPrefix || offset-minPrefix < klen {
		return false
	}
	end := uint64(f.size)
	if f.hasFoot {
		end -= FooterLen
	}
	return size <= end && offset <= end-size
}

// recordHeader decodes and checks a record header read from off
// (BlobLogRecord::DecodeHeaderFrom).
func (f *File) recordHeader(h []byte, off int64) (klen, vlen uint64, blobCRC uint32, err error) {
	if got, want := binary.LittleEndian.Uint32(h[24:]), crc(h[:recordCRCCovered]); got != want {
		return 0, 0, 0, f.corrupt(SectionRecord, off+24, "record header CRC %#08x, want %#08x", got, want)
	}
	return binary.LittleEndian.Uint64(h[0:]), binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint32(h[28:]), nil
}

// Stats describe a blob file's records, as Verify counts them.
type Stats struct {
	Records int64  // the records
	Bytes   uint64 // their bytes, headers, keys and stored values: what RocksDB's MANIFEST records as the file's total_blob_bytes
}

// verifyChunk is the most Verify reads at once of an uncompressed value.
const verifyChunk = 1 << 20

// Verify reads every record in order, as RocksDB's BlobLogSequentialReader
// does, and checks each one's header CRC and blob CRC, that its value
// decompresses with the file's compression, that the records end where the
// footer starts (at the end of a file without one) and that the footer's
// record count is theirs. It returns what it counted and the first error,
// wrapping format.ErrCorrupt and naming the file, the section and the
// offset.
func (f *File) Verify() (Stats, error) {
	var st Stats
	if f.closed.Load() {
		return st, fmt.Errorf("%s: %w", f.name, ErrClosed)
	}
	end := f.size
	if f.hasFoot {
		end -= FooterLen
	}
	var head [RecordHeaderLen]byte
	var buf, out []byte
	off := int64(HeaderLen)
	for off < end {
		if end-off < RecordHeaderLen {
			return st, f.corrupt(SectionRecord, off, "%d bytes left before the %s, too few for a record header", end-off, f.endName())
		}
		if err := f.readAt(SectionRecord, head[:], off); err != nil {
			return st, err
		}
		klen, vlen, blobCRC, err := f.recordHeader(head[:], off)
		if err != nil {
			return st, err
		}
		left := uint64(end - off - RecordHeaderLen)
		if klen > left || vlen > left-klen {
			return st, f.corrupt(SectionRecord, off, "record of a %d-byte key and a %d-byte value, but %d bytes left before the %s", klen, vlen, left, f.endName())
		}
		pos := off + RecordHeaderLen
		c := uint32(0)
		// The key and an uncompressed value are checked a chunk at a
		// time; a compressed value is read whole to be decompressed.
		for n := int64(klen); n > 0; {
			k := min(n, verifyChunk)
			buf = grow(buf, int(k))
			if err := f.readAt(SectionRecord, buf, pos); err != nil {
				return st, err
			}
			c = crc32.Update(c, castagnoli, buf)
			pos, n = pos+k, n-k
		}
		valOff := pos
		if f.comp == rocksblock.NoCompression {
			for n := int64(vlen); n > 0; {
				k := min(n, verifyChunk)
				buf = grow(buf, int(k))
				if err := f.readAt(SectionRecord, buf, pos); err != nil {
					return st, err
				}
				c = crc32.Update(c, castagnoli, buf)
				pos, n = pos+k, n-k
			}
		} else {
			if vlen > math.MaxInt {
				return st, f.corrupt(SectionRecord, off+8, "value of %d bytes is too large for this platform", vlen)
			}
			buf = grow(buf, int(vlen))
			if err := f.readAt(SectionRecord, buf, pos); err != nil {
				return st, err
			}
			c = crc32.Update(c, castagnoli, buf)
			pos += int64(vlen)
		}
		if got := codec.MaskCRC(c); got != blobCRC {
			return st, f.corrupt(SectionRecord, off+28, "blob CRC %#08x, the key and value give %#08x", blobCRC, got)
		}
		if f.comp != rocksblock.NoCompression {
			if out, err = f.decompress(valOff, buf, out); err != nil {
				return st, err
			}
		}
		st.Records++
		st.Bytes += RecordHeaderLen + klen + vlen
		off = pos
	}
	if f.hasFoot && uint64(st.Records) != f.count {
		return st, f.corrupt(SectionFooter, f.size-FooterLen+4, "footer counts %d records, the file holds %d", f.count, st.Records)
	}
	return st, nil
}

func (f *File) endName() string {
	if f.hasFoot {
		return "footer"
	}
	return "end of the file"
}

// grow returns b resized to n bytes, reallocated when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// readAt fills b from offset off; a short read is a truncated file.
func (f *File) readAt(section string, b []byte, off int64) error {
	n, err := f.r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return f.corrupt(section, off, "file ends after %d of the %d bytes read here (truncated?)", n, len(b))
	}
	if f.name != "" {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return err
}

// corrupt returns a *format.CorruptError naming the file.
func (f *File) corrupt(section string, off int64, msg string, args ...any) error {
	return &format.CorruptError{Section: section, Offset: off, Msg: fmt.Sprintf(msg, args...), File: f.name}
}

// clip shortens a key for an error message.
func clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

// compressionName names a compression type byte as RocksDB does.
func compressionName(t byte) string { return rocksblock.CompressionName(t) }
