package builder

import "github.com/sstkit/sstable/internal/codec"

// addIndexEntry adds the index entry of the data block last flushed
// (b.pendingHandle) under sep, and cuts a partition once the partition
// reaches b.partSize.
func (b *Builder) addIndexEntry(sep []byte) {
	b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
	b.index.Add(sep, b.handleBuf)
	b.pendingIndex = false
	if b.partitionable {
		// An index entry costs its key, its handle, a 3-byte header at
		// most for short keys, and its 4-byte restart.
		b.partBytes += len(sep) + len(b.handleBuf) + 3 + 4
		if b.partBytes+b.filterBytes(b.hashes.len()-b.cutHash()) >= b.partSize {
			b.cut()
		}
	}
}
