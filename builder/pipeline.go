package builder

import (
	"runtime"
	"sync"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Compressing data blocks takes a third of a build's time (snappy, 1M
// entries of 16-byte keys and 100-byte values). With a second core, the
// builder hands the compression to another goroutine, a batch of about
// batchBytes of blocks at a time, and goes on building the next batches
// meanwhile; up to maxInFlight are handed over before it waits to write
// the oldest. Each block's index entry waits for its handle, with what
// the partition cut it may make needs of the moment it was given (the
// hash count and the last key), so that the table is byte for byte the
// one a serial build writes.
//
// On a 2-core VM, handing over each block made builds slower (422
// against 486 MB/s), and so did batches of 64 KiB one at a time (455
// against 570): a goroutine woken from sleep waits tens of microseconds
// for its core to be woken too, as long as a batch takes to compress.
// With four batches in flight, neither goroutine waits on the other's
// wake-ups: 580 to 745 MB/s against 523 to 588 in several sets of
// alternated runs, the same as when both spin rather than sleep, which
// cost 45% more CPU in "sst build".

// batchBytes is the decoded size from which a batch of data blocks is
// handed to a goroutine to compress: 16 blocks of 4 KiB. The first
// batchBytes of a table are compressed in Add, so that EstimatedSize
// knows the compression ratio before any block is in flight.
const batchBytes = 64 << 10

// dataBatch is a run of consecutive data blocks compressed together.
type dataBatch struct {
	first   uint64        // number of the batch's first data block
	raw     []byte        // the blocks' contents, concatenated
	rawEnds []int         // end of each block's contents in raw
	out     []byte        // each block's stored bytes and trailer, concatenated (compress)
	outEnds []int         // end of each block's trailer in out
	stored  []int         // length of each block's stored bytes
	types   []byte        // each block's type
	scratch []byte        // the compressor's output
	done    chan struct{} // 1 slot: signalled once compressed
}

// deferredEntry is the index entry of a data block still being
// compressed, with what countIndexEntry needs of the moment Add gave its
// separator.
type deferredEntry struct {
	block   uint64 // the data block's number
	hashLen uint64 // b.hashes.len() then
	sepEnd  int    // end of the separator in b.deferredKeys
	lastEnd int    // end of the block's last key, which follows it
}

// pipelining reports whether data blocks go to compression batches.
func (b *Builder) pipelining() bool { return b.batchBytes > 0 }

// queueDataBlock adds a data block's contents to the batch being filled,
// and hands the batch over once it holds batchBytes.
func (b *Builder) queueDataBlock(contents []byte) {
	bt := b.filling
	if bt == nil {
		if n := len(b.spare); n > 0 {
			bt = b.spare[n-1]
			b.spare = b.spare[:n-1]
		} else {
			bt = &dataBatch{}
		}
		bt.first = b.props.NumDataBlocks - 1
		bt.raw, bt.rawEnds = bt.raw[:0], bt.rawEnds[:0]
		b.filling = bt
	}
	bt.raw = append(bt.raw, contents...)
	bt.rawEnds = append(bt.rawEnds, len(bt.raw))
	if len(bt.raw) >= b.batchBytes {
		b.sendBatch()
	}
}

// maxInFlight is the number of batches handed over and not yet written
// from which sendBatch waits for the oldest: enough that the two
// goroutines, each with about half the work, rarely wait for each other.
const maxInFlight = 4

// sendBatch hands the batch being filled to the compressing goroutine,
// having written the oldest one handed over if maxInFlight are.
func (b *Builder) sendBatch() {
	if len(b.inFlight) == maxInFlight {
		b.retire()
	}
	bt := b.filling
	b.filling = nil
	b.inFlight = append(b.inFlight, bt)
	if b.comp == nil {
		b.comp = startCompressor(b.compress, b.level)
		runtime.AddCleanup(b, (*compressor).stop, b.comp) // an abandoned builder
	}
	b.comp.hand(bt)
}

// compressor is the goroutine that compresses a builder's batches, in
// the order handed over.
type compressor struct {
	c        format.Compression
	level    format.CompressionLevel
	batches  chan *dataBatch // maxInFlight slots
	stopOnce sync.Once
}

func startCompressor(c format.Compression, level format.CompressionLevel) *compressor {
	cp := &compressor{c: c, level: level, batches: make(chan *dataBatch, maxInFlight)}
	go cp.run()
	return cp
}

// hand gives bt to the compressor.
func (cp *compressor) hand(bt *dataBatch) {
	if bt.done == nil {
		bt.done = make(chan struct{}, 1)
	}
	cp.batches <- bt
}

// stop ends the compressor once it has compressed the batches handed
// over. The builder hands over no more.
func (cp *compressor) stop() { cp.stopOnce.Do(func() { close(cp.batches) }) }

func (cp *compressor) run() {
	for bt := range cp.batches {
		bt.compress(cp.c, cp.level)
		bt.done <- struct{}{}
	}
}

// compress encodes each block of the batch as writeBlockType would.
func (bt *dataBatch) compress(c format.Compression, level format.CompressionLevel) {
	bt.out, bt.outEnds, bt.stored, bt.types = bt.out[:0], bt.outEnds[:0], bt.stored[:0], bt.types[:0]
	start := 0
	for _, end := range bt.rawEnds {
		var stored []byte
		var typ byte
		stored, bt.scratch, typ = storedForm(bt.raw[start:end], bt.scratch, c, level, nil)
		bt.out = append(bt.out, stored...)
		bt.out = codec.AppendTrailer(bt.out, stored, typ)
		bt.outEnds = append(bt.outEnds, len(bt.out))
		bt.stored = append(bt.stored, len(stored))
		bt.types = append(bt.types, typ)
		start = end
	}
}

// retire waits for the oldest batch in flight and writes its blocks,
// adding the index entries that waited for their handles.
func (b *Builder) retire() {
	bt := b.inFlight[0]
	b.inFlight = append(b.inFlight[:0], b.inFlight[1:]...)
	<-bt.done
	base := b.offset
	b.write(bt.out)
	rawStart, outStart := 0, 0
	for j, rawEnd := range bt.rawEnds {
		h := format.BlockHandle{Offset: base + uint64(outStart), Length: uint64(bt.stored[j])}
		b.wroteDataBlock(h, bt.types[j], rawEnd-rawStart)
		if b.deferredHead < len(b.deferred) && b.deferred[b.deferredHead].block == bt.first+uint64(j) {
			b.addDeferredEntry()
		}
		rawStart, outStart = rawEnd, bt.outEnds[j]
	}
	b.spare = append(b.spare, bt)
}

// drainBatches writes every data block queued for compression.
func (b *Builder) drainBatches() {
	if b.filling != nil {
		b.sendBatch()
	}
	for len(b.inFlight) > 0 {
		b.retire()
	}
}

// deferEntry keeps the index entry of separator sep for the last data
// block flushed, which is still being compressed.
func (b *Builder) deferEntry(sep []byte) {
	if b.deferredHead > 0 && b.deferredHead >= len(b.deferred)/2 {
		// Drop the entries added, so that the queue stays as long as
		// the blocks in flight.
		n := copy(b.deferred, b.deferred[b.deferredHead:])
		b.deferred = b.deferred[:n]
		for i := range b.deferred {
			b.deferred[i].sepEnd -= b.deferredStart
			b.deferred[i].lastEnd -= b.deferredStart
		}
		b.deferredKeys = b.deferredKeys[:copy(b.deferredKeys, b.deferredKeys[b.deferredStart:])]
		b.deferredHead, b.deferredStart = 0, 0
	}
	b.deferredKeys = append(b.deferredKeys, sep...)
	e := deferredEntry{block: b.props.NumDataBlocks - 1, hashLen: uint64(b.hashes.len()), sepEnd: len(b.deferredKeys)}
	b.deferredKeys = append(b.deferredKeys, b.lastKey...)
	e.lastEnd = len(b.deferredKeys)
	b.deferred = append(b.deferred, e)
}

// addDeferredEntry adds the first deferred index entry, its block now
// written at b.pendingHandle.
func (b *Builder) addDeferredEntry() {
	e := b.deferred[b.deferredHead]
	b.deferredHead++
	sep, last := b.deferredKeys[b.deferredStart:e.sepEnd], b.deferredKeys[e.sepEnd:e.lastEnd]
	b.deferredStart = e.lastEnd
	b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
	b.index.Add(sep, b.handleBuf)
	b.countIndexEntry(sep, e.hashLen, last, e.block+1)
}
