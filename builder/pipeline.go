package builder

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// pipelineDepth is the most data blocks cut and not yet written: enough
// to keep the pipeline's goroutine busy through a slow write, and a
// bound on the memory (each keeps a block and its compressed copy).
const pipelineDepth = 16

// pipelineBatch is the number of data blocks queued before the Builder
// starts a goroutine to compress them, when none runs: starting one
// wakes a thread (a futex call, about 1-3 µs on a VM), which would take
// much of what compressing one 4 KiB block elsewhere saves (snappy:
// 3-4 µs).
const pipelineBatch = 4

// Slot states. A slot goes queued → claimed → compressed → free, claimed
// by the compressing goroutine or, when it needs the block written and
// finds it still queued, by the Builder itself.
const (
	slotFree uint32 = iota
	slotQueued
	slotClaimed
	slotCompressed
)

// pipeline compresses data blocks on another goroutine while Add fills
// the next one (Options.Serial). The Builder's goroutine cuts blocks into
// a ring of slots and writes them, in order, once compressed; the other
// goroutine only compresses, so the file, the offsets and the errors stay
// the Builder's own. When the ring is full, the Builder compresses the
// oldest block itself if no goroutine has claimed it; otherwise it
// compresses the later blocks no goroutine has claimed, and only then
// waits for the oldest, asleep, so that on a machine with no core to
// spare the compressing goroutine gets the Builder's.
//
// No goroutine outlives the work: the Builder starts one (running goes
// from false to true) when pipelineBatch blocks are queued and none runs,
// and it exits as soon as it finds no block to claim, so a Builder
// dropped without Finish or Abort leaves none running for long.
//
// A block's index entry needs its handle, known when the block is
// written, and its separator, given by the next key: the slot keeps the
// separator, with the partition state a cut after it would record, until
// the block is written.
type pipeline struct {
	b    *Builder
	ring [pipelineDepth]pipeSlot

	// The Builder's side.
	head, count int    // the oldest slot not yet written, and the number of such slots
	outRaw      uint64 // decoded bytes of those blocks, for EstimatedSize
	unkicked    int    // blocks queued since a goroutine was last started or found running
	// newestWritten: the newest block was written before its separator
	// came; its handle is b.pendingHandle and its entry is added as
	// without a pipeline.
	newestWritten bool

	// Shared.
	queued  atomic.Uint64 // blocks ever queued: the sequence number of the next
	running atomic.Bool   // a compressing goroutine runs
	waiting atomic.Bool   // the Builder sleeps on wake for a slot
	mu      sync.Mutex
	wake    *sync.Cond

	// The compressing goroutine's: the sequence number of the next block
	// to claim (blocks behind it are claimed, or were taken by the
	// Builder).
	cursor uint64
}

// pipeSlot is one data block in the pipeline.
type pipeSlot struct {
	state atomic.Uint32

	contents []byte // decoded contents, a copy; set by the Builder before queued
	scratch  []byte // compression buffer
	stored   []byte // what to write: contents or scratch; set by whoever claimed the slot
	typ      byte

	// The Builder's: the index entry's separator and what a partition
	// cut after it records (countIndexEntry).
	sep, last []byte
	blocks    uint64
	hashes    int
	hasSep    bool
}

// usePipeline reports whether New should give the builder a pipeline:
// see Options.Serial for the tables that are built serially. Without
// compression there is nothing to hand over but a checksum (about 0.2 µs
// a 4 KiB block), less than the handoff costs.
func usePipeline(o *Options) bool {
	return !o.Serial && o.Splitter == nil && o.DictionarySize == 0 && o.Compression != format.NoCompression
}

func newPipeline(b *Builder) *pipeline {
	p := &pipeline{b: b}
	p.wake = sync.NewCond(&p.mu)
	return p
}

func (p *pipeline) slot(i int) *pipeSlot { return &p.ring[(p.head+i)%pipelineDepth] }

// queue queues a copy of a data block's contents, writing the oldest
// blocks first if the ring is full, and writes every block already
// compressed.
func (p *pipeline) queue(contents []byte) {
	if p.count == pipelineDepth {
		p.writeOldest()
	}
	s := p.slot(p.count)
	s.contents = append(s.contents[:0], contents...)
	s.hasSep = false
	s.state.Store(slotQueued)
	p.count++
	p.outRaw += uint64(len(contents))
	p.newestWritten = false
	p.queued.Add(1)
	if p.unkicked++; p.unkicked >= pipelineBatch {
		p.unkicked = 0
		if p.running.CompareAndSwap(false, true) {
			go p.compressAll()
		}
	}
	for p.count > 0 && p.slot(0).state.Load() == slotCompressed {
		p.writeOldest()
	}
}

// compressAll runs on the compressing goroutine: it claims and
// compresses queued blocks in order until it finds none.
func (p *pipeline) compressAll() {
	for {
		for q := p.queued.Load(); p.cursor < q; p.cursor++ {
			// A slot reused for a later block is claimed now and
			// skipped when the cursor reaches that block.
			s := &p.ring[p.cursor%pipelineDepth]
			if s.state.CompareAndSwap(slotQueued, slotClaimed) {
				p.compress(s)
			}
		}
		// Once running is false another goroutine may start and take
		// the cursor: read it first.
		cursor := p.cursor
		p.running.Store(false)
		if cursor == p.queued.Load() || !p.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// compress compresses a claimed slot's block and marks it compressed,
// waking the Builder if it waits.
func (p *pipeline) compress(s *pipeSlot) {
	s.stored, s.typ, s.scratch = p.b.encodeBlock(s.scratch, s.contents, p.b.compress)
	s.state.Store(slotCompressed)
	if p.waiting.Load() {
		p.mu.Lock()
		p.wake.Broadcast()
		p.mu.Unlock()
	}
}

// writeOldest writes the oldest block, compressing it first if no
// goroutine has claimed it, or waiting for the goroutine that has.
func (p *pipeline) writeOldest() {
	b := p.b
	s := p.slot(0)
	switch {
	case s.state.CompareAndSwap(slotQueued, slotClaimed):
		p.compress(s)
	case s.state.Load() != slotCompressed:
		// Claimed by the compressing goroutine: compress later blocks
		// meanwhile (its thread may have lost its core), then yield a
		// few times, then sleep, so that it can have this core.
		for i := 1; i < p.count && s.state.Load() != slotCompressed; i++ {
			if t := p.slot(i); t.state.CompareAndSwap(slotQueued, slotClaimed) {
				p.compress(t)
			}
		}
		for range 64 {
			if s.state.Load() == slotCompressed {
				break
			}
			runtime.Gosched()
		}
		if s.state.Load() != slotCompressed {
			p.mu.Lock()
			p.waiting.Store(true)
			for s.state.Load() != slotCompressed {
				p.wake.Wait()
			}
			p.waiting.Store(false)
			p.mu.Unlock()
		}
	}
	h := format.BlockHandle{Offset: b.offset, Length: uint64(len(s.stored))}
	var trailer [format.BlockTrailerLen]byte
	b.write(s.stored)
	b.write(codec.AppendTrailer(trailer[:0], s.stored, s.typ))
	b.noteDataBlock(s.contents, h, s.typ)
	if s.hasSep {
		b.handleBuf = codec.AppendHandle(b.handleBuf[:0], h)
		b.index.Add(s.sep, b.handleBuf)
		b.countIndexEntry(s.sep, s.last, s.blocks, s.hashes)
	} else {
		// The newest block: its separator comes with the next key.
		b.pendingHandle, p.newestWritten = h, true
	}
	s.stored = nil
	s.state.Store(slotFree)
	p.head = (p.head + 1) % pipelineDepth
	p.count--
	p.outRaw -= uint64(len(s.contents))
}

// setSeparator gives the newest block its index entry's separator: the
// entry is added now if the block is written, else when it is, with the
// partition state of now.
func (p *pipeline) setSeparator(sep []byte) {
	b := p.b
	if p.newestWritten {
		p.newestWritten = false
		b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
		b.index.Add(sep, b.handleBuf)
		b.countIndexEntry(sep, b.lastKey, b.props.NumDataBlocks, b.hashes.len())
		return
	}
	s := p.slot(p.count - 1)
	s.sep = append(s.sep[:0], sep...)
	s.last = append(s.last[:0], b.lastKey...)
	s.blocks = b.props.NumDataBlocks
	s.hashes = b.hashes.len()
	s.hasSep = true
}

// drain writes every queued block, and their index entries but the
// newest's if its separator is still to come.
func (p *pipeline) drain() {
	for p.count > 0 {
		p.writeOldest()
	}
}

// waitingEntries returns the number of index entries given their
// separator whose blocks are not yet written.
func (p *pipeline) waitingEntries() int {
	n := 0
	for i := 0; i < p.count; i++ {
		if p.slot(i).hasSep {
			n++
		}
	}
	return n
}
