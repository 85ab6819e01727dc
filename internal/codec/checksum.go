package codec

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/golang/snappy"
	"github.com/sstkit/sstable/format"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcMaskDelta is LevelDB's mask constant (util/crc32c.h). Masking keeps a
// CRC stored inside CRC-covered data from weakening the outer checksum.
const crcMaskDelta = 0xa282ead8

// MaskCRC rotates crc right by 15 bits and adds a constant, as LevelDB's
// crc32c::Mask does.
func MaskCRC(crc uint32) uint32 { return (crc>>15 | crc<<17) + crcMaskDelta }

// BlockChecksum returns the masked CRC-32C (Castagnoli) of stored followed
// by the compression-type byte typ: the value kept in a block trailer.
func BlockChecksum(stored []byte, typ byte) uint32 {
	c := crc32.Update(0, castagnoli, stored)
	// Feed the type byte through the table by hand (crc32's simple update
	// step): a []byte{typ} passed to crc32.Update escapes and would
	// allocate on every call.
	c = ^c
	c = castagnoli[byte(c)^typ] ^ c>>8
	c = ^c
	return MaskCRC(c)
}

// AppendTrailer appends the 5-byte trailer for stored (type byte, then
// BlockChecksum as uint32 LE) to dst.
func AppendTrailer(dst, stored []byte, typ byte) []byte {
	dst = append(dst, typ)
	return binary.LittleEndian.AppendUint32(dst, BlockChecksum(stored, typ))
}

// CheckBlock verifies a stored block. buf must hold exactly the block's
// stored bytes followed by its trailer, and off is the file offset of
// buf[0], used in errors. It returns the stored bytes and the compression
// type, or an error wrapping ErrCorrupt naming section and offset.
func CheckBlock(section string, off int64, buf []byte) (stored []byte, typ byte, err error) {
	if len(buf) < format.BlockTrailerLen {
		return nil, 0, format.Corruptf(section, off, "block of %d bytes is shorter than its %d-byte trailer", len(buf), format.BlockTrailerLen)
	}
	n := len(buf) - format.BlockTrailerLen
	stored, typ = buf[:n], buf[n]
	want := binary.LittleEndian.Uint32(buf[n+1:])
	if got := BlockChecksum(stored, typ); got != want {
		return nil, 0, format.Corruptf(section, off, "checksum mismatch: trailer at offset %d says %#08x, %d stored bytes give %#08x", off+int64(n), want, n, got)
	}
	if typ > format.BlockTypeZstdDict {
		return nil, 0, format.Corruptf(section, off+int64(n), "unknown block compression type %d", typ)
	}
	return stored, typ, nil
}

// maxSnappyExpansion bounds how much a snappy block can expand: the
// costliest tag, a 3-byte copy, produces at most 64 bytes.
const maxSnappyExpansion = 22

// snappyDecodedLen is snappy.DecodedLen.
func snappyDecodedLen(stored []byte) (int, error) { return snappy.DecodedLen(stored) }

// DecodeBlock is DecodeBlockDict without a dictionary: a block of type
// BlockTypeZstdDict is then an error wrapping ErrCorrupt.
func DecodeBlock(section string, off int64, stored []byte, typ byte, maxLen int, dst []byte) ([]byte, error) {
	return DecodeBlockDict(section, off, stored, typ, maxLen, dst, nil)
}

// DecodeBlockDict returns the contents of a checked stored block of type
// typ, d being the table's zstd dictionary (nil when it has none). Raw
// blocks are returned as is (aliasing stored); snappy, zstd, MinLZ and
// zstd dictionary blocks are decoded into dst's spare capacity, with no
// allocation when it holds the decoded length (DecodedLen), or else into
// a new buffer of exactly that length. The decoded length the block
// claims (snappy's and MinLZ's length varint, the zstd frame's content
// size) is checked against maxLen, and for snappy against its maximum
// expansion, before anything is allocated or decoded, so a lying length
// field cannot cause a large allocation; a zstd frame without a content
// size is refused, and the decoder never writes past the bounded buffer
// (a "zstd bomb" is an error, not an allocation). A MinLZ block must
// start with MinLZ's 0 byte (minlz's snappy fallback is refused), and a
// dictionary block's frame must name d's ID. Errors wrap ErrCorrupt.
func DecodeBlockDict(section string, off int64, stored []byte, typ byte, maxLen int, dst []byte, d *ZstdDict) ([]byte, error) {
	switch typ {
	case format.BlockTypeRaw:
		return stored, nil
	case format.BlockTypeSnappy:
		n, err := snappy.DecodedLen(stored)
		if err != nil {
			return nil, format.Corruptf(section, off, "bad snappy header (%v)", err)
		}
		if n > maxLen || n > maxSnappyExpansion*len(stored)+16 {
			return nil, format.Corruptf(section, off, "snappy block claims %d decoded bytes from %d stored bytes (limit %d)", n, len(stored), maxLen)
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		out, err := snappy.Decode(dst[:cap(dst)], stored)
		if err != nil {
			return nil, format.Corruptf(section, off, "bad snappy data (%v)", err)
		}
		return out, nil
	case format.BlockTypeZstd, format.BlockTypeZstdDict:
		n, err := zstdDecodedLen(stored)
		if err != nil {
			return nil, format.Corruptf(section, off, "%v", err)
		}
		if n > maxLen {
			return nil, format.Corruptf(section, off, "zstd block claims %d decoded bytes from %d stored bytes (limit %d)", n, len(stored), maxLen)
		}
		if typ == format.BlockTypeZstdDict {
			return decodeZstdDict(section, off, stored, n, dst, d)
		}
		return decodeZstd(section, off, stored, n, dst)
	case format.BlockTypeMinLZ:
		n, err := minlzDecodedLen(stored)
		if err != nil {
			return nil, format.Corruptf(section, off, "%v", err)
		}
		if n > maxLen {
			return nil, format.Corruptf(section, off, "MinLZ block claims %d decoded bytes from %d stored bytes (limit %d)", n, len(stored), maxLen)
		}
		return decodeMinLZ(section, off, stored, n, dst)
	}
	return nil, format.Corruptf(section, off, "unknown block compression type %d", typ)
}
