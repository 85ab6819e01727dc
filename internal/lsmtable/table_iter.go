package lsmtable

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/prefetch"
)

// IterOptions bound an iterator by user key: LowerBound inclusive,
// UpperBound exclusive, nil unbounded. NewIter and SetBounds copy them,
// as package reader's and merge's iterators do.
type IterOptions struct {
	LowerBound, UpperBound []byte
}

// TableIterator walks a table's entries, every version of every user key,
// in internal key order: user key ascending, then sequence number
// descending. It is used by one goroutine at a time. Key, Value and
// InternalKey are valid until the next move: Value may alias the file's
// mapping (a raw block) or a cached block.
type TableIterator struct {
	t            *Table
	lower, upper []byte
	i            int // current data block; -1 before the first
	blk          codec.BlockIter
	buf          blockBuf
	seek         []byte
	user         []byte
	seq          uint64
	kind         Kind
	valid        bool
	inMapping    bool // the current block is read in place from the mapping
	err          error

	// A forward scan's block-to-block moves in a row, and the read-ahead
	// they start (readahead.go); nil until a scan.
	moves int
	ahead *readAhead

	// The bounds' copies, when NewIter or SetBounds set them (a level's
	// iterator gives its table iterators its own copies).
	lowerBuf, upperBuf []byte
}

// NewIter returns an unpositioned iterator over the table, within o's
// bounds (nil: unbounded), which it copies. Close it before the table:
// after the table's Close, its moves return false with an error wrapping
// ErrClosed.
func (t *Table) NewIter(o *IterOptions) *TableIterator {
	it := &TableIterator{t: t, i: -1}
	if o != nil {
		it.lower = CopyBound(&it.lowerBuf, o.LowerBound)
		it.upper = CopyBound(&it.upperBuf, o.UpperBound)
	}
	if t.closed.Load() {
		it.err = t.Named(ErrClosed)
	}
	return it
}

// SetBounds changes the bounds, as IterOptions gives them (copied), and
// leaves the iterator unpositioned.
func (it *TableIterator) SetBounds(lower, upper []byte) {
	it.lower = CopyBound(&it.lowerBuf, lower)
	it.upper = CopyBound(&it.upperBuf, upper)
	it.valid = false
}

// Valid reports whether the iterator is on an entry.
func (it *TableIterator) Valid() bool { return it.valid }

// Key returns the current entry's user key.
func (it *TableIterator) Key() []byte { return it.user }

// Seq returns the current entry's sequence number.
func (it *TableIterator) Seq() uint64 { return it.seq }

// Kind returns the current entry's kind.
func (it *TableIterator) Kind() Kind { return it.kind }

// Value returns the current entry's value (empty for a deletion).
func (it *TableIterator) Value() []byte { return it.blk.Value() }

// InternalKey returns the current entry's whole internal key: the user
// key and the 8-byte trailer. In a table of plain keys (Index.SetPlain)
// it is the stored key, the user key itself.
func (it *TableIterator) InternalKey() []byte { return it.blk.Key() }

// PlainKeys reports whether the table's keys are plain keys
// (Index.SetPlain): user keys with no sequence number or kind stored.
func (it *TableIterator) PlainKeys() bool { return it.t.Index.plain }

// Err returns the error that stopped the iterator, if any: a corruption
// (wrapping format.ErrCorrupt, naming the table, section and offset) or
// a read error.
func (it *TableIterator) Err() error { return it.err }

// Close releases the block the iterator holds. It returns Err.
func (it *TableIterator) Close() error {
	it.stopAhead()
	it.buf.release()
	it.valid = false
	return it.err
}

// First moves to the first entry (at or above the lower bound).
func (it *TableIterator) First() (ok bool) {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	if !it.load(0) {
		return false
	}
	return it.forward(it.blk.First())
}

// Last moves to the last entry (below the upper bound).
func (it *TableIterator) Last() (ok bool) {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	if !it.load(it.t.Index.Len() - 1) {
		return false
	}
	return it.backward(it.blk.Last())
}

// Next moves to the next entry; false past the last one (or the upper
// bound), or on an error. On an unpositioned iterator it returns false.
func (it *TableIterator) Next() bool {
	if !it.valid {
		return false
	}
	// Within a block held in memory (the cache, a buffer), the move reads
	// no mapping and needs no fault guard. A closed table's pinned block
	// would still read: nextGuarded reports the Close instead.
	if !it.inMapping && !it.t.closed.Load() && it.blk.Next() {
		// forward(true) without the call: no block to load.
		if !it.settle() {
			return false
		}
		if it.upper != nil && compareUser(it.user, it.upper, it.t.Index.reverse) >= 0 {
			return it.stop()
		}
		return true
	}
	return it.nextGuarded(it.inMapping)
}

// nextGuarded is Next under the fault guard: the move itself when the
// block lies in the mapping (move), and the loading of later blocks.
func (it *TableIterator) nextGuarded(move bool) (ok bool) {
	if it.t.closed.Load() {
		return it.fail(ErrClosed) // the mapping may be gone
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	if move {
		return it.forward(it.blk.Next())
	}
	return it.forward(false)
}

// Prev moves to the previous entry; false before the first one (or the
// lower bound), or on an error. On an unpositioned iterator it returns
// false.
func (it *TableIterator) Prev() (ok bool) {
	if !it.valid {
		return false
	}
	if it.t.closed.Load() {
		return it.fail(ErrClosed)
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	return it.backward(it.blk.Prev())
}

// SeekGE moves to the first entry whose user key is at or above key (and
// the lower bound): that key's newest version.
func (it *TableIterator) SeekGE(key []byte) bool {
	if it.lower != nil && compareUser(key, it.lower, it.t.Index.reverse) < 0 {
		key = it.lower
	}
	return it.seekGE(key, MaxSequence)
}

// SeekGEAt moves to the first entry at or after (key, seq) in internal key
// order: key's newest version at or below seq, or else the first entry of
// a larger user key. Bounds apply as for SeekGE.
func (it *TableIterator) SeekGEAt(key []byte, seq uint64) bool {
	if it.lower != nil && compareUser(key, it.lower, it.t.Index.reverse) < 0 {
		key, seq = it.lower, MaxSequence
	}
	return it.seekGE(key, min(seq, MaxSequence))
}

func (it *TableIterator) seekGE(key []byte, seq uint64) (ok bool) {
	if it.err != nil {
		return false
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	hidden := false // key's versions lie above seq: the seek goes past them
	if it.t.HasGlobalSeq {
		// The entries store 0; every one reads as the global number.
		hidden = seq < it.t.GlobalSeq
		seq = MaxSequence
	}
	it.seek = it.t.appendSeekKey(it.seek[:0], key, seq)
	i := it.t.Index.Search(it.seek)
	if i >= it.t.Index.Len() {
		return it.stop()
	}
	if !it.load(i) {
		return false
	}
	if s := it.buf.side; s != nil && it.sideSeek(s, key, false) == sidePositioned {
		ok = it.forward(true)
	} else if it.err != nil {
		return false
	} else {
		ok = it.forward(it.seekBlock(it.seek))
	}
	for hidden && ok && bytes.Equal(it.user, key) {
		ok = it.Next()
	}
	return ok
}

// SeekLT moves to the last entry whose user key is below key (and the
// upper bound): that key's oldest version.
func (it *TableIterator) SeekLT(key []byte) (ok bool) {
	if it.err != nil {
		return false
	}
	if it.upper != nil && compareUser(key, it.upper, it.t.Index.reverse) > 0 {
		key = it.upper
	}
	defer restoreFault(protect())
	defer it.recover(&ok)
	it.seek = it.t.appendSeekKey(it.seek[:0], key, MaxSequence)
	i := it.t.Index.Search(it.seek)
	if i >= it.t.Index.Len() {
		if !it.load(it.t.Index.Len() - 1) {
			return false
		}
		return it.backward(it.blk.Last())
	}
	if !it.load(i) {
		return false
	}
	if it.seekBlock(it.seek) {
		return it.backward(it.blk.Prev())
	}
	if it.blk.Err() != nil {
		return it.backward(false)
	}
	return it.backward(it.blk.Last()) // every entry of block i is below key
}

// seekBlock moves within the current block to the first entry at or
// above the stored key target: a binary search of the restart points in
// the table's key order, then a scan of one restart interval.
func (it *TableIterator) seekBlock(target []byte) bool {
	lo, hi := 0, it.blk.NumRestarts()
	if hi <= 8 {
		it.blk.PrefetchRestarts(hi) // a 4 KiB block has 2 to 4: their misses overlap
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if !it.blk.SeekRestart(mid) {
			return false
		}
		if it.t.Index.Compare(it.blk.Key(), target) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	it.blk.PrefetchInterval(max(lo-1, 0))
	if !it.blk.SeekRestart(max(lo-1, 0)) {
		return false
	}
	for it.t.Index.Compare(it.blk.Key(), target) < 0 {
		if !it.blk.Next() {
			return false
		}
	}
	return true
}

// load makes data block i current, unpositioned within it, for a seek:
// the block goes to the cache if the cache admits it (a mapped table's
// block missed for the first time only while the cache has room: see
// blockcache's ReserveAdmitted). A move from one block to the next
// (Next, Prev) uses loadBlock(i, false) instead: a block found in the
// cache is used, one that is not is decoded into the iterator's own
// buffer, as LevelDB's iterators do with ReadOptions.fill_cache false. A
// scan reads each block once, and taking cache memory for it (a new
// cache's pages faulted in, an insertion) cost its forward scans 7-14%
// beside the same scan with a full cache, which refuses such blocks.
func (it *TableIterator) load(i int) bool { return it.loadBlock(i, true, false) }

// loadBlock makes data block i current; fill as for Table.dataBlock.
// forward says the move is a forward scan's, from block i-1: the second
// such move in a row starts the read-ahead; any other load stops it.
func (it *TableIterator) loadBlock(i int, fill, forward bool) bool {
	if it.err != nil {
		return false
	}
	if i < 0 || i >= it.t.Index.Len() {
		return it.stop()
	}
	if it.t.closed.Load() {
		return it.fail(ErrClosed)
	}
	if !forward {
		it.stopAhead()
	} else if it.moves++; it.moves >= scanLoads {
		if it.ahead == nil && it.moves == scanLoads && it.t.readAheadPossible() {
			it.ahead = newReadAhead(it.t)
		}
	}
	if forward && it.ahead != nil && it.moves >= scanLoads {
		contents, ok := it.ahead.take(i)
		it.ahead.advance(i)
		if ok {
			it.buf.release()
			it.i, it.inMapping = i, false
			if err := it.t.initBlock(&it.blk, int64(it.t.Index.handles[i].Offset), contents); err != nil {
				return it.fail(err)
			}
			return true
		}
	}
	if forward && i+1 < len(it.t.Index.handles) && it.t.mapped != nil {
		// A scan reads the next block's stored bytes soon: start loading
		// them from memory now, as this block is read. Checking a block
		// began with a wait for its trailer's line, 12% of a 1M-entry
		// scan of RocksDB's snappy table.
		h := it.t.Index.handles[i+1]
		prefetch.Range(it.t.mapped, int(h.Offset), int(h.End()))
	}
	contents, mapped, err := it.t.dataBlock(i, &it.buf, fill)
	if err != nil {
		return it.fail(err)
	}
	it.i, it.inMapping = i, mapped
	off := int64(it.t.Index.handles[i].Offset)
	if s := it.buf.side; s != nil && s.size() <= len(contents) {
		// The layout found when the block was cached: its restart array
		// is not read to learn it again.
		err = it.blk.InitEntries(format.SectionDataBlock, off, contents[:s.size()], s.end())
	} else {
		err = it.t.initBlock(&it.blk, off, contents)
	}
	if err != nil {
		return it.fail(err)
	}
	return true
}

// stopAhead ends a scan's run of block-to-block moves: a seek, a backward
// move, Close.
func (it *TableIterator) stopAhead() {
	it.moves = 0
	if it.ahead != nil {
		it.ahead.stop()
	}
}

// forward settles after a forward move that reported ok: on to the
// following blocks while the current one is exhausted, then the upper
// bound.
func (it *TableIterator) forward(ok bool) bool {
	for !ok {
		if err := it.blk.Err(); err != nil {
			return it.fail(err)
		}
		if it.i+1 >= it.t.Index.Len() {
			return it.stop()
		}
		if !it.loadBlock(it.i+1, false, true) {
			return false
		}
		ok = it.blk.First()
	}
	if !it.settle() {
		return false
	}
	if it.upper != nil && compareUser(it.user, it.upper, it.t.Index.reverse) >= 0 {
		return it.stop()
	}
	return true
}

// backward is forward's mirror, for backward moves and the lower bound.
func (it *TableIterator) backward(ok bool) bool {
	for !ok {
		if err := it.blk.Err(); err != nil {
			return it.fail(err)
		}
		if it.i <= 0 {
			return it.stop()
		}
		if !it.loadBlock(it.i-1, false, false) {
			return false
		}
		ok = it.blk.Last()
	}
	if !it.settle() {
		return false
	}
	if it.lower != nil && compareUser(it.user, it.lower, it.t.Index.reverse) < 0 {
		return it.stop()
	}
	return true
}

// settle decodes the current entry's internal key; a plain key is a
// value at sequence number 0.
func (it *TableIterator) settle() bool {
	if it.t.Index.plain {
		it.user, it.seq, it.kind, it.valid = it.blk.Key(), 0, KindValue, true
		return true
	}
	user, seq, kind, ok := SplitKey(it.blk.Key(), it.t.Kinds)
	if !ok {
		h := it.t.Index.handles[it.i]
		return it.fail(format.Corruptf(format.SectionDataBlock, int64(h.Offset), "key %q is not an internal key (user key, then 8 bytes of sequence number and a kind this table may hold)", it.blk.Key()))
	}
	if it.t.HasGlobalSeq {
		if seq != 0 {
			h := it.t.Index.handles[it.i]
			return it.fail(format.Corruptf(format.SectionDataBlock, int64(h.Offset), "key %q has sequence number %d in a table whose global sequence number %d replaces stored zeros", user, seq, it.t.GlobalSeq))
		}
		seq = it.t.GlobalSeq
	}
	it.user, it.seq, it.kind, it.valid = user, seq, kind, true
	return true
}

// stop ends a move that found no entry; after the table's Close, with
// ErrClosed rather than as the end of the data.
func (it *TableIterator) stop() bool {
	if it.t.closed.Load() {
		return it.fail(ErrClosed)
	}
	it.valid = false
	return false
}

func (it *TableIterator) fail(err error) bool {
	if it.err == nil {
		it.err = it.t.Named(err)
	}
	it.valid = false
	it.buf.release()
	return false
}

// recover, deferred after protect, turns a fault in the mapping into Err.
func (it *TableIterator) recover(ok *bool) {
	if v := recover(); v != nil {
		it.fail(it.t.faultError(v))
		*ok = false
	}
}
