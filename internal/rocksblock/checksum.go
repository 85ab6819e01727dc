// Package rocksblock checks and decodes the blocks of RocksDB block-based
// tables: the 5-byte block trailer's checksum (every checksum type RocksDB
// writes, with format_version 6's per-block context) and the compressed
// block formats of every format_version. It holds pure functions over
// bytes; the table reader finds the blocks.
//
// The algorithms follow RocksDB's table/format.cc, table/format.h and
// util/compression.{h,cc} (RocksDB 7.8 to 11).
package rocksblock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/OneOfOne/xxhash"
	xxhash64 "github.com/cespare/xxhash/v2"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/zeebo/xxh3"
)

// TrailerLen is the length in bytes of the trailer after every block of a
// block-based table: the compression type byte, then the checksum as a
// uint32 LE.
const TrailerLen = 5

// ChecksumType is the footer's checksum type byte (RocksDB's ChecksumType,
// include/rocksdb/table.h). It names the function of every block trailer's
// checksum in the table.
type ChecksumType byte

// The checksum types RocksDB defines.
const (
	NoChecksum ChecksumType = 0 // trailers hold 0 (plus the context modifier)
	CRC32c     ChecksumType = 1 // masked CRC-32C, as LevelDB's
	XXHash     ChecksumType = 2 // XXH32, seed 0
	XXHash64   ChecksumType = 3 // low 32 bits of XXH64, seed 0
	XXH3       ChecksumType = 4 // low 32 bits of XXH3_64bits, last byte mixed in separately (RocksDB 6.27+)
)

// ErrUnsupportedChecksum is wrapped by the errors of a checksum type this
// package does not know.
var ErrUnsupportedChecksum = errors.New("rocksblock: unsupported checksum type")

// String returns the type's name: "none", "crc32c", "xxhash", "xxhash64",
// "xxh3", or "checksum type N" for others.
func (c ChecksumType) String() string {
	switch c {
	case NoChecksum:
		return "none"
	case CRC32c:
		return "crc32c"
	case XXHash:
		return "xxhash"
	case XXHash64:
		return "xxhash64"
	case XXH3:
		return "xxh3"
	}
	return fmt.Sprintf("checksum type %d", byte(c))
}

// xxh3LastBytePrime is the odd constant by which RocksDB's XXH3 block
// checksum mixes in the trailer's type byte (ModifyChecksumForLastByte,
// table/format.cc): XXH3 hashes the contents in one call and the type
// byte is folded in afterwards by xor with typ*prime, not streamed.
const xxh3LastBytePrime = 0x6b9083d9

// TrailerChecksum returns the checksum RocksDB stores in a block's trailer
// for block contents data (as stored, compressed or not) followed by the
// trailer's type byte typ, before any context modifier
// (ComputeBuiltinChecksumWithLastByte, table/format.cc): for CRC32c the
// CRC-32C of data+typ masked as LevelDB does (util/crc32c.h), for XXHash
// XXH32(data+typ, 0), for XXHash64 the low 32 bits of XXH64(data+typ, 0),
// for XXH3 the low 32 bits of XXH3_64bits(data) (the final XXH3 of
// xxHash 0.8, util/xxhash.h, not the filters' preview XXPH3) xor
// typ*0x6b9083d9, and 0 for NoChecksum. An unknown c gives an error
// wrapping ErrUnsupportedChecksum.
func TrailerChecksum(c ChecksumType, data []byte, typ byte) (uint32, error) {
	switch c {
	case NoChecksum:
		return 0, nil
	case CRC32c:
		return codec.BlockChecksum(data, typ), nil
	case XXHash:
		var h xxhash.XXHash32
		h.Reset()
		h.Write(data)
		last := [1]byte{typ}
		h.Write(last[:])
		return h.Sum32(), nil
	case XXHash64:
		var d xxhash64.Digest
		d.Reset()
		d.Write(data)
		last := [1]byte{typ}
		d.Write(last[:])
		return uint32(d.Sum64()), nil
	case XXH3:
		return uint32(xxh3.Hash(data)) ^ uint32(typ)*xxh3LastBytePrime, nil
	}
	return 0, fmt.Errorf("%w %d", ErrUnsupportedChecksum, byte(c))
}

// Checksum returns RocksDB's checksum of data alone
// (ComputeBuiltinChecksum, table/format.cc): what a format_version 6+
// footer stores, computed over its 53 bytes with the checksum field
// zeroed, plus ContextModifier(base, footer offset). For non-empty data it
// equals TrailerChecksum(c, data[:len(data)-1], data[len(data)-1]); for
// empty data XXH3 gives 0. An unknown c gives an error wrapping
// ErrUnsupportedChecksum.
func Checksum(c ChecksumType, data []byte) (uint32, error) {
	switch c {
	case CRC32c:
		return codec.MaskCRC(crc32.Checksum(data, castagnoli)), nil
	case XXHash:
		return xxhash.Checksum32(data), nil
	case XXHash64:
		return uint32(xxhash64.Sum64(data)), nil
	case XXH3:
		if len(data) == 0 {
			return 0, nil
		}
	}
	if len(data) == 0 {
		return TrailerChecksum(c, nil, 0)
	}
	return TrailerChecksum(c, data[:len(data)-1], data[len(data)-1])
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ContextModifier returns what format_version 6 and later add to every
// block's checksum (and the footer's), so that a block copied to another
// offset or another file fails its check: base xor (the low 32 bits of
// offset + its high 32 bits), or 0 when base is 0 (tables before
// format_version 6). base is the footer's base context checksum, offset
// the block's file offset in bytes (ChecksumModifierForContext,
// table/format.h).
func ContextModifier(base uint32, offset uint64) uint32 {
	if base == 0 {
		return 0
	}
	return base ^ (uint32(offset) + uint32(offset>>32))
}

// CheckBlock checks a block read from file offset off: buf holds the
// block's stored bytes followed by its TrailerLen-byte trailer. c is the
// table's checksum type and base its footer's base context checksum (0
// before format_version 6). It returns the stored bytes (aliasing buf) and
// the trailer's compression type byte. A trailer whose checksum is not
// TrailerChecksum(c, stored, typ) + ContextModifier(base, off) gives an
// error wrapping format.ErrCorrupt naming section, off and both values; an
// unknown c gives an error wrapping ErrUnsupportedChecksum. The type byte
// is not checked: Decompress judges it.
func CheckBlock(section string, off int64, buf []byte, c ChecksumType, base uint32) (stored []byte, typ byte, err error) {
	if len(buf) < TrailerLen {
		return nil, 0, format.Corruptf(section, off, "block of %d bytes is shorter than its %d-byte trailer", len(buf), TrailerLen)
	}
	n := len(buf) - TrailerLen
	stored, typ = buf[:n], buf[n]
	sum, err := TrailerChecksum(c, stored, typ)
	if err != nil {
		return nil, 0, err
	}
	want := sum + ContextModifier(base, uint64(off))
	if got := binary.LittleEndian.Uint32(buf[n+1:]); got != want {
		return nil, 0, format.Corruptf(section, off, "%s checksum mismatch: trailer at offset %d holds %#08x, the %d stored bytes and type byte %d give %#08x", c, off+int64(n), got, n, typ, want)
	}
	return stored, typ, nil
}
