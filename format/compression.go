package format

import "fmt"

// Compression selects how a builder compresses data blocks. The zero value,
// DefaultCompression, means snappy.
type Compression int

const (
	// DefaultCompression is the zero value; builders treat it as SnappyCompression.
	DefaultCompression Compression = iota
	// NoCompression stores every block raw.
	NoCompression
	// SnappyCompression compresses blocks with snappy
	// (github.com/golang/snappy, block format) and falls back to raw storage
	// when compression saves less than 12.5% of a block.
	SnappyCompression
	// ZstdCompression compresses blocks with Zstandard (RFC 8878, one
	// frame per block, encoded by github.com/klauspost/compress/zstd) and
	// falls back to raw storage when compression saves less than 12.5% of
	// a block. It gives smaller tables than snappy at a higher decode cost.
	// With builder.Options.DictionarySize, blocks are encoded with a
	// dictionary trained from the table's first data blocks and stored in
	// its properties (tag 28, block type BlockTypeZstdDict).
	ZstdCompression
	// MinLZCompression compresses blocks with MinLZ (the block format of
	// github.com/minio/minlz, specification v1.0) and falls back to raw
	// storage when compression saves less than 12.5% of a block. It is
	// snappy's successor in Pebble: smaller blocks than snappy's, decoded
	// at least as fast.
	MinLZCompression
)

// String returns "default", "none", "snappy", "zstd", "minlz" or
// "Compression(N)".
func (c Compression) String() string {
	switch c {
	case DefaultCompression:
		return "default"
	case NoCompression:
		return "none"
	case SnappyCompression:
		return "snappy"
	case ZstdCompression:
		return "zstd"
	case MinLZCompression:
		return "minlz"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// CompressionLevel selects the zstd encoder's speed/ratio trade-off. The
// levels are those github.com/klauspost/compress/zstd offers (its
// EncoderLevel: SpeedFastest, SpeedDefault, SpeedBetterCompression,
// SpeedBestCompression), which it likens to the reference zstd's levels 1,
// 3, 7 and 11. The level changes only how blocks are encoded, never how
// they are decoded, so it is not stored in the table. The zero value is
// LevelDefault.
type CompressionLevel int

const (
	// LevelDefault is klauspost's SpeedDefault (about zstd level 3).
	LevelDefault CompressionLevel = iota
	// LevelFastest is klauspost's SpeedFastest (about zstd level 1).
	LevelFastest
	// LevelBetter is klauspost's SpeedBetterCompression (about zstd level 7).
	LevelBetter
	// LevelBest is klauspost's SpeedBestCompression (about zstd level 11).
	LevelBest
)

// String returns "default", "fastest", "better", "best" or
// "CompressionLevel(N)".
func (l CompressionLevel) String() string {
	switch l {
	case LevelDefault:
		return "default"
	case LevelFastest:
		return "fastest"
	case LevelBetter:
		return "better"
	case LevelBest:
		return "best"
	}
	return fmt.Sprintf("CompressionLevel(%d)", int(l))
}

// ParseCompressionLevel returns the level named s ("fastest", "default",
// "better" or "best").
func ParseCompressionLevel(s string) (CompressionLevel, error) {
	for l := LevelDefault; l <= LevelBest; l++ {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("sstable: unknown compression level %q (want fastest, default, better or best)", s)
}
