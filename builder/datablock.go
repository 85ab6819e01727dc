package builder

import (
	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// queuedBlock is a data block waiting for the dictionary: its decoded
// contents and, once the next key gave it, its index separator.
type queuedBlock struct {
	contents []byte
	sep      []byte
	hasSep   bool
}

// training reports whether data blocks wait for the dictionary.
func (b *Builder) training() bool { return b.dictTrain > 0 }

// flushDataBlock writes the pending data block (or, while the dictionary
// is not trained, queues it) and leaves its index entry pending until the
// next key (or Finish) gives its separator.
func (b *Builder) flushDataBlock() {
	contents := b.data.Finish()
	b.props.MaxBlockSize = max(b.props.MaxBlockSize, uint64(len(contents)))
	b.pendingIndex = true
	b.props.NumDataBlocks++
	if b.training() {
		b.dictQueue = append(b.dictQueue, queuedBlock{contents: append([]byte(nil), contents...)})
		b.dictQueued += len(contents)
		b.data.Reset()
		if b.dictQueued >= b.dictTrain {
			b.trainDict()
		}
		return
	}
	if b.pipelining() && b.rawData >= uint64(b.batchBytes) {
		// Past the first batchBytes, written here, whose ratio
		// EstimatedSize applies to the blocks in flight: a caller
		// cutting tables at a size (bulk's -split) must not see them
		// counted uncompressed.
		b.queueDataBlock(contents)
	} else {
		b.writeDataBlock(contents)
	}
	b.data.Reset()
}

// writeDataBlock writes a data block's contents, setting pendingHandle.
func (b *Builder) writeDataBlock(contents []byte) {
	h, typ := b.writeBlockType(contents, b.compress)
	b.wroteDataBlock(h, typ, len(contents))
}

// wroteDataBlock records the data block of decoded length n just written
// at h with type typ (setting pendingHandle).
func (b *Builder) wroteDataBlock(h format.BlockHandle, typ byte, n int) {
	b.pendingHandle = h
	b.blocksWritten++
	b.rawData += uint64(n)
	b.anyCompressed = b.anyCompressed || typ != format.BlockTypeRaw
	if b.hashIndex {
		b.blockOffsets = append(b.blockOffsets, h.Offset)
		b.decodedStart = append(b.decodedStart, b.decodedTotal)
		b.decodedTotal += uint64(n)
	}
}

// trainDict trains the dictionary from the queued blocks, then writes
// them, each with its index entry if the next key has given it (the last
// one's stays pending, as after flushDataBlock). The dictionary is kept
// only if it pays for itself: encoded with it, the queued blocks plus
// the dictionary must take fewer bytes than the blocks encoded without
// one. Without a dictionary (none pays, the samples give none, or its
// encoder cannot be made), the blocks are written as plain zstd blocks
// and so are all later ones.
func (b *Builder) trainDict() {
	samples := make([][]byte, len(b.dictQueue))
	for i := range b.dictQueue {
		samples[i] = b.dictQueue[i].contents
	}
	if d, err := codec.TrainZstdDict(samples, b.dictSize, b.level); err == nil {
		if enc, err := codec.NewZstdDictEncoder(d, b.level); err == nil {
			with, without := len(d), 0
			for _, s := range samples {
				if len(s) > maxDictBlock {
					continue // encoded without the dictionary either way
				}
				b.compressBuf = enc.Append(b.compressBuf[:0], s)
				with += storedLen(len(s), len(b.compressBuf))
				b.compressBuf = codec.AppendZstd(b.compressBuf[:0], s, b.level)
				without += storedLen(len(s), len(b.compressBuf))
			}
			if dictPays(with, without) {
				b.dictEnc = enc
				b.props.Dictionary = d
			} else {
				enc.Close()
			}
		}
	}
	queue := b.dictQueue
	b.dictQueue, b.dictTrain, b.dictQueued = nil, 0, 0
	for i := range queue {
		q := &queue[i]
		b.writeDataBlock(q.contents)
		if q.hasSep {
			b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
			b.index.Add(q.sep, b.handleBuf)
		}
		queue[i] = queuedBlock{}
	}
}

// dictPays reports whether a dictionary pays for itself: with is the
// bytes the sampled blocks take stored with it plus the dictionary's,
// without the bytes they take stored without it. A tie does not pay: the
// dictionary would cost its decoders for nothing.
func dictPays(with, without int) bool { return with < without }

// storedLen is the length a block of n bytes is stored in when it
// compresses to c bytes: c if that saves at least 12.5%, else n.
func storedLen(n, c int) int {
	if c < n-n/8 {
		return c
	}
	return n
}

// maxDictBlock is the largest block the builder encodes with a
// dictionary, in bytes; larger ones (a block of one large value) are
// plain zstd frames. A block this large has history enough of its own,
// and klauspost/compress v1.20.3 decodes large frames with a dictionary
// 2.5-3.5 times slower than without one (a 131 KB Go source file: 250-350
// us against 100 us; 4 KiB blocks: about the same time).
const maxDictBlock = 32 << 10

// writeBlock writes contents, compressed with c when compression saves at
// least 12.5%, followed by the block trailer.
func (b *Builder) writeBlock(contents []byte, c format.Compression) format.BlockHandle {
	h, _ := b.writeBlockType(contents, c)
	return h
}

// withinExpansion reports whether a block of decoded bytes stored in
// stored bytes stays within the ratio readers assume of a data block
// (snappy's worst case, 22·stored + 16 bytes; the doc of
// format.BlockTypeRaw, "Block trailer").
func withinExpansion(decoded, stored int) bool { return decoded <= 22*stored+16 }

// writeBlockType is writeBlock, also returning the block type written.
// A zstd or MinLZ encoding that would decode to more than readers'
// expansion bound (withinExpansion) is replaced by snappy's.
func (b *Builder) writeBlockType(contents []byte, c format.Compression) (format.BlockHandle, byte) {
	var stored []byte
	var typ byte
	stored, b.compressBuf, typ = storedForm(contents, b.compressBuf, c, b.level, b.dictEnc)
	h := format.BlockHandle{Offset: b.offset, Length: uint64(len(stored))}
	var trailer [format.BlockTrailerLen]byte
	b.write(stored)
	b.write(codec.AppendTrailer(trailer[:0], stored, typ))
	return h, typ
}

// storedForm returns how a block of contents is stored under compression
// c (at level, with dict for zstd if not nil): compressed, into scratch
// (returned for reuse), when that saves at least 12.5%, else contents
// itself, raw; and the block type.
func storedForm(contents, scratch []byte, c format.Compression, level format.CompressionLevel, dict *codec.ZstdDictEncoder) (stored, scratchOut []byte, typ byte) {
	switch c {
	case format.ZstdCompression:
		if dict != nil && len(contents) <= maxDictBlock {
			scratch = dict.Append(scratch[:0], contents)
			typ = format.BlockTypeZstdDict
		} else {
			scratch = codec.AppendZstd(scratch[:0], contents, level)
			typ = format.BlockTypeZstd
		}
		if !withinExpansion(len(contents), len(scratch)) {
			c = format.SnappyCompression // too repetitive for readers' bound; see format's docs
		}
	case format.MinLZCompression:
		var ok bool
		scratch, ok = codec.AppendMinLZ(scratch[:0], contents, level)
		typ = format.BlockTypeMinLZ
		if !ok || !withinExpansion(len(contents), len(scratch)) {
			c = format.SnappyCompression // over 8 MiB, or too repetitive for readers' bound
		}
	}
	if c == format.SnappyCompression {
		scratch = snappy.Encode(scratch[:cap(scratch)], contents)
		typ = format.BlockTypeSnappy
	}
	if c != format.NoCompression && len(scratch) < len(contents)-len(contents)/8 {
		return scratch, scratch, typ
	}
	return contents, scratch, format.BlockTypeRaw
}
