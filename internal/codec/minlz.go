package codec

import (
	"fmt"

	"github.com/minio/minlz"
	"github.com/sstkit/sstable/format"
)

// The MinLZ codec is github.com/minio/minlz's block format (its
// SPEC.md, "Block format"): a 0 byte, the decoded length as a uvarint
// (at most minlz.MaxBlockSize, 8 MiB), then literals and copies; a
// decoded length of 0 means the rest of the block is literals. A block
// whose first byte is not 0 is snappy or S2 to minlz's decoder, which
// decodes those too; this package refuses them as type 3 blocks, so that
// a type 3 block is MinLZ and nothing else.

// minlzLevel maps a CompressionLevel to a minlz encoder level:
// LevelDefault and LevelFastest to minlz.LevelFastest (what Pebble
// uses by default), LevelBetter to minlz.LevelBalanced and LevelBest to
// minlz.LevelSmallest.
func minlzLevel(l format.CompressionLevel) int {
	switch l {
	case format.LevelBetter:
		return minlz.LevelBalanced
	case format.LevelBest:
		return minlz.LevelSmallest
	}
	return minlz.LevelFastest
}

// AppendMinLZ appends the MinLZ block encoding of src at level l (see
// minlzLevel) to dst and returns the extended slice, or dst unchanged
// and false when src is over minlz.MaxBlockSize (8 MiB), which MinLZ
// cannot encode as one block. It allocates nothing when dst has room for
// minlz.MaxEncodedLen(len(src)) more bytes.
func AppendMinLZ(dst, src []byte, l format.CompressionLevel) ([]byte, bool) {
	out, err := minlz.AppendEncoded(dst, src, minlzLevel(l))
	if err != nil {
		return dst, false
	}
	return out, true
}

// minlzDecodedLen returns the decoded length a MinLZ block claims. Its
// errors say what is wrong and do not wrap ErrCorrupt.
func minlzDecodedLen(stored []byte) (int, error) {
	if len(stored) == 0 || stored[0] != 0 {
		return 0, fmt.Errorf("not a MinLZ block (first byte not 0)")
	}
	ok, n, err := minlz.IsMinLZ(stored)
	if err != nil {
		return 0, fmt.Errorf("bad MinLZ header (%v)", err)
	}
	if !ok {
		return 0, fmt.Errorf("not a MinLZ block")
	}
	return n, nil
}

// decodeMinLZ decodes the MinLZ block stored, which claims n decoded
// bytes (n already bounded by the caller), into dst's capacity, or a new
// buffer of exactly n bytes when dst is smaller.
func decodeMinLZ(section string, off int64, stored []byte, n int, dst []byte) ([]byte, error) {
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	out, err := minlz.Decode(dst[:cap(dst)], stored)
	if err != nil {
		return nil, format.Corruptf(section, off, "bad MinLZ data (%v)", err)
	}
	if len(out) != n || (n > 0 && &out[0] != &dst[:n][0]) {
		return nil, format.Corruptf(section, off, "MinLZ block decodes to %d bytes, its header claims %d", len(out), n)
	}
	return out, nil
}
