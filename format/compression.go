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
)

// String returns "default", "none", "snappy" or "Compression(N)".
func (c Compression) String() string {
	switch c {
	case DefaultCompression:
		return "default"
	case NoCompression:
		return "none"
	case SnappyCompression:
		return "snappy"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// Block compression types: the first byte of every block trailer.
const (
	BlockTypeRaw    byte = 0 // stored bytes are the block contents
	BlockTypeSnappy byte = 1 // stored bytes are a snappy block-format encoding
)
