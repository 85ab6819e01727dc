package codec

import (
	"encoding/binary"

	"github.com/sstkit/sstable/format"
)

// PartitionHandle is the value of a top-level index entry of a Version3
// table: where one partition lies and which data blocks its index
// partition covers. A partition is its filter partition, a trailer, its
// index partition and a trailer, in that order, with no gap, so one read
// of Len bytes at Offset fetches both.
type PartitionHandle struct {
	Offset     uint64 // file offset of the filter partition
	FilterLen  uint64 // stored bytes of the filter partition, trailer excluded
	IndexLen   uint64 // stored bytes of the index partition, trailer excluded
	FirstBlock uint64 // number of the first data block the index partition covers
}

// Filter returns the handle of the filter partition.
func (p PartitionHandle) Filter() format.BlockHandle {
	return format.BlockHandle{Offset: p.Offset, Length: p.FilterLen}
}

// Index returns the handle of the index partition.
func (p PartitionHandle) Index() format.BlockHandle {
	return format.BlockHandle{Offset: p.Offset + p.FilterLen + format.BlockTrailerLen, Length: p.IndexLen}
}

// Len returns the partition's size in bytes, both trailers included.
func (p PartitionHandle) Len() uint64 { return p.FilterLen + p.IndexLen + 2*format.BlockTrailerLen }

// End returns the offset just past the partition.
func (p PartitionHandle) End() uint64 { return p.Offset + p.Len() }

// AppendPartitionHandle appends p to dst as four uvarints (offset, filter
// length, index length, first block) and returns the extended slice.
func AppendPartitionHandle(dst []byte, p PartitionHandle) []byte {
	dst = binary.AppendUvarint(dst, p.Offset)
	dst = binary.AppendUvarint(dst, p.FilterLen)
	dst = binary.AppendUvarint(dst, p.IndexLen)
	return binary.AppendUvarint(dst, p.FirstBlock)
}

// DecodePartitionHandle decodes a PartitionHandle written by
// AppendPartitionHandle, which must fill src exactly; ok is false
// otherwise, or when a length would overflow the partition's end.
func DecodePartitionHandle(src []byte) (p PartitionHandle, ok bool) {
	var v [4]uint64
	for i := range v {
		x, n := binary.Uvarint(src)
		if n <= 0 {
			return PartitionHandle{}, false
		}
		v[i], src = x, src[n:]
	}
	p = PartitionHandle{Offset: v[0], FilterLen: v[1], IndexLen: v[2], FirstBlock: v[3]}
	const lim = 1 << 62
	if len(src) != 0 || p.Offset >= lim || p.FilterLen >= lim || p.IndexLen >= lim {
		return PartitionHandle{}, false
	}
	return p, true
}
