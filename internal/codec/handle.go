package codec

import (
	"encoding/binary"

	"github.com/sstkit/sstable/format"
)

// MaxHandleLen is the longest uvarint encoding of a BlockHandle: 2 × 10 bytes.
const MaxHandleLen = 2 * binary.MaxVarintLen64

// AppendHandle appends h to dst as two uvarints (offset, length) and
// returns the extended slice.
func AppendHandle(dst []byte, h format.BlockHandle) []byte {
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// DecodeHandle decodes a handle written by AppendHandle from the start of
// src. It returns the handle and the number of bytes read, or n <= 0 when
// src does not start with two well-formed uvarints.
func DecodeHandle(src []byte) (h format.BlockHandle, n int) {
	off, n1 := binary.Uvarint(src)
	if n1 <= 0 {
		return format.BlockHandle{}, 0
	}
	length, n2 := binary.Uvarint(src[n1:])
	if n2 <= 0 {
		return format.BlockHandle{}, 0
	}
	return format.BlockHandle{Offset: off, Length: length}, n1 + n2
}
