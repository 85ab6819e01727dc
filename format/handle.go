package format

import "encoding/binary"

// BlockHandle locates a stored block in a table file: Offset is the byte
// offset of its first stored byte and Length the number of stored bytes,
// excluding the BlockTrailerLen-byte trailer that follows them.
type BlockHandle struct {
	Offset uint64 // bytes from the start of the file
	Length uint64 // stored bytes, trailer excluded
}

// MaxHandleLen is the longest uvarint encoding of a BlockHandle: 2 × 10 bytes.
const MaxHandleLen = 2 * binary.MaxVarintLen64

// End returns the offset just past the handle's trailer: Offset+Length+BlockTrailerLen.
func (h BlockHandle) End() uint64 { return h.Offset + h.Length + BlockTrailerLen }

// AppendHandle appends h to dst as two uvarints (offset, length) and
// returns the extended slice.
func AppendHandle(dst []byte, h BlockHandle) []byte {
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// DecodeHandle decodes a handle written by AppendHandle from the start of
// src. It returns the handle and the number of bytes read, or n <= 0 when
// src does not start with two well-formed uvarints.
func DecodeHandle(src []byte) (h BlockHandle, n int) {
	off, n1 := binary.Uvarint(src)
	if n1 <= 0 {
		return BlockHandle{}, 0
	}
	length, n2 := binary.Uvarint(src[n1:])
	if n2 <= 0 {
		return BlockHandle{}, 0
	}
	return BlockHandle{Offset: off, Length: length}, n1 + n2
}
