package builder

import (
	"math/bits"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// EstimatedSize returns the size in bytes the table would have if Finish
// were called now: the bytes written so far, plus estimates of the
// pending data block (compressed at the ratio seen so far; blocks
// waiting for a dictionary, Options.DictionarySize, count uncompressed
// until it is trained), the hash
// index, the filter, the index block, the properties and the footer.
// For tables over 1 MiB it is within 5% of the final size; after a
// successful Finish it is the exact file size. Like file sizes in
// packages io and os (os.FileInfo.Size, reader.New's size), it is an
// int64. It allocates nothing.
func (b *Builder) EstimatedSize() int64 {
	if b.done {
		return int64(b.offset)
	}
	est := b.offset + uint64(b.dictQueued) + format.BlockTrailerLen*uint64(len(b.dictQueue)) // queued blocks counted uncompressed
	// The pending block and those being compressed (pipeline.go) count
	// compressed at the ratio seen so far.
	pending, pendingBlocks := uint64(0), uint64(0)
	if b.data.Entries() > 0 {
		pending, pendingBlocks = uint64(b.data.EstimatedSize()), 1
	}
	if bt := b.filling; bt != nil {
		pending += uint64(len(bt.raw))
		pendingBlocks += uint64(len(bt.rawEnds))
	}
	for _, bt := range b.inFlight {
		pending += uint64(len(bt.raw))
		pendingBlocks += uint64(len(bt.rawEnds))
	}
	if pendingBlocks > 0 {
		if b.rawData > 0 && b.compress != format.NoCompression {
			// Only data blocks are written before Finish.
			stored := b.offset - format.BlockTrailerLen*b.blocksWritten
			pending = pending * stored / b.rawData
		}
		est += pending + format.BlockTrailerLen*pendingBlocks
	}
	blocks := b.props.NumDataBlocks
	if b.data.Entries() > 0 {
		blocks++
	}
	// Filter: bits per key (10 when the policy does not say, none with
	// NoFilter), lines of 64 bytes, the k byte, name, padding and trailer.
	bpk := b.props.FilterBitsPerKey
	switch {
	case b.props.FilterPolicy == "":
		bpk = 0
	case bpk <= 0:
		bpk = DefaultBitsPerKey
	}
	est += (uint64(float64(b.filterKeys)*bpk)+511)/512*64 + 1 + uint64(len(b.props.FilterPolicy)) + 2 + 32 + format.BlockTrailerLen
	switch {
	case b.v4:
		// 4-byte slots up to about 2M entries; the whole filter again
		// when the table will be partitioned.
		slots := codec.CompactHashIndexSlots(b.hidx.Len())
		width := uint64(4)
		if need := (uint64(bitsLen(blocks)) + uint64(bitsLen(uint64(b.blockSize))) + 5 + 7) / 8; need > width {
			width = min(need, 8)
		}
		est += codec.HashIndexHeaderLen + 64 + slots*width + 8*(blocks+1) + format.BlockTrailerLen
		if b.partitionable && uint64(b.index.EstimatedSize())+(uint64(float64(b.filterKeys)*bpk)+511)/512*64 > uint64(b.partThreshold) {
			est += (uint64(float64(b.filterKeys)*bpk) + 511) / 512 * 64
		}
	case b.hashIndex:
		slots := codec.HashIndexSlots(b.hidx.Len())
		width := uint64(4)
		if need := (uint64(bitsLen(blocks)) + uint64(bitsLen(b.offset+b.rawData)) + 8 + 7) / 8; need > width {
			width = min(need, 8)
		}
		tables := 8 * (blocks + 1)
		if b.compress != format.NoCompression {
			tables *= 2
		}
		est += codec.HashIndexHeaderLen + 32 + slots*width + tables + format.BlockTrailerLen
	}
	// Index: the entries so far, one more per pending block, each about
	// the last key's length plus a handle.
	est += uint64(b.index.EstimatedSize()) + (blocks-b.props.NumDataBlocks+boolInt(b.pendingIndex))*uint64(len(b.lastKey)+12) + format.BlockTrailerLen
	// Properties: about 40 bytes of integers, the keys, names and user
	// properties; then the footer.
	est += 64 + propsKeyLen(b.props.SmallestKey) + propsKeyLen(b.lastKey) + uint64(len(b.props.FilterPolicy)+len(b.props.Splitter)+b.userSize) + format.BlockTrailerLen
	est += footer.Size
	return int64(est)
}

func bitsLen(v uint64) int { return bits.Len64(v) }

// propsKeyLen returns the bytes the properties block spends on key: the
// key, or its length's uvarint when it is too long to be stored there.
func propsKeyLen(key []byte) uint64 {
	if len(key) > format.MaxPropertiesKeyLen {
		return 4
	}
	return uint64(len(key))
}

func boolInt(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
