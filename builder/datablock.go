package builder

import (
	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// flushDataBlock writes the pending data block and leaves its index
// entry pending until the next key (or Finish) gives its separator.
func (b *Builder) flushDataBlock() {
	contents := b.data.Finish()
	b.rawData += uint64(len(contents))
	b.props.MaxBlockSize = max(b.props.MaxBlockSize, uint64(len(contents)))
	var typ byte
	b.pendingHandle, typ = b.writeBlockType(contents, b.compress)
	b.anyCompressed = b.anyCompressed || typ != format.BlockTypeRaw
	if b.hashIndex {
		b.blockOffsets = append(b.blockOffsets, b.pendingHandle.Offset)
		b.decodedStart = append(b.decodedStart, b.decodedTotal)
		b.decodedTotal += uint64(len(contents))
	}
	b.pendingIndex = true
	b.props.NumDataBlocks++
	b.data.Reset()
}

// writeBlock writes contents, compressed with c when compression saves at
// least 12.5%, followed by the block trailer.
func (b *Builder) writeBlock(contents []byte, c format.Compression) format.BlockHandle {
	h, _ := b.writeBlockType(contents, c)
	return h
}

// withinExpansion reports whether a block of decoded bytes stored in
// stored bytes stays within the ratio readers assume of a data block
// (snappy's worst case, 22·stored + 16 bytes; format
// package documentation, Block trailer).
func withinExpansion(decoded, stored int) bool { return decoded <= 22*stored+16 }

// writeBlockType is writeBlock, also returning the block type written.
func (b *Builder) writeBlockType(contents []byte, c format.Compression) (format.BlockHandle, byte) {
	stored, typ := contents, format.BlockTypeRaw
	if c == format.ZstdCompression {
		b.compressBuf = codec.AppendZstd(b.compressBuf[:0], contents, b.level)
		typ = format.BlockTypeZstd
		if !withinExpansion(len(contents), len(b.compressBuf)) {
			c = format.SnappyCompression // too repetitive for readers' bound; see format's docs
		}
	}
	if c == format.SnappyCompression {
		b.compressBuf = snappy.Encode(b.compressBuf[:cap(b.compressBuf)], contents)
		typ = format.BlockTypeSnappy
	}
	if c != format.NoCompression && len(b.compressBuf) < len(contents)-len(contents)/8 {
		stored = b.compressBuf
	} else {
		typ = format.BlockTypeRaw
	}
	h := format.BlockHandle{Offset: b.offset, Length: uint64(len(stored))}
	var trailer [format.BlockTrailerLen]byte
	b.write(stored)
	b.write(codec.AppendTrailer(trailer[:0], stored, typ))
	return h, typ
}
