package leveldb

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// deletionMark is the value a level shows for a user key whose newest
// version is a deletion; IsDeletion recognises it by its address, so no
// value read from a file can pass for it.
var deletionMark = [1]byte{0}

// IsDeletion reports whether value is the mark this package's levels show
// for a deleted user key. Pass it as merge.Options.IsDeletion (as
// DB.MergeOptions does): a deleted key then reads as absent.
func IsDeletion(value []byte) bool {
	return len(value) == 1 && unsafe.SliceData(value) == &deletionMark[0]
}

// lazyTable is a table a level opens on first use.
type lazyTable struct {
	path              string
	smallest, largest []byte // user keys, from the MANIFEST
	open              func() (*Table, error)

	once sync.Once
	t    *Table
	err  error
}

func (l *lazyTable) get() (*Table, error) {
	l.once.Do(func() { l.t, l.err = l.open() })
	return l.t, l.err
}

// closing returns the table if it was opened, and makes later gets fail
// with ErrClosed if it was not.
func (l *lazyTable) closing() *Table {
	l.once.Do(func() { l.err = fmt.Errorf("leveldb: %s: %w", l.path, ErrClosed) })
	return l.t
}

// tableLevel is a merge.Level over tables whose user key ranges follow
// one another (a LevelDB level 1 or above, or one level 0 table): it
// shows each user key's newest version, a deletion as deletionMark. One
// user key's versions may continue from one table into the next, as
// LevelDB's compactions cut tables by size.
type tableLevel struct {
	tables []*lazyTable
}

var _ merge.PointGetter = (*tableLevel)(nil)

// NewIter returns an iterator over the level within o's bounds.
func (l *tableLevel) NewIter(o *reader.IterOptions) merge.LevelIterator {
	it := &levelIter{l: l, ti: -1}
	if o != nil {
		it.lower, it.upper = o.LowerBound, o.UpperBound
	}
	return it
}

// NewSpanIter returns nil: LevelDB has no range deletions.
func (l *tableLevel) NewSpanIter() merge.SpanIterator { return nil }

// SpanAt reports reader.ErrNotFound: LevelDB has no range deletions.
func (l *tableLevel) SpanAt(key []byte) (reader.Span, error) {
	return reader.Span{}, reader.ErrNotFound
}

// Get returns key's newest version in the level: its value, or
// deletionMark.
func (l *tableLevel) Get(key []byte) ([]byte, error) {
	i := sort.Search(len(l.tables), func(i int) bool { return bytes.Compare(l.tables[i].largest, key) >= 0 })
	for ; i < len(l.tables) && bytes.Compare(l.tables[i].smallest, key) <= 0; i++ {
		t, err := l.tables[i].get()
		if err != nil {
			return nil, err
		}
		e, err := t.Get(key, MaxSequence)
		if err == reader.ErrNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		if e.Kind == KindDeletion {
			return deletionMark[:], nil
		}
		return e.Value, nil
	}
	return nil, reader.ErrNotFound
}

// levelIter is a tableLevel's iterator: the tables' iterators one after
// another (cat*), showing only the first, newest, version of each user
// key.
type levelIter struct {
	l            *tableLevel
	lower, upper []byte
	ti           int // current table; -1 none
	it           TableIterator
	open         bool // it is on table ti
	prefix       []byte
	inPrefix     bool
	saved        []byte
	valid        bool
	err          error
}

// table makes table i current, unpositioned.
func (li *levelIter) table(i int) bool {
	if li.err != nil {
		return false
	}
	if li.open && li.ti == i {
		return true
	}
	t, err := li.l.tables[i].get()
	if err != nil {
		li.err = err
		return false
	}
	li.it.buf.release()
	ahead := li.it.ahead
	if ahead != nil {
		ahead.retable(t) // the scan goes on in table i: buffers reused
	}
	li.it = TableIterator{t: t, i: -1, lower: li.lower, upper: li.upper, blk: li.it.blk, buf: li.it.buf, seek: li.it.seek, ahead: ahead}
	li.ti, li.open = i, true
	return true
}

// done checks the table iterator after a move that returned false.
func (li *levelIter) failed() bool {
	if li.it.err != nil {
		li.err = li.it.err
		return true
	}
	return false
}

func (li *levelIter) catFirst() bool { return li.catForwardFrom(0) }

// catForwardFrom moves to the first entry of tables i, i+1, ...
func (li *levelIter) catForwardFrom(i int) bool {
	for ; i < len(li.l.tables); i++ {
		if !li.table(i) {
			return false
		}
		if li.it.First() {
			return true
		}
		if li.failed() {
			return false
		}
	}
	return false
}

func (li *levelIter) catLast() bool { return li.catBackwardFrom(len(li.l.tables) - 1) }

// catBackwardFrom moves to the last entry of tables i, i-1, ...
func (li *levelIter) catBackwardFrom(i int) bool {
	for ; i >= 0; i-- {
		if !li.table(i) {
			return false
		}
		if li.it.Last() {
			return true
		}
		if li.failed() {
			return false
		}
	}
	return false
}

func (li *levelIter) catNext() bool {
	if li.it.Next() {
		return true
	}
	if li.failed() {
		return false
	}
	return li.catForwardFrom(li.ti + 1)
}

func (li *levelIter) catPrev() bool {
	if li.it.Prev() {
		return true
	}
	if li.failed() {
		return false
	}
	return li.catBackwardFrom(li.ti - 1)
}

// catSeekGE moves to the newest version of the first user key at or
// above key.
func (li *levelIter) catSeekGE(key []byte) bool {
	ts := li.l.tables
	i := sort.Search(len(ts), func(i int) bool { return bytes.Compare(ts[i].largest, key) >= 0 })
	if i == len(ts) {
		return false
	}
	if !li.table(i) {
		return false
	}
	if li.it.SeekGE(key) {
		return true
	}
	if li.failed() {
		return false
	}
	return li.catForwardFrom(i + 1)
}

// catSeekLT moves to the oldest version of the last user key below key.
func (li *levelIter) catSeekLT(key []byte) bool {
	ts := li.l.tables
	i := sort.Search(len(ts), func(i int) bool { return bytes.Compare(ts[i].smallest, key) >= 0 }) - 1
	if i < 0 {
		return false
	}
	if !li.table(i) {
		return false
	}
	if li.it.SeekLT(key) {
		return true
	}
	if li.failed() {
		return false
	}
	return li.catBackwardFrom(i - 1)
}

// newest moves from the oldest version of a user key, where a backward
// move landed, to its newest.
func (li *levelIter) newest(ok bool) bool {
	if !ok {
		return false
	}
	li.saved = append(li.saved[:0], li.it.user...)
	for {
		if !li.catPrev() {
			if li.err != nil {
				return false
			}
			// Off the start (or the lower bound): the key's newest
			// version is where a seek to it lands.
			return li.catSeekGE(li.saved)
		}
		if !bytes.Equal(li.it.user, li.saved) {
			return li.catNext()
		}
	}
}

// skipVersions moves from a user key's newest version past its older
// ones, to the next user key's newest.
func (li *levelIter) skipVersions() bool {
	li.saved = append(li.saved[:0], li.it.user...)
	for {
		if !li.catNext() {
			return false
		}
		if !bytes.Equal(li.it.user, li.saved) {
			return true
		}
	}
}

func (li *levelIter) settle(ok bool) bool {
	if ok && li.inPrefix && !bytes.HasPrefix(li.it.user, li.prefix) {
		ok = false
	}
	li.valid = ok
	return ok
}

func (li *levelIter) First() bool { li.inPrefix = false; return li.settle(li.catFirst()) }
func (li *levelIter) Last() bool  { li.inPrefix = false; return li.settle(li.newest(li.catLast())) }

func (li *levelIter) Next() bool {
	if !li.valid {
		return false
	}
	return li.settle(li.skipVersions())
}

func (li *levelIter) Prev() bool {
	if !li.valid {
		return false
	}
	return li.settle(li.newest(li.catPrev()))
}

func (li *levelIter) SeekGE(key []byte) bool {
	li.inPrefix = false
	return li.settle(li.catSeekGE(key))
}

func (li *levelIter) SeekLT(key []byte) bool {
	li.inPrefix = false
	return li.settle(li.newest(li.catSeekLT(key)))
}

func (li *levelIter) SeekPrefixGE(prefix, key []byte) bool {
	li.prefix, li.inPrefix = append(li.prefix[:0], prefix...), true
	return li.settle(li.catSeekGE(key))
}

func (li *levelIter) SeekPrefixLT(prefix, key []byte) bool {
	li.prefix, li.inPrefix = append(li.prefix[:0], prefix...), true
	return li.settle(li.newest(li.catSeekLT(key)))
}

func (li *levelIter) Key() []byte { return li.it.user }

func (li *levelIter) Value() []byte {
	if li.it.kind == KindDeletion {
		return deletionMark[:]
	}
	return li.it.Value()
}

func (li *levelIter) SetBounds(lower, upper []byte) {
	li.lower, li.upper = lower, upper
	li.it.SetBounds(lower, upper)
	li.valid, li.inPrefix = false, false
}

func (li *levelIter) Err() error { return li.err }

func (li *levelIter) Close() error {
	li.it.stopAhead()
	li.it.buf.release()
	li.open, li.valid = false, false
	return li.err
}
