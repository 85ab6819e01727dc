package builder

import (
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// addIndexEntry adds the index entry of the data block last flushed
// (b.pendingHandle) under sep, and cuts a partition once the partition
// reaches b.partSize.
func (b *Builder) addIndexEntry(sep []byte) {
	b.pendingIndex = false
	if b.training() {
		// The block waits for the dictionary: keep its separator for
		// when it is written, and count its entry in the partition with
		// the handle it would have uncompressed (at least as long).
		q := &b.dictQueue[len(b.dictQueue)-1]
		q.sep, q.hasSep = append([]byte(nil), sep...), true
		b.handleBuf = codec.AppendHandle(b.handleBuf[:0], format.BlockHandle{Offset: b.offset + uint64(b.dictQueued), Length: uint64(len(q.contents))})
		b.countIndexEntry(sep, uint64(b.hashes.len()), b.lastKey, b.props.NumDataBlocks)
		return
	}
	if b.blocksWritten < b.props.NumDataBlocks {
		b.deferEntry(sep) // the block is being compressed (pipeline.go)
		return
	}
	b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
	b.index.Add(sep, b.handleBuf)
	b.countIndexEntry(sep, uint64(b.hashes.len()), b.lastKey, b.props.NumDataBlocks)
}

// countIndexEntry counts an index entry of key sep and handle
// b.handleBuf in the partition, and cuts a partition once it reaches
// b.partSize. The entry was given (by the key after the block's, or
// Finish) when b.hashes held hashLen hashes and the block, number
// endBlock-1, was the last flushed, ending in key last.
func (b *Builder) countIndexEntry(sep []byte, hashLen uint64, last []byte, endBlock uint64) {
	if b.partitionable {
		// An index entry costs its key, its handle, a 3-byte header at
		// most for short keys, and its 4-byte restart.
		b.partBytes += len(sep) + len(b.handleBuf) + 3 + 4
		if b.partBytes+b.filterBytes(int(hashLen)-b.cutHash()) >= b.partSize {
			b.cut(last, endBlock, hashLen)
		}
	}
}
