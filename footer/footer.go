// Package footer encodes and decodes the fixed-size footer that ends every
// table file: the handles of the index block, filter section and
// properties block, the format version, a checksum of the footer itself,
// and the magic number. The byte layout is described in package format.
package footer

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Size is the footer's length in bytes.
const Size = 64

// Magic is the footer's last 8 bytes, read as a uint64 little-endian. On
// disk the bytes are 0x8b 'S' 'S' 'T' '\r' '\n' 0x1a '\n': a non-ASCII
// first byte and a CR LF / ^Z / LF tail, as in PNG's signature, so that
// text-mode transfers and foreign files are caught.
const Magic uint64 = 0x0a1a0a0d5453538b

// Byte offsets of the footer fields.
const (
	offIndex      = 0  // index handle: offset, length (uint64 LE each)
	offFilter     = 16 // filter handle
	offProperties = 32 // properties handle
	offVersion    = 48 // uint32 LE
	offChecksum   = 52 // uint32 LE masked CRC-32C of bytes [0, 52)
	offMagic      = 56 // uint64 LE
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// foreignMagic names the table formats whose magic numbers (the last 8
// bytes, uint64 LE) a user is likely to hand us by mistake.
var foreignMagic = map[uint64]string{
	0xdb4775248b80fb57: "a LevelDB/goleveldb table (package leveldb reads it)", // leveldb table/format.h kTableMagicNumber
	0x88e241b785f4cff7: "a RocksDB/Pebble block-based table (package rocksdb reads it; sst build -rocksdb converts it)",
	0xf09faab3f09faab3: "a Pebble table",
}

// Footer is the decoded footer. Handle lengths exclude block trailers.
type Footer struct {
	Index      format.BlockHandle // the index block
	Filter     format.BlockHandle // the filter section
	Properties format.BlockHandle // the properties block
	Version    uint32             // format version; format.Version1 to format.Version (Version3)
}

// Append appends the Size-byte encoding of f to dst.
func (f *Footer) Append(dst []byte) []byte {
	start := len(dst)
	for _, h := range []format.BlockHandle{f.Index, f.Filter, f.Properties} {
		dst = binary.LittleEndian.AppendUint64(dst, h.Offset)
		dst = binary.LittleEndian.AppendUint64(dst, h.Length)
	}
	dst = binary.LittleEndian.AppendUint32(dst, f.Version)
	crc := codec.MaskCRC(crc32.Checksum(dst[start:start+offChecksum], castagnoli))
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return binary.LittleEndian.AppendUint64(dst, Magic)
}

// Decode parses the footer of a file of fileSize bytes; buf must hold its
// last Size bytes. It checks, in order, the magic number, the footer
// checksum, the version, and that each handle lies inside the file before
// the footer. Every error wraps format.ErrCorrupt and names the offset.
func Decode(buf []byte, fileSize int64) (Footer, error) {
	var f Footer
	start := fileSize - Size
	if fileSize < Size || len(buf) != Size {
		return f, format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer: not an sstable", fileSize, Size)
	}
	if m := binary.LittleEndian.Uint64(buf[offMagic:]); m != Magic {
		what := "not an sstkit table, or truncated"
		if name, ok := foreignMagic[m]; ok {
			what = "this is " + name + ", not an sstkit table"
		}
		return f, format.Corruptf(format.SectionFooter, start+offMagic, "bad magic number %#016x (want %#016x): %s", m, Magic, what)
	}
	want := binary.LittleEndian.Uint32(buf[offChecksum:])
	if got := codec.MaskCRC(crc32.Checksum(buf[:offChecksum], castagnoli)); got != want {
		return f, format.Corruptf(format.SectionFooter, start, "bad footer checksum: stored %#08x, computed %#08x", want, got)
	}
	f.Version = binary.LittleEndian.Uint32(buf[offVersion:])
	if f.Version < format.Version1 || f.Version > format.Version {
		return f, format.Corruptf(format.SectionFooter, start+offVersion, "unsupported format version %d (this reader knows %d to %d)", f.Version, format.Version1, format.Version)
	}
	handles := []*format.BlockHandle{&f.Index, &f.Filter, &f.Properties}
	names := []string{format.SectionIndex, format.SectionFilter, format.SectionProperties}
	for i, h := range handles {
		o := offIndex + 16*i
		h.Offset = binary.LittleEndian.Uint64(buf[o:])
		h.Length = binary.LittleEndian.Uint64(buf[o+8:])
		if h.Offset > uint64(start) || h.Length > uint64(start)-h.Offset || uint64(start)-h.Offset-h.Length < format.BlockTrailerLen {
			return f, format.Corruptf(format.SectionFooter, start+int64(o), "%s handle (offset %d, length %d) does not fit before the footer at %d", names[i], h.Offset, h.Length, start)
		}
	}
	return f, nil
}
