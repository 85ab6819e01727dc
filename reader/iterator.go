package reader

import (
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
)

// Iterator walks a table's entries in key order, forwards or backwards.
// It is not safe for concurrent use; use one per goroutine. An open
// Iterator keeps the reader's file mapped after Reader.Close until the
// Iterator is closed.
type Iterator struct {
	r      *Reader
	s      scratch
	loaded bool // s.data holds the block of the current index entry
	mapped bool // s.data's block is read in place from the file mapping
	scan   bool // First or Last started a full scan: see Reader.beginScan
	err    error
	closed bool
	ra     readahead // over a ReaderAt: see readahead.go
}

// NewIterator returns an unpositioned iterator; call First, Last or SeekGE.
// On a closed reader every move returns false and Err wraps ErrClosed.
func (r *Reader) NewIterator() *Iterator {
	it := &Iterator{r: r}
	if !r.acquire() {
		it.err, it.closed = ErrClosed, true
		return it
	}
	if r.mapped == nil {
		it.s.ra = &it.ra
	}
	it.err = it.init()
	return it
}

// init loads the index and points the index iterator at it.
func (it *Iterator) init() (err error) {
	r := it.r
	if r.mapped != nil {
		defer restoreFault(protect())
		defer r.recoverFault(&err)
	}
	// The iterator keeps the index block pinned until Close.
	index, err := r.indexBlock(&it.s.indexPin)
	if err != nil {
		return err
	}
	return r.initIndexIter(&it.s.index, index)
}

// loadBlock loads the data block of the current index entry into s.data.
func (it *Iterator) loadBlock() bool {
	it.loaded = false
	if !it.s.index.Valid() {
		it.err = it.s.index.Err()
		return false
	}
	contents, h, err := it.r.blockAt(&it.s, &it.s.index.BlockIter, it.s.index.base)
	if err == nil {
		err = it.s.data.Init(format.SectionDataBlock, int64(h.Offset), contents)
	}
	if err != nil {
		it.err = err
		return false
	}
	it.loaded = true
	it.mapped = it.r.inMapping(contents)
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
		if !it.s.index.Next() || !it.loadBlock() {
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
		if !it.s.index.Prev() || !it.loadBlock() {
			if it.err == nil {
				it.err = it.s.index.Err()
			}
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

// First moves to the first entry; false if the table is empty or on error.
func (it *Iterator) First() (ok bool) {
	if it.r.mapped != nil {
		defer restoreFault(protect())
		defer it.recoverFault(&ok)
	}
	it.startScan()
	if !it.usable() || !it.s.index.First() || !it.loadBlock() {
		it.stop()
		return false
	}
	it.s.data.First()
	return it.forward()
}

// Last moves to the last entry; false if the table is empty or on error.
func (it *Iterator) Last() (ok bool) {
	if it.r.mapped != nil {
		defer restoreFault(protect())
		defer it.recoverFault(&ok)
	}
	it.startScan()
	if !it.usable() || !it.s.index.Last() || !it.loadBlock() {
		it.stop()
		return false
	}
	it.s.data.Last()
	return it.backward()
}

// SeekGE moves to the first entry whose key is >= key; false if there is
// none or on error.
func (it *Iterator) SeekGE(key []byte) (ok bool) {
	if it.r.mapped != nil {
		defer restoreFault(protect())
		defer it.recoverFault(&ok)
	}
	if !it.usable() || !it.s.index.SeekGE(key) || !it.loadBlock() {
		it.stop()
		return false
	}
	it.s.data.SeekGE(key)
	return it.forward()
}

// Next moves to the following entry; false past the last entry or on error.
// Calling Next on an unpositioned or exhausted iterator returns false.
func (it *Iterator) Next() bool {
	if !it.usable() || !it.loaded || !it.s.data.Valid() {
		return false
	}
	if it.r.mapped != nil && it.mapped {
		return it.nextProtected()
	}
	// A decoded block (in the cache) is process memory, which cannot fault: step within it without the fault guard, whose setup
	// and deferred recovery cost about a fifth of a Next. Leaving the
	// block reads the index and maybe the mapping, so that is guarded.
	it.s.data.Next()
	if it.s.data.Valid() {
		return true
	}
	return it.forwardProtected()
}

func (it *Iterator) nextProtected() (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	it.s.data.Next()
	return it.forward()
}

func (it *Iterator) forwardProtected() (ok bool) {
	if it.r.mapped != nil {
		defer restoreFault(protect())
		defer it.recoverFault(&ok)
	}
	return it.forward()
}

// Prev moves to the preceding entry; false before the first entry or on
// error. Calling Prev on an unpositioned or exhausted iterator returns false.
func (it *Iterator) Prev() (ok bool) {
	if it.r.mapped != nil {
		defer restoreFault(protect())
		defer it.recoverFault(&ok)
	}
	if !it.usable() || !it.loaded || !it.s.data.Valid() {
		return false
	}
	it.s.data.Prev()
	return it.backward()
}

// Valid reports whether the iterator is positioned on an entry.
func (it *Iterator) Valid() bool { return it.usable() && it.loaded && it.s.data.Valid() }

// Key returns the current key, valid until the next move. It returns nil
// when the iterator is not positioned.
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

// Err returns the error that stopped the iteration, if any: a corruption
// (wrapping format.ErrCorrupt) or ErrClosed.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator and its hold on the reader. It returns the
// iteration error, if any. Closing twice is harmless.
func (it *Iterator) Close() error {
	if it.closed {
		return it.err
	}
	it.closed = true
	it.loaded = false
	it.s.setPin(cache.Handle{})
	it.s.indexPin.Release()
	it.s.index.release()
	it.ra.release()
	if it.scan {
		it.r.endScan()
	}
	it.r.release()
	return it.err
}

// recoverFault, deferred after protect, stops the iterator with an error on
// a memory fault in the mapping.
func (it *Iterator) recoverFault(ok *bool) {
	if v := recover(); v != nil {
		it.err = it.r.faultError(v)
		it.loaded = false
		*ok = false
	}
}

// startScan marks the iterator as a full scan, once, so the mapping is read
// ahead while it runs.
func (it *Iterator) startScan() {
	if !it.scan && it.usable() {
		it.scan = true
		it.r.beginScan()
	}
}
