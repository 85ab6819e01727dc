package codec

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/sstkit/sstable/format"
)

// The zstd codec is github.com/klauspost/compress/zstd. One Encoder per
// level and one Decoder serve every caller: both are safe for concurrent
// EncodeAll/DecodeAll calls and keep an internal pool of per-call state
// (hash tables, histories), GOMAXPROCS of them, so steady-state calls do
// not allocate. They are made on first use.
var (
	zstdEncoders [format.LevelBest + 1]struct {
		once sync.Once
		enc  *zstd.Encoder
	}
	zstdDecoderOnce sync.Once
	zstdDecoder     *zstd.Decoder
)

func zstdEncoder(l format.CompressionLevel) *zstd.Encoder {
	if l < format.LevelDefault || l > format.LevelBest {
		l = format.LevelDefault
	}
	e := &zstdEncoders[l]
	e.once.Do(func() {
		level := map[format.CompressionLevel]zstd.EncoderLevel{
			format.LevelFastest: zstd.SpeedFastest,
			format.LevelDefault: zstd.SpeedDefault,
			format.LevelBetter:  zstd.SpeedBetterCompression,
			format.LevelBest:    zstd.SpeedBestCompression,
		}[l]
		var err error
		e.enc, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(level),
			// The block trailer's CRC-32C covers the stored bytes; the
			// frame's own XXH64 checksum would only add 4 bytes.
			zstd.WithEncoderCRC(false),
			// Single-segment frames always record their content size
			// (otherwise frames under 256 bytes omit it), which
			// DecodedLen and DecodeBlock require.
			zstd.WithSingleSegment(true),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		if err != nil {
			panic("sstable: zstd encoder options: " + err.Error()) // static options; cannot fail
		}
	})
	return e.enc
}

func zstdDec() *zstd.Decoder {
	zstdDecoderOnce.Do(func() {
		var err error
		zstdDecoder, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			// Never decode past cap(dst): DecodeBlock sizes dst from the
			// frame content size it has bounded, so nothing a block
			// claims can make DecodeAll allocate.
			zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic("sstable: zstd decoder options: " + err.Error()) // static options; cannot fail
		}
	})
	return zstdDecoder
}

// AppendZstd appends the zstd encoding of src at level l to dst and
// returns the extended slice: one Zstandard frame (RFC 8878) that records
// its content size and carries no frame checksum. It allocates nothing in
// steady state when dst has room; the encoders are pooled.
func AppendZstd(dst, src []byte, l format.CompressionLevel) []byte {
	return zstdEncoder(l).EncodeAll(src, dst)
}

// zstdDecodedLen returns the content size stored in the header of the
// zstd frame at the start of stored. Its errors say what is wrong and do
// not wrap ErrCorrupt: callers add the section and offset.
func zstdDecodedLen(stored []byte) (int, error) {
	var h zstd.Header
	if err := h.Decode(stored); err != nil {
		return 0, fmt.Errorf("bad zstd frame header (%v)", err)
	}
	if h.Skippable {
		return 0, errors.New("zstd skippable frame instead of a data frame")
	}
	if !h.HasFCS {
		return 0, errors.New("zstd frame header has no content size")
	}
	if h.FrameContentSize > math.MaxInt32 {
		return 0, fmt.Errorf("zstd frame claims %d decoded bytes", h.FrameContentSize)
	}
	return int(h.FrameContentSize), nil
}

// DecodedLen returns the length in bytes that a stored block of
// compression type typ claims to decode to, without decoding it: len(stored)
// for raw blocks, the length varint of a snappy block
// (snappy.DecodedLen) or of a MinLZ block (after its 0 byte; for a
// literal-only MinLZ block, the literals' length), and the frame content
// size of a zstd frame, with or without a dictionary (RFC 8878 section
// 3.1.1.1.4). A zstd frame without a content size, or one
// claiming more than 2^31-1 bytes, is an error. Callers use it to size
// a buffer for DecodeBlock; the claim is only a claim, and DecodeBlock
// checks it against its bound again. Errors wrap ErrCorrupt.
func DecodedLen(stored []byte, typ byte) (int, error) {
	switch typ {
	case format.BlockTypeRaw:
		return len(stored), nil
	case format.BlockTypeSnappy:
		n, err := snappyDecodedLen(stored)
		if err != nil {
			return 0, fmt.Errorf("%w: bad snappy header (%v)", format.ErrCorrupt, err)
		}
		return n, nil
	case format.BlockTypeZstd, format.BlockTypeZstdDict:
		n, err := zstdDecodedLen(stored)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", format.ErrCorrupt, err)
		}
		return n, nil
	case format.BlockTypeMinLZ:
		n, err := minlzDecodedLen(stored)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", format.ErrCorrupt, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: unknown block compression type %d", format.ErrCorrupt, typ)
}

// decodeZstd decodes the zstd block stored, which claims n decoded bytes
// (n already bounded by the caller), into dst's capacity, or a new buffer
// of exactly n bytes when dst is smaller.
func decodeZstd(section string, off int64, stored []byte, n int, dst []byte) ([]byte, error) {
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	out, err := zstdDec().DecodeAll(stored, dst[:0])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, format.Corruptf(section, off, "zstd block decodes to more than the %d bytes its header claims", n)
		}
		return nil, format.Corruptf(section, off, "bad zstd data (%v)", err)
	}
	if len(out) != n {
		return nil, format.Corruptf(section, off, "zstd block decodes to %d bytes, its header claims %d", len(out), n)
	}
	return out, nil
}
