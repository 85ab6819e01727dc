package reader

import (
	"bytes"
	"unsafe"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/prefetch"
)

// Iterator walks a table's entries in key order, forwards or backwards,
// within its bounds (IterOptions, changed by SetBounds). It is not safe for
// concurrent use; use one per goroutine. A move from an unpositioned or
// exhausted iterator (Next, Prev) returns false and leaves it so; seek
// again (SeekGE, SeekLT, First, Last) to go on.
//
// After SeekPrefixGE returns true, the iterator is in prefix iteration
// mode, as Pebble's Iterator is: Next and Prev return false, leaving the
// iterator exhausted, where they would move to a key without the prefix,
// so that a loop over a key's versions stops at its last one (without
// reading the next data block). First, Last, SeekGE and SeekLT end the
// mode; another SeekPrefixGE starts it with its own prefix. SeekPrefixLT
// starts it too, from the last key below a bound: with suffixes that sort
// ascending by version (big-endian timestamps), it reads the newest
// version at or below a timestamp (see SeekPrefixLT's example).
//
// An open Iterator keeps working after Reader.Close, and keeps the
// reader's file open and mapped, until the Iterator is closed.
type Iterator struct {
	r      *Reader
	s      scratch
	lower  []byte // inclusive bound; nil for none; else lowerBuf's bytes
	upper  []byte // exclusive bound; nil for none; else upperBuf's bytes
	loaded bool   // s.data holds the block of the current index entry, on an entry within bounds
	mapped bool   // s.data's block is read in place from the file mapping
	scan   bool   // First or Last started a full scan: see source.beginScan
	err    error
	closed bool
	ra     readahead // over a ReaderAt: see readahead.go

	// lazyIndex, when not 0, is 1 + the data block s.data holds, whose
	// index entry s.index is not yet on: SeekPrefixGE through the hash
	// index loads the block without the index, which is positioned only
	// when a move leaves the block (syncIndex).
	lazyIndex int

	// inPrefix is set by a SeekPrefixGE that returned true: Next and Prev
	// stop at keys without prefix (a copy, whose buffer is reused).
	inPrefix bool
	prefix   []byte

	// ahead holds the cache lines of the next data block a forward walk
	// has still to prefetch: Next asks for two at each step, so that the
	// block is in the CPU's caches when the walk gets to it, however
	// scattered the cache holds a table's blocks (source.window).
	ahead []byte

	// copied holds a raw block of the mapping that a forward walk moved
	// onto (see loadBlock); reused from block to block.
	copied []byte

	// The bounds' copies (NewIter, SetBounds), kept while a bound is nil
	// so that per-query bounds reuse them.
	lowerBuf, upperBuf []byte

	// end holds SeekPrefixLT's seek key past its prefix (prefixEnd).
	end []byte
}

// syncIndex positions s.index on the entry of the block a hashed
// SeekPrefixGE loaded, if it is not there yet.
func (it *Iterator) syncIndex() bool {
	if it.lazyIndex == 0 {
		return true
	}
	i := it.lazyIndex - 1
	it.lazyIndex = 0
	if !it.s.index.SeekRestart(i) {
		if it.err = it.s.index.Err(); it.err == nil {
			it.err = format.Corruptf(format.SectionIndex, int64(it.r.footer.Index.Offset), "no index entry for data block %d", i)
		}
		return false
	}
	return true
}

// NewIterator returns an unbounded, unpositioned iterator: NewIter(nil).
func (r *Reader) NewIterator() *Iterator { return r.NewIter(nil) }

// NewIter returns an unpositioned iterator over the keys within o's
// bounds (nil: every key); call First, Last, SeekGE, SeekLT or
// SeekPrefixGE. Every positioning method respects the bounds. On a closed
// reader every move returns false and Err wraps ErrClosed. Close the
// iterator when done: it holds the reader's file open.
func (r *Reader) NewIter(o *IterOptions) *Iterator {
	it := &Iterator{r: r}
	if o != nil {
		it.lower = setBound(&it.lowerBuf, o.LowerBound)
		it.upper = setBound(&it.upperBuf, o.UpperBound)
	}
	if !r.acquire() {
		it.err, it.closed = ErrClosed, true
		return it
	}
	it.s.ra = &it.ra // used by a source that reads through ReadAt
	it.err = it.init()
	return it
}

// init loads the index and points the index iterator at it.
func (it *Iterator) init() (err error) {
	defer restoreFault(protect())
	defer it.r.recoverFault(&err)
	// The iterator keeps the index block (or top-level index) pinned
	// until Close.
	return it.r.index.initIter(&it.s.index, &it.s.indexPin)
}

// loadBlock loads the data block of the current index entry into s.data.
//
// With walk, for a forward walk through blocks (First's full scan, Next
// leaving a block), a raw block of the mapping is copied into it.copied,
// under the caller's fault guard: each Next within the block then reads
// process memory, which cannot fault, and needs no guard of its own.
// The guard cost about 6 of 21 ns per Next of a warm scan of 1M
// uncompressed entries; the copy of a 4 KiB block, whose bytes the Nexts
// would read anyway, costs well under 1 ns per entry. Seeks, which read
// a few entries of a block, serve it in place.
func (it *Iterator) loadBlock(walk bool) bool {
	it.loaded = false
	it.ahead = nil
	if !it.s.index.Valid() {
		it.err = it.s.index.Err()
		return false
	}
	contents, h, err := it.s.index.dataBlock(&it.s)
	mapped := err == nil && it.r.src.inPlace(contents)
	if mapped && walk {
		it.copied = append(it.copied[:0], contents...)
		contents, mapped = it.copied, false
	}
	if err == nil {
		err = it.s.data.Init(format.SectionDataBlock, int64(h.Offset), contents)
	}
	if err != nil {
		it.err = err
		return false
	}
	it.loaded = true
	it.mapped = mapped
	if walk {
		it.ahead = it.r.src.window(it.s.index.block()+1, h.Offset+h.Length+format.BlockTrailerLen)
	}
	return true
}

// forward moves to the first entry of the next non-empty blocks while the
// data iterator is exhausted.
func (it *Iterator) forward() bool {
	for !it.s.data.Valid() {
		if err := it.s.data.Err(); err != nil {
			it.err = err
			return false
		}
		if !it.syncIndex() {
			return false
		}
		// The block's separator is >= its keys and < the next block's: at
		// or past the upper bound, the next block lies past it too, and is
		// not read.
		if it.upper != nil && it.s.index.Valid() && bytes.Compare(it.s.index.Key(), it.upper) >= 0 {
			it.loaded = false
			return false
		}
		// In prefix iteration mode, a separator above every key with the
		// prefix (above it and not starting with it) puts the next
		// block's keys past them too.
		if it.inPrefix && it.s.index.Valid() && !bytes.HasPrefix(it.s.index.Key(), it.prefix) && bytes.Compare(it.s.index.Key(), it.prefix) > 0 {
			it.loaded = false
			return false
		}
		if !it.s.index.Next() || !it.loadBlock(true) {
			if it.err == nil {
				it.err = it.s.index.Err()
			}
			return false
		}
		it.s.data.First()
	}
	return true
}

// backward moves to the last entry of earlier blocks while the data
// iterator is exhausted.
func (it *Iterator) backward() bool {
	for !it.s.data.Valid() {
		if err := it.s.data.Err(); err != nil {
			it.err = err
			return false
		}
		if !it.syncIndex() {
			return false
		}
		if !it.s.index.Prev() {
			if it.err == nil {
				it.err = it.s.index.Err()
			}
			return false
		}
		// Every key of the earlier block is <= its separator: below the
		// lower bound, or in prefix iteration mode below the prefix (and
		// so below every key with it), the block is not read.
		if it.lower != nil && bytes.Compare(it.s.index.Key(), it.lower) < 0 ||
			it.inPrefix && bytes.Compare(it.s.index.Key(), it.prefix) < 0 {
			it.loaded = false
			return false
		}
		if !it.loadBlock(false) {
			return false
		}
		it.s.data.Last()
	}
	return true
}

// stop unpositions the iterator after a failed move, keeping the index's
// error: a partitioned table's index reads its partitions as it moves.
func (it *Iterator) stop() {
	it.loaded = false
	if it.err == nil && !it.closed {
		it.err = it.s.index.Err()
	}
}

func (it *Iterator) usable() bool { return it.err == nil && !it.closed }

// Next moves to the following entry; false past the last entry (in prefix
// iteration mode, past the prefix's last key) or on error. Calling Next on
// an unpositioned or exhausted iterator returns false.
func (it *Iterator) Next() bool {
	if !it.usable() || !it.loaded || !it.s.data.Valid() {
		return false
	}
	if it.mapped {
		return it.nextProtected()
	}
	// A decoded block (in the cache) or a copied one (loadBlock) is
	// process memory, which cannot fault: step within it without the
	// fault guard, whose setup and deferred recovery cost about a fifth
	// of a Next. Leaving the block reads the index and maybe the
	// mapping, so that is guarded.
	if it.s.data.Next() {
		if a := it.ahead; len(a) > 128 {
			prefetch.Line(unsafe.Pointer(&a[0]))
			prefetch.Line(unsafe.Pointer(&a[64]))
			it.ahead = a[128:]
		} else if len(a) > 0 {
			prefetch.Line(unsafe.Pointer(&a[0]))
			prefetch.Line(unsafe.Pointer(&a[len(a)-1]))
			it.ahead = nil
		}
		if it.upper == nil && !it.inPrefix {
			return true
		}
		return it.checkUpper(true)
	}
	return it.forwardProtected()
}

// nextProtected is Next on a block read in place from the mapping (one a
// seek loaded): one deferred call, not two, and the common step within
// the block returns before the general path.
func (it *Iterator) nextProtected() (ok bool) {
	defer it.endGuard(&ok, protect())
	if it.s.data.Next() && it.upper == nil && !it.inPrefix {
		return true
	}
	return it.checkUpper(it.forward())
}

func (it *Iterator) forwardProtected() (ok bool) {
	if !it.r.guarded {
		// Once per block of a scan: the guard's cost showed (2-6% of a
		// scan over a ReaderAt, which cannot fault).
		return it.checkUpper(it.forward())
	}
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	return it.checkUpper(it.forward())
}

// Prev moves to the preceding entry; false before the first entry (in
// prefix iteration mode, before the prefix's first key) or on error.
// Calling Prev on an unpositioned or exhausted iterator returns false.
func (it *Iterator) Prev() (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	if !it.usable() || !it.loaded || !it.s.data.Valid() {
		return false
	}
	it.s.data.Prev()
	return it.checkLower(it.backward())
}

// Valid reports whether the iterator is positioned on an entry.
func (it *Iterator) Valid() bool { return it.usable() && it.loaded && it.s.data.Valid() }

// Key returns the current key, valid until the next move. It returns nil
// when the iterator is not positioned, and a non-nil slice when it is,
// empty for the empty key: a caller (merge's heap among them) may test
// Key() != nil for "positioned".
func (it *Iterator) Key() []byte {
	if !it.Valid() {
		return nil
	}
	return it.s.data.Key()
}

// Value returns the current value, valid until the next move. It may alias
// the memory-mapped file; copy it to keep it. It returns nil when the
// iterator is not positioned.
func (it *Iterator) Value() []byte {
	if !it.Valid() {
		return nil
	}
	return it.s.data.Value()
}

// Err returns the error that stopped the iteration, if any: a
// *format.CorruptError (wrapping format.ErrCorrupt), a failed read, or
// an error wrapping ErrClosed, naming the table as the Reader's errors
// do; the same error on every call, and from Close.
func (it *Iterator) Err() error {
	if it.err != nil {
		it.err = it.r.named(it.err) // once: named leaves a named error as it is
	}
	return it.err
}

// Close releases the iterator and its hold on the reader. It returns the
// iteration error, if any. Closing twice is harmless.
func (it *Iterator) Close() error {
	if it.closed {
		return it.Err()
	}
	it.closed = true
	it.loaded = false
	it.s.setPin(blockcache.Handle{})
	it.s.indexPin.Release()
	it.s.index.release()
	it.ra.release()
	it.releaseHashIndex()
	if it.scan {
		it.r.src.endScan()
	}
	it.r.release()
	return it.Err()
}

// endGuard, deferred with protect's result, is recoverFault and
// restoreFault in one deferred call, for the hot paths.
func (it *Iterator) endGuard(ok *bool, old bool) {
	if v := recover(); v != nil {
		it.err = it.r.src.faultError(v)
		it.loaded = false
		*ok = false
	}
	restoreFault(old)
}

// recoverFault, deferred after protect, stops the iterator with an error on
// a memory fault in the mapping.
func (it *Iterator) recoverFault(ok *bool) {
	if v := recover(); v != nil {
		it.err = it.r.src.faultError(v)
		it.loaded = false
		*ok = false
	}
}

// startScan marks the iterator as a full scan, once, so the mapping is read
// ahead while it runs.
func (it *Iterator) startScan() {
	if !it.scan && it.usable() {
		it.scan = true
		it.r.src.beginScan()
	}
}
