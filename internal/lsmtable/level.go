package lsmtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// deletionMark is the value a level shows for a user key whose newest
// version is a deletion; IsDeletion recognises it by its address, so no
// value read from a file can pass for it.
var deletionMark = [1]byte{0}

// IsDeletion reports whether value is the mark a Level shows for a
// deleted user key.
func IsDeletion(value []byte) bool {
	return len(value) == 1 && unsafe.SliceData(value) == &deletionMark[0]
}

// LazyTable is a table a level opens on first use.
type LazyTable struct {
	Path              string
	Smallest, Largest []byte // user keys
	Open              func() (*Table, error)

	once   sync.Once
	t      *Table
	err    error
	closed atomic.Bool // Closing was called
}

// Get opens the table, once.
func (l *LazyTable) Get() (*Table, error) {
	l.once.Do(func() { l.t, l.err = l.Open() })
	return l.t, l.err
}

// Closing returns the table if it was opened, and makes later Gets fail
// with ErrClosed if it was not. A Level whose first table is closing
// reports ErrClosed from every method that would otherwise open no table.
func (l *LazyTable) Closing() *Table {
	l.closed.Store(true)
	l.once.Do(func() { l.err = fmt.Errorf("%s: %w", l.Path, ErrClosed) })
	return l.t
}

// Opened returns a LazyTable over a table already open.
func Opened(t *Table, smallest, largest []byte) *LazyTable {
	l := &LazyTable{Path: t.Name(), Smallest: smallest, Largest: largest}
	l.once.Do(func() { l.t = t })
	return l
}

// Resolver turns the newest version of a user key into the value a level
// shows: the value itself, or an error for a version this package cannot
// resolve alone. Deletions never reach it.
type Resolver func(t *Table, user []byte, seq uint64, kind Kind, value []byte) ([]byte, error)

// Level is a merge.Level over tables whose user key ranges follow one
// another (a LevelDB or RocksDB level 1 or above, or one level 0 table):
// it shows each user key's newest version, a deletion (or a version
// under a newer range deletion of its own table) as the deletion mark.
// One user key's versions may continue from one table into the next, as
// compactions cut tables by size.
type Level struct {
	Tables  []*LazyTable
	Resolve Resolver // nil: values shown as stored
	// Spans says the tables may hold range deletions; false (LevelDB's
	// tables) spares NewSpanIter and SpanAt from opening them.
	Spans bool
}

var _ merge.PointGetter = (*Level)(nil)

// closedErr returns an error wrapping ErrClosed once the level's tables
// are closing (their owner, a DB, was closed), else nil: the answer of
// the moves and lookups that open no table, which would otherwise end
// silently.
func (l *Level) closedErr() error {
	if len(l.Tables) > 0 && l.Tables[0].closed.Load() {
		return fmt.Errorf("%s: %w", l.Tables[0].Path, ErrClosed)
	}
	return nil
}

// NewIter returns an iterator over the level within o's bounds, which it
// copies.
func (l *Level) NewIter(o *reader.IterOptions) merge.LevelIterator {
	it := &levelIter{l: l, ti: -1}
	if o != nil {
		it.lower = CopyBound(&it.lowerBuf, o.LowerBound)
		it.upper = CopyBound(&it.upperBuf, o.UpperBound)
	}
	return it
}

// CopyBound copies bound b into *buf, reused, and returns the copy: nil
// for nil (no bound), non-nil for an empty bound (one that is a bound).
// Iterators copy their bounds with it, as package reader's do.
func CopyBound(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	*buf = append((*buf)[:0], b...)
	if *buf == nil {
		*buf = []byte{}
	}
	return *buf
}

// NewSpanIter returns an iterator over the tables' range deletions, or
// nil when the level has none.
func (l *Level) NewSpanIter() merge.SpanIterator {
	if !l.Spans {
		return nil
	}
	var fs []*Fragments
	for _, lt := range l.Tables {
		t, err := lt.Get()
		if err != nil {
			return &spanIter{err: err}
		}
		if t.Spans != nil && len(t.Spans.frags) > 0 {
			fs = append(fs, t.Spans)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return newSpanIter(fs)
}

// SpanAt returns the range deletion fragment covering key, or
// reader.ErrNotFound.
func (l *Level) SpanAt(key []byte) (reader.Span, error) {
	if err := l.closedErr(); err != nil {
		return reader.Span{}, err
	}
	if !l.Spans {
		return reader.Span{}, reader.ErrNotFound
	}
	for _, lt := range l.Tables {
		t, err := lt.Get()
		if err != nil {
			return reader.Span{}, err
		}
		if t.Spans == nil {
			continue
		}
		if f, ok := t.Spans.at(key); ok {
			return f.span(), nil
		}
	}
	return reader.Span{}, reader.ErrNotFound
}

// Get returns key's newest version in the level: its value, or the
// deletion mark.
func (l *Level) Get(key []byte) ([]byte, error) {
	if err := l.closedErr(); err != nil {
		return nil, err
	}
	i := sort.Search(len(l.Tables), func(i int) bool { return bytes.Compare(l.Tables[i].Largest, key) >= 0 })
	for ; i < len(l.Tables) && bytes.Compare(l.Tables[i].Smallest, key) <= 0; i++ {
		t, err := l.Tables[i].Get()
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
		return l.show(t, key, e.Seq, e.Kind, e.Value)
	}
	return nil, reader.ErrNotFound
}

// show returns what the level shows for a user key whose newest version
// in table t is (seq, kind, value).
func (l *Level) show(t *Table, user []byte, seq uint64, kind Kind, value []byte) ([]byte, error) {
	if kind.IsDeletionKind() || t.Spans != nil && t.Spans.covers(user, seq) {
		return deletionMark[:], nil
	}
	if l.Resolve == nil {
		return value, nil
	}
	return l.Resolve(t, user, seq, kind, value)
}

// levelIter is a Level's iterator: the tables' iterators one after
// another (cat*), showing only the first, newest, version of each user
// key.
type levelIter struct {
	l            *Level
	lower, upper []byte // copies in the bufs; nil: unbounded
	ti           int    // current table; -1 none
	it           TableIterator
	open         bool // it is on table ti
	prefix       []byte
	inPrefix     bool
	saved        []byte
	value        []byte // what the level shows for the current key
	valid        bool
	err          error

	lowerBuf, upperBuf []byte
}

// table makes table i current, unpositioned.
func (li *levelIter) table(i int) bool {
	if li.err != nil {
		return false
	}
	if li.open && li.ti == i {
		return true
	}
	t, err := li.l.Tables[i].Get()
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
	for ; i < len(li.l.Tables); i++ {
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

func (li *levelIter) catLast() bool { return li.catBackwardFrom(len(li.l.Tables) - 1) }

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
	ts := li.l.Tables
	i := sort.Search(len(ts), func(i int) bool { return bytes.Compare(ts[i].Largest, key) >= 0 })
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
	ts := li.l.Tables
	i := sort.Search(len(ts), func(i int) bool { return bytes.Compare(ts[i].Smallest, key) >= 0 }) - 1
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
		// catNext, with the table's own move called directly (a call
		// less per entry, 3% of a scan with stepTop's).
		if !li.it.Next() && (li.failed() || !li.catForwardFrom(li.ti+1)) {
			return false
		}
		if !sameUserKey(li.it.user, li.saved) {
			return true
		}
	}
}

// sameUserKey is bytes.Equal, for skipVersions: most user keys follow
// one that differs from them in the last 8 bytes (decimal and binary
// counters, random keys), which one inlined load of each settles without
// the call of a byte comparison (5% of a scan of 16-byte keys).
func sameUserKey(a, b []byte) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n >= 8 && binary.LittleEndian.Uint64(a[n-8:]) != binary.LittleEndian.Uint64(b[n-8:]) {
		return false
	}
	return bytes.Equal(a, b)
}

func (li *levelIter) settle(ok bool) bool {
	if ok && li.inPrefix && !bytes.HasPrefix(li.it.user, li.prefix) {
		ok = false
	}
	if !ok && li.err == nil {
		li.err = li.l.closedErr() // a move that opened no table, after Close
	}
	if ok {
		if it := &li.it; !it.kind.IsDeletionKind() && it.t.Spans == nil && li.l.Resolve == nil {
			li.value = it.Value() // show's common case, without the call
		} else {
			v, err := li.l.show(it.t, it.user, it.seq, it.kind, it.Value())
			if err != nil {
				li.err, ok = err, false
			}
			li.value = v
		}
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
	ok := li.skipVersions()
	if it := &li.it; ok && !li.inPrefix && !it.kind.IsDeletionKind() && it.t.Spans == nil && li.l.Resolve == nil {
		li.value = it.Value() // settle's common case, without the call
		return true
	}
	return li.settle(ok)
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

// SeekPrefixGE moves as reader.Iterator's does: a key below the prefix
// seeks from the prefix.
func (li *levelIter) SeekPrefixGE(prefix, key []byte) bool {
	li.prefix, li.inPrefix = append(li.prefix[:0], prefix...), true
	if bytes.Compare(key, prefix) < 0 {
		key = prefix
	}
	return li.settle(li.catSeekGE(key))
}

// SeekPrefixLT moves as reader.Iterator's does: a key above the prefix's
// keys finds the last of them.
func (li *levelIter) SeekPrefixLT(prefix, key []byte) bool {
	li.prefix, li.inPrefix = append(li.prefix[:0], prefix...), true
	if !bytes.HasPrefix(key, prefix) && bytes.Compare(key, prefix) > 0 {
		end := PrefixSuccessor(prefix)
		if end == nil {
			return li.settle(li.newest(li.catLast()))
		}
		key = end
	}
	return li.settle(li.newest(li.catSeekLT(key)))
}

// PrefixSuccessor returns the least key above every key with prefix p,
// or nil when there is none (p is empty or all 0xff bytes).
func PrefixSuccessor(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			s := append([]byte(nil), p[:i+1]...)
			s[i]++
			return s
		}
	}
	return nil
}

func (li *levelIter) Key() []byte { return li.it.user }

func (li *levelIter) Value() []byte { return li.value }

func (li *levelIter) SetBounds(lower, upper []byte) {
	li.lower = CopyBound(&li.lowerBuf, lower)
	li.upper = CopyBound(&li.upperBuf, upper)
	li.it.lower, li.it.upper, li.it.valid = li.lower, li.upper, false
	li.valid, li.inPrefix = false, false
}

func (li *levelIter) Err() error { return li.err }

func (li *levelIter) Close() error {
	li.it.stopAhead()
	li.it.buf.release()
	li.open, li.valid = false, false
	return li.err
}

// DeletionMark returns the mark IsDeletion recognises, for levels of the
// format packages' own (a replayed log).
func DeletionMark() []byte { return deletionMark[:] }

// Covered reports whether a range deletion of the table newer than seq
// covers user key key.
func (t *Table) Covered(key []byte, seq uint64) bool {
	return t.Spans != nil && t.Spans.covers(key, seq)
}
