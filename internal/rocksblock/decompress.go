package rocksblock

import (
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/sstkit/sstable/format"
)

// The compression type bytes of a block trailer (RocksDB's CompressionType,
// include/rocksdb/compression_type.h).
const (
	NoCompression byte = 0x00
	Snappy        byte = 0x01
	Zlib          byte = 0x02
	BZip2         byte = 0x03
	LZ4           byte = 0x04
	LZ4HC         byte = 0x05
	Xpress        byte = 0x06 // Windows only; not decoded here
	ZSTD          byte = 0x07
	// ZSTDNotFinal is the type RocksDB gave zstd before zstd's format was
	// final; RocksDB 7.8 still writes it on request and reads it as ZSTD.
	ZSTDNotFinal byte = 0x40
	// FirstCustomCompression starts the types (0x80 to 0xFE) that newer
	// RocksDB reserves for a custom CompressionManager, which only that
	// manager decodes.
	FirstCustomCompression byte = 0x80
)

// ErrUnsupportedCompression is wrapped by the errors of Decompress for a
// block whose compression this package cannot decode (Xpress, a custom
// compression manager's types, types RocksDB does not define): the table
// may be valid, this package just cannot read it. It does not wrap
// format.ErrCorrupt.
var ErrUnsupportedCompression = errors.New("rocksblock: unsupported compression")

// CompressionName returns RocksDB's name of compression type t as sst_dump
// and the table properties print it (CompressionTypeToString,
// util/compression.cc): "NoCompression", "Snappy", "Zlib", "BZip2", "LZ4",
// "LZ4HC", "Xpress", "ZSTD", "ZSTDNotFinal" (RocksDB 7.x's name of 0x40),
// or "compression type N" for others.
func CompressionName(t byte) string {
	switch t {
	case NoCompression:
		return "NoCompression"
	case Snappy:
		return "Snappy"
	case Zlib:
		return "Zlib"
	case BZip2:
		return "BZip2"
	case LZ4:
		return "LZ4"
	case LZ4HC:
		return "LZ4HC"
	case Xpress:
		return "Xpress"
	case ZSTD:
		return "ZSTD"
	case ZSTDNotFinal:
		return "ZSTDNotFinal"
	}
	return fmt.Sprintf("compression type %d", t)
}

// Bounds on how many bytes a block of each format can decode to per stored
// byte, checked against a block's size claim before anything is
// allocated, so that a few bytes claiming a large size are an error and
// not a large allocation. Snappy: a 3-byte copy yields at most 64 bytes.
// LZ4: each length-extension byte adds at most 255. Deflate: a 258-byte
// match costs at least 2 bits. Zstd: an RLE block of 4 bytes yields at
// most 128 KiB. Bzip2 has no useful bound (its run-length stages compound)
// and is bounded by maxLen alone.
const (
	snappyRatio  = 22
	lz4Ratio     = 256
	deflateRatio = 1032
	zstdRatio    = 1 << 15
	ratioSlack   = 64
)

// Dict is a table's compression dictionary, the contents of its
// rocksdb.compression_dict meta block, prepared for Decompress: zstd
// blocks need a decoder made from it, which costs far more than decoding
// one block, so it is made once, on first use, and shared by every
// goroutine. LZ4 and zlib use the bytes as they are.
type Dict struct {
	raw []byte

	once sync.Once
	zdec *zstd.Decoder
	zerr error
}

// NewDict returns the dictionary whose bytes are contents (which it keeps
// and which must not change), or nil when contents is empty: RocksDB
// writes no dictionary block then, and a nil *Dict means "no dictionary"
// to Decompress.
func NewDict(contents []byte) *Dict {
	if len(contents) == 0 {
		return nil
	}
	return &Dict{raw: contents}
}

// Bytes returns the dictionary's contents.
func (d *Dict) Bytes() []byte {
	if d == nil {
		return nil
	}
	return d.raw
}

// zstdDictMagic starts a dictionary in zstd's format (RFC 8878 section 5),
// as zstd's trainer (ZDICT) makes it. zstd's ZSTD_createDDict takes any
// other buffer as raw content: bytes that frames may refer back to.
const zstdDictMagic = 0xEC30A437

// zstdDecoder returns the dictionary's zstd decoder, made on first use. A
// trained dictionary is registered under its ID, which the frames
// encoded with it name; raw content under ID 0, which frames encoded with
// raw content carry (zstd writes no dictionary ID for them). (zstd itself
// would also apply a trained dictionary to a frame naming none; RocksDB's
// frames always name it.)
func (d *Dict) zstdDecoder() (*zstd.Decoder, error) {
	d.once.Do(func() {
		defer func() {
			// The dictionary is untrusted bytes; a parser panic is a bad
			// dictionary.
			if r := recover(); r != nil {
				d.zdec, d.zerr = nil, fmt.Errorf("zstd dictionary parser failed: %v", r)
			}
		}()
		opt := zstd.WithDecoderDictRaw(0, d.raw)
		if len(d.raw) >= 4 && binary.LittleEndian.Uint32(d.raw) == zstdDictMagic {
			opt = zstd.WithDecoderDicts(d.raw)
		}
		d.zdec, d.zerr = zstd.NewReader(nil, opt,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecodeAllCapLimit(true))
		if d.zerr != nil {
			d.zerr = fmt.Errorf("bad zstd dictionary (%v)", d.zerr)
		}
	})
	return d.zdec, d.zerr
}

var (
	zstdPlainOnce sync.Once
	zstdPlain     *zstd.Decoder
)

// zstdPlainDecoder returns the decoder of frames without a dictionary,
// shared by every caller: klauspost's Decoder is safe for concurrent
// DecodeAll calls and pools GOMAXPROCS states. With the cap limit,
// DecodeAll never grows dst past the capacity Decompress sized from the
// bounded claim.
func zstdPlainDecoder() *zstd.Decoder {
	zstdPlainOnce.Do(func() {
		var err error
		zstdPlain, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic("rocksblock: zstd decoder options: " + err.Error()) // static options; cannot fail
		}
	})
	return zstdPlain
}

// hasSizePrefix reports whether blocks of type typ in a table of
// formatVersion start with a varint of their decompressed size
// (compress_format_version 2, used from format_version 2 on; zstd always
// has it, snappy never, as snappy records the size itself).
func hasSizePrefix(typ byte, formatVersion uint32) bool {
	switch typ {
	case ZSTD, ZSTDNotFinal:
		return true
	case Zlib, BZip2, LZ4, LZ4HC:
		return formatVersion >= 2
	}
	return false
}

// sizePrefix reads the varint size prefix of stored: RocksDB writes a
// varint32 and RocksDB 10+ reads a varint64.
func sizePrefix(stored []byte) (n uint64, rest []byte, ok bool) {
	n, k := binary.Uvarint(stored)
	if k <= 0 {
		return 0, nil, false
	}
	return n, stored[k:], true
}

// lz4LegacySize reads the 8-byte size header of an LZ4 block of
// format_version 0 or 1: RocksDB memcpy'd the writer's size_t, so it is
// little-endian from a little-endian writer and big-endian from a
// big-endian one. The size fits 32 bits, so the zero half tells which.
func lz4LegacySize(stored []byte) (n uint64, rest []byte, ok bool) {
	if len(stored) < 8 {
		return 0, nil, false
	}
	if v := binary.LittleEndian.Uint64(stored); v <= math.MaxUint32 {
		return v, stored[8:], true
	}
	if v := binary.BigEndian.Uint64(stored); v <= math.MaxUint32 {
		return v, stored[8:], true
	}
	return 0, nil, false
}

// DecompressedLen returns the decompressed size a block of type typ in a
// table of formatVersion claims, when its bytes say so cheaply: the length
// of a raw block, snappy's own length header, the varint size prefix of
// format_version 2 and of every zstd block, the 8-byte header of a legacy
// LZ4 block. It is only a claim, for sizing a cache reservation;
// Decompress checks it. ok is false when the size is unknown without
// decoding (zlib and bzip2 before format_version 2, types not decoded
// here) or the header is malformed.
func DecompressedLen(typ byte, formatVersion uint32, stored []byte) (n int, ok bool) {
	var v uint64
	switch {
	case typ == NoCompression:
		return len(stored), true
	case typ == Snappy:
		m, err := snappy.DecodedLen(stored)
		return m, err == nil
	case hasSizePrefix(typ, formatVersion):
		v, _, ok = sizePrefix(stored)
	case typ == LZ4 || typ == LZ4HC:
		v, _, ok = lz4LegacySize(stored)
	}
	if !ok || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// Decompress returns the contents of a block stored as stored with
// compression type typ, in a table of format_version formatVersion whose
// compression dictionary is dict (nil if it has none). section and off
// name the block in errors.
//
// Formats (util/compression.h): a NoCompression block is returned as is
// (aliasing stored). Snappy blocks are raw snappy. From format_version 2
// on, every other type starts with a varint of the decompressed size;
// before it (compress_format_version 1) zlib and bzip2 blocks have no
// size and LZ4 blocks an 8-byte one (see lz4LegacySize), while zstd
// always has the varint. Zlib is raw deflate (RocksDB's default
// window_bits -14) with the dictionary preset; a zlib-wrapped stream
// (written with window_bits > 0) is accepted too. Bzip2 is one bzip2
// stream. LZ4 and LZ4HC are one LZ4 block, decoded with the dictionary
// as preceding history (LZ4_setStreamDecode). Zstd (and ZSTDNotFinal) is
// one zstd frame, with the dictionary either a trained zstd dictionary
// (starting with its magic number) or raw content.
//
// The result is written into dst's capacity when it suffices (dst's
// contents are overwritten), else into a new buffer. maxLen bounds the
// decompressed size: a larger size claim, or a claim beyond what the
// stored bytes could expand to, is an error before anything is allocated,
// so hostile size fields cannot cause large allocations. The block must
// decode to exactly its claimed size.
//
// Bad bytes give errors wrapping format.ErrCorrupt naming section and
// off. A type this package cannot decode (Xpress, custom types 0x80 and
// up, undefined types) gives an error wrapping ErrUnsupportedCompression
// and naming the type.
func Decompress(section string, off int64, typ byte, formatVersion uint32, stored []byte, dict *Dict, maxLen int, dst []byte) (out []byte, err error) {
	if typ == NoCompression {
		return stored, nil
	}
	maxLen = max(maxLen, 0)
	defer func() {
		// The decoders are third-party code fed untrusted bytes: a panic
		// in one is a bad block, not a crashed reader.
		if r := recover(); r != nil {
			out, err = nil, format.Corruptf(section, off, "%s block: decoder failed: %v", CompressionName(typ), r)
		}
	}()
	be := blockErr{section, off, typ}

	// The size claim, bounded before any allocation.
	var claim uint64
	payload, known := stored, false
	ratio := 0
	switch typ {
	case Snappy:
		m, err := snappy.DecodedLen(stored)
		if err != nil {
			return nil, be.corrupt("bad snappy length header (%v)", err)
		}
		claim, known, ratio = uint64(m), true, snappyRatio
	case Zlib, BZip2, LZ4, LZ4HC, ZSTD, ZSTDNotFinal:
		switch typ {
		case Zlib:
			ratio = deflateRatio
		case LZ4, LZ4HC:
			ratio = lz4Ratio
		case ZSTD, ZSTDNotFinal:
			ratio = zstdRatio
		}
		var ok bool
		switch {
		case hasSizePrefix(typ, formatVersion):
			if claim, payload, ok = sizePrefix(stored); !ok {
				return nil, be.corrupt("bad varint size prefix")
			}
			known = true
		case typ == LZ4 || typ == LZ4HC:
			if claim, payload, ok = lz4LegacySize(stored); !ok {
				return nil, be.corrupt("bad 8-byte size header of format_version %d", formatVersion)
			}
			known = true
		}
	default:
		return nil, fmt.Errorf("%w: %s (type byte %#02x) in %s at offset %d", ErrUnsupportedCompression, CompressionName(typ), typ, section, off)
	}
	if known {
		if claim > uint64(maxLen) {
			return nil, be.corrupt("claims %d decompressed bytes, more than the limit of %d", claim, maxLen)
		}
		if ratio > 0 && claim > uint64(ratio)*uint64(len(payload))+ratioSlack {
			return nil, be.corrupt("claims %d decompressed bytes from %d stored bytes", claim, len(payload))
		}
	}
	n := int(claim)
	grow := func() []byte {
		if cap(dst) < n {
			return make([]byte, n)
		}
		return dst[:n]
	}

	switch typ {
	case Snappy:
		out, err := snappy.Decode(grow(), payload)
		if err != nil {
			return nil, be.corrupt("bad snappy data (%v)", err)
		}
		if len(out) != n {
			return nil, be.corrupt("decodes to %d bytes, its header claims %d", len(out), n)
		}
		return out, nil
	case LZ4, LZ4HC:
		if n == 0 {
			// An empty block is one token with no literals (LZ4's block
			// format); pierrec/lz4's assembly decoder must not be given
			// an empty destination (it dereferences it).
			if len(payload) == 1 && payload[0] == 0 {
				return dst[:0], nil
			}
			return nil, be.corrupt("%d stored bytes for an empty block", len(payload))
		}
		buf := grow()
		m, err := lz4.UncompressBlockWithDict(payload, buf, dict.Bytes())
		if err != nil {
			return nil, be.corrupt("bad LZ4 data (%v)", err)
		}
		if m != n {
			return nil, be.corrupt("decodes to %d bytes, its header claims %d", m, n)
		}
		return buf, nil
	case ZSTD, ZSTDNotFinal:
		return decodeZstd(be, payload, n, dict, dst)
	case Zlib:
		return inflate(be, payload, known, n, maxLen, dict.Bytes(), dst, true)
	case BZip2:
		return readStream(be, bzip2.NewReader(bytes.NewReader(payload)), BZip2, known, n, maxLen, len(payload), dst)
	}
	panic("unreachable")
}

// blockErr makes the corruption errors of one block.
type blockErr struct {
	section string
	off     int64
	typ     byte
}

func (b blockErr) corrupt(msg string, args ...any) error {
	return format.Corruptf(b.section, b.off, "%s block: %s", CompressionName(b.typ), fmt.Sprintf(msg, args...))
}

// decodeZstd decodes the zstd frame payload, which claims n bytes (already
// bounded), with dict's decoder when the table has a dictionary.
func decodeZstd(be blockErr, payload []byte, n int, dict *Dict, dst []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(payload); err != nil {
		return nil, be.corrupt("bad zstd frame header (%v)", err)
	}
	if h.Skippable {
		return nil, be.corrupt("zstd skippable frame instead of a data frame")
	}
	if h.HasFCS && h.FrameContentSize != uint64(n) {
		return nil, be.corrupt("zstd frame content size %d differs from the size prefix %d", h.FrameContentSize, n)
	}
	dec := zstdPlainDecoder()
	if dict != nil {
		var err error
		if dec, err = dict.zstdDecoder(); err != nil {
			return nil, be.corrupt("%v", err)
		}
	} else if h.DictionaryID != 0 {
		return nil, be.corrupt("zstd frame needs dictionary %d; the table has none", h.DictionaryID)
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	out, err := dec.DecodeAll(payload, dst[:0:n])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, be.corrupt("decodes to more than the %d bytes its size prefix claims", n)
		}
		return nil, be.corrupt("bad zstd data (%v)", err)
	}
	if len(out) != n {
		return nil, be.corrupt("decodes to %d bytes, its size prefix claims %d", len(out), n)
	}
	return out, nil
}

// flateReader is a raw-deflate reader (about 40 KiB of state) with the
// bytes.Reader it reads from, pooled in flateReaders; Reset points it at a
// block and its dictionary.
type flateReader struct {
	src bytes.Reader
	fr  io.ReadCloser
}

var flateReaders = sync.Pool{New: func() any {
	f := new(flateReader)
	f.fr = flate.NewReader(&f.src)
	return f
}}

// inflate decodes a zlib block: raw deflate as RocksDB writes by default,
// else, when orWrapped and that fails and payload starts with a zlib
// header (RFC 1950: method 8, header check a multiple of 31), a
// zlib-wrapped stream as written with a positive window_bits.
func inflate(be blockErr, payload []byte, known bool, n, maxLen int, dict, dst []byte, orWrapped bool) ([]byte, error) {
	f := flateReaders.Get().(*flateReader)
	defer func() {
		f.src.Reset(nil) // keep no block alive in the pool
		flateReaders.Put(f)
	}()
	f.src.Reset(payload)
	if err := f.fr.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, be.corrupt("deflate reader: %v", err)
	}
	out, rawErr := readStream(be, f.fr, Zlib, known, n, maxLen, len(payload), dst)
	if rawErr == nil || !orWrapped || len(payload) < 2 {
		return out, rawErr
	}
	cmf, flg := payload[0], payload[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0 {
		return nil, rawErr
	}
	zr, err := zlib.NewReaderDict(bytes.NewReader(payload), dict)
	if err != nil {
		return nil, rawErr
	}
	out, err = readStream(be, zr, Zlib, known, n, maxLen, len(payload), dst)
	if err != nil {
		return nil, rawErr
	}
	return out, nil
}

// Inflate returns the contents of stored, one deflate stream (RFC 1951)
// when !wrapped, one zlib stream (RFC 1950: a header, deflate, an
// Adler-32 of the output) when wrapped, with no size recorded: the output
// grows as decoded, up to maxLen bytes, into dst's capacity or a new
// buffer. These are the blocks of Mojang's LevelDB (Minecraft Bedrock),
// types 4 and 2, which, unlike Decompress's zlib blocks, say which of the
// two they hold. Bad bytes give errors wrapping format.ErrCorrupt naming
// section and off.
func Inflate(section string, off int64, stored []byte, wrapped bool, maxLen int, dst []byte) (out []byte, err error) {
	be := blockErr{section, off, Zlib}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, be.corrupt("decoder failed: %v", r)
		}
	}()
	if !wrapped {
		return inflate(be, stored, false, 0, max(maxLen, 0), nil, dst, false)
	}
	zr, err := zlib.NewReader(bytes.NewReader(stored))
	if err != nil {
		return nil, be.corrupt("bad zlib header (%v)", err)
	}
	return readStream(be, zr, Zlib, false, 0, max(maxLen, 0), len(stored), dst)
}

// readExact reads the decoded stream r, which must hold exactly n bytes
// (n already bounded), into dst's capacity or a new buffer of n bytes.
func readExact(be blockErr, r io.Reader, n int, dst []byte) ([]byte, error) {
	buf := dst[:0]
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	buf = buf[:n]
	if m, err := io.ReadFull(r, buf); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, be.corrupt("decodes to %d bytes, its size prefix claims %d", m, n)
		}
		return nil, be.corrupt("bad data (%v)", err)
	}
	var one [1]byte
	if m, err := io.ReadFull(r, one[:]); m != 0 {
		return nil, be.corrupt("decodes to more than the %d bytes its size prefix claims", n)
	} else if err != io.EOF {
		return nil, be.corrupt("bad data after %d bytes (%v)", n, err)
	}
	return buf, nil
}

// readGrowing reads the decoded stream r to its end into dst's capacity,
// growing the buffer as the output arrives (from firstCap when dst has
// none), never past limit bytes: more output is an error saying it
// exceeds what limitWhat names. Memory then follows the output actually
// decoded, not a size field.
func readGrowing(be blockErr, r io.Reader, limit, firstCap int, limitWhat string, dst []byte) ([]byte, error) {
	buf := dst[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, max(min(firstCap, limit), 0))
	}
	for {
		if len(buf) == cap(buf) {
			// Full: one more byte tells whether the stream goes on.
			var one [1]byte
			m, err := io.ReadFull(r, one[:])
			if m == 0 {
				if err == io.EOF {
					return buf, nil
				}
				return nil, be.corrupt("bad data after %d bytes (%v)", len(buf), err)
			}
			if len(buf) >= limit {
				return nil, be.corrupt("decodes to more than %s", limitWhat)
			}
			grown := make([]byte, len(buf), min(max(2*cap(buf), 4096), limit))
			copy(grown, buf)
			buf = append(grown, one[0])
			continue
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, be.corrupt("bad data (%v)", err)
		}
	}
}

// readStream reads a zlib or bzip2 stream. With a size prefix (known),
// zlib's n, bounded by deflate's ratio, is allocated at once; bzip2's n is
// only an upper limit for a growing buffer, as bzip2's ratio bounds
// nothing useful, and the output must then be exactly n bytes. Without a
// size (format_version 0 and 1), the buffer grows from RocksDB's own
// first guess of 5 times the stored size up to maxLen.
func readStream(be blockErr, r io.Reader, typ byte, known bool, n, maxLen, storedLen int, dst []byte) ([]byte, error) {
	first := 5*storedLen + 4096
	switch {
	case known && typ == Zlib:
		return readExact(be, r, n, dst)
	case known:
		out, err := readGrowing(be, r, n, first, fmt.Sprintf("the %d bytes its size prefix claims", n), dst)
		if err == nil && len(out) != n {
			return nil, be.corrupt("decodes to %d bytes, its size prefix claims %d", len(out), n)
		}
		return out, err
	}
	return readGrowing(be, r, maxLen, first, fmt.Sprintf("the limit of %d bytes", maxLen), dst)
}
