package lsmtable

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
)

// Read-ahead: a forward scan that has moved from block to block twice
// decodes the next data blocks of its table on another goroutine while it
// reads the current one: the checksum, the snappy decoding and the first
// touch of the file's pages (about a third of a scan's time over a
// LevelDB database) leave the scan's own goroutine for a second CPU, as
// RocksDB's asynchronous prefetching of a scan does. It runs only for
// tables opened with Options.ReadAhead, which the format packages leave
// off by default: it buys wall time with a second CPU's time, and the
// hand-over costs CPU time in all. Where GOMAXPROCS is 1 there is no
// second CPU, and scans read every block themselves.
//
// The worker decodes into a ring of aheadSlots buffers, block j into slot
// j % aheadSlots, and never past the scan's current block plus
// aheadSlots, so it never writes the slot the scan is reading. A slot
// publishes its block with an atomic store after its buffers are
// written. The worker checks each block's checksum as the scan would;
// a block that fails (or faults: a file truncated under its mapping) is
// left out, and the scan reads it itself, reporting the error as it
// always has. The worker stops when it reaches the scan's limit, so a
// scan abandoned without Close leaves no goroutine behind; Close, a seek
// and a move to another table stop it and wait for it.
type readAhead struct {
	t      *Table
	slots  [aheadSlots]aheadSlot
	limit  atomic.Int64 // the worker decodes blocks below it
	cur    atomic.Int64 // the scan's block: the worker decodes blocks after it
	next   atomic.Int64 // the next block the worker decodes
	epoch  atomic.Int64 // bumped by stop: a worker of an earlier epoch exits
	active atomic.Bool  // a worker decodes (or is starting): at most one at a time
	wg     sync.WaitGroup
	taken  int // blocks the scan took from the slots (the scan's own count)
	// started says the scan has started a worker that stop has not yet
	// waited for. It is the scan's own, where active is the workers':
	// a worker that has cleared active may set it again (see run), so
	// only the scan's record of what it started tells stop to wait.
	started bool
}

// aheadSlot holds one decoded data block.
type aheadSlot struct {
	block    atomic.Int64 // the data block in contents; -1 none
	contents []byte
	dec      []byte // decode buffer, reused
	stored   []byte // read buffer of a table read through ReadAt, reused
}

// aheadSlots is how many blocks the worker decodes ahead of the scan (16
// blocks of 4 KiB: 64 KiB of buffers per table iterator scanning). A
// worker exits once it has caught up, and a new one starts when there
// are aheadSlots/4 blocks to decode: the cost of starting one (a
// goroutine, the wake of an idle CPU, tens of microseconds before it
// runs) is paid once per 4 blocks, not per block, and the 12 blocks still
// decoded cover its start. Starting at aheadSlots/2 left the scan
// decoding more blocks itself (1M-entry database scans, alternated:
// medians about 10% slower); 32 slots did no better than 16.
const aheadSlots = 16

// scanLoads is how many block-to-block moves in a row make a scan: a
// seek and a few Nexts do not start the worker.
const scanLoads = 2

// aheadHook, set by tests only (nil otherwise), is called at the points
// of the stop protocol that a test must order: by the worker when it has
// caught up, before and after it clears active, and by stop before it
// signals and waits.
var aheadHook func(aheadPoint)

type aheadPoint int

const (
	aheadCaughtUp aheadPoint = iota // worker: nothing left below the limit; still active
	aheadIdle                       // worker: active cleared, before its re-check
	aheadStopping                   // scan: stop begins
)

func newReadAhead(t *Table) *readAhead {
	ra := &readAhead{t: t}
	for i := range ra.slots {
		ra.slots[i].block.Store(-1)
	}
	return ra
}

// ReadAhead reports whether the table was opened with Options.ReadAhead.
func (t *Table) ReadAhead() bool { return t.readAhead }

// readAheadPossible reports whether a second CPU may run the worker.
func (t *Table) readAheadPossible() bool { return t.readAhead && runtime.GOMAXPROCS(0) > 1 }

// take returns data block i if the worker has decoded it.
func (ra *readAhead) take(i int) ([]byte, bool) {
	s := &ra.slots[i%aheadSlots]
	if s.block.Load() != int64(i) {
		return nil, false
	}
	ra.taken++
	return s.contents, true
}

// advance tells the worker that the scan is on block cur: it may decode
// blocks up to cur+aheadSlots-1 (the table's last at most), and a new
// worker starts if none runs and it would have aheadSlots/4 blocks to
// decode.
func (ra *readAhead) advance(cur int) {
	limit := int64(min(cur+aheadSlots, ra.t.Index.Len()))
	ra.cur.Store(int64(cur))
	ra.limit.Store(limit)
	if ra.active.Load() {
		return
	}
	from := max(ra.next.Load(), int64(cur)+1)
	if limit-from < aheadSlots/4 || !ra.active.CompareAndSwap(false, true) {
		return
	}
	ra.next.Store(from)
	ra.started = true
	ra.wg.Add(1)
	go ra.run(ra.epoch.Load())
}

// stop makes any worker the scan has started exit after its current
// block, and waits for it, whether or not it is active at the moment.
// The slots keep what they hold: blocks of the same table.
func (ra *readAhead) stop() {
	if !ra.started {
		return
	}
	if aheadHook != nil {
		aheadHook(aheadStopping)
	}
	ra.epoch.Add(1)
	ra.limit.Store(0)
	ra.wg.Wait()
	ra.started = false
	ra.next.Store(0) // the next scan starts after its own block
}

// retable stops the worker and points the read-ahead at table t.
func (ra *readAhead) retable(t *Table) {
	ra.stop()
	if ra.t == t {
		return
	}
	ra.t = t
	for i := range ra.slots {
		ra.slots[i].block.Store(-1)
	}
}

// run is the worker: it decodes blocks from next up to the limit, then
// exits.
func (ra *readAhead) run(epoch int64) {
	defer ra.wg.Done()
	for {
		// A scan that overtook the worker (reading blocks itself) leaves
		// the blocks behind it undecoded.
		j := max(ra.next.Load(), ra.cur.Load()+1)
		if ra.epoch.Load() != epoch || j >= ra.limit.Load() {
			if aheadHook != nil {
				aheadHook(aheadCaughtUp)
			}
			ra.active.Store(false)
			if aheadHook != nil {
				aheadHook(aheadIdle)
			}
			// advance may have raised the limit after the check above
			// and seen this worker still active.
			if ra.epoch.Load() == epoch && j < ra.limit.Load() && ra.active.CompareAndSwap(false, true) {
				continue
			}
			return
		}
		ra.decode(int(j))
		ra.next.Store(j + 1)
	}
}

// decode decodes data block j into its slot, unless it is there already,
// the scan would read it in place or from the cache, or it fails its
// checks (the scan then reads it itself, and reports why).
func (ra *readAhead) decode(j int) {
	s := &ra.slots[j%aheadSlots]
	if s.block.Load() == int64(j) {
		return
	}
	s.block.Store(-1)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, fault := v.(interface{ Addr() uintptr }); !fault {
				panic(v)
			}
		}
	}()
	t := ra.t
	if t.closed.Load() {
		return
	}
	if t.mapped != nil && t.verified[j].Load() {
		return // a raw block, read in place
	}
	if p, ok := t.cache.Get(j); ok {
		p.Release()
		return
	}
	h := t.Index.handles[j]
	buf, err := t.Read(int64(h.Offset), int(h.Length)+format.BlockTrailerLen, s.stored)
	if err != nil {
		return
	}
	if t.mapped == nil {
		s.stored = buf
	}
	stored, typ, err := t.Codec.Check(format.SectionDataBlock, int64(h.Offset), buf)
	if err != nil {
		return
	}
	if typ == format.BlockTypeRaw {
		if t.mapped != nil {
			t.verified[j].Store(true)
			return
		}
		s.contents = stored
	} else {
		contents, err := t.Codec.Decode(format.SectionDataBlock, int64(h.Offset), stored, typ, s.dec)
		if err != nil {
			return
		}
		s.dec, s.contents = contents, contents
	}
	s.block.Store(int64(j))
}
