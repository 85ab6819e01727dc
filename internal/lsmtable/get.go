package lsmtable

import (
	"bytes"
	"sync"

	"github.com/sstkit/sstable/reader"
)

// Entry is one version of a user key, as Table.Get returns it.
type Entry struct {
	Key   []byte // the user key
	Seq   uint64 // the write's sequence number
	Kind  Kind   // KindValue, or KindDeletion (Value then empty)
	Value []byte // the value, a copy the caller owns
}

var iterPool = sync.Pool{New: func() any { return new(TableIterator) }}

// Get returns the newest version of user key key whose sequence number is
// at or below seq (MaxSequence: the newest of all). A deletion is
// returned as such, with Kind KindDeletion. It consults the table's bloom
// filter first (when it has LevelDB's), and returns reader.ErrNotFound
// when the table holds no such version; otherwise an error wrapping
// format.ErrCorrupt for damage met, or a read error. The entry's Key and
// Value are a copy the caller owns (one allocation for both).
func (t *Table) Get(key []byte, seq uint64) (Entry, error) {
	return t.lookup(nil, key, seq, true)
}

// GetAppend is Get without the allocation: the entry's Value is dst with
// the value appended (by append's rules), and its Key is key itself. A
// caller that passes the last Value[:0] back as dst reads every value
// into one buffer.
func (t *Table) GetAppend(dst, key []byte, seq uint64) (Entry, error) {
	return t.lookup(dst, key, seq, false)
}

// lookup is Get (copy: a new allocation) and GetAppend (dst).
func (t *Table) lookup(dst, key []byte, seq uint64, copyOut bool) (Entry, error) {
	// A whole-table filter (RocksDB's full and partitioned ones) is asked
	// before anything else: an absent key then costs a hash and a probe,
	// not an iterator's setup; a present key's probe miss overlaps the
	// setup that follows, the branch predicted to pass.
	if t.KeyFilter != nil {
		if t.closed.Load() {
			return Entry{}, t.Named(ErrClosed)
		}
		if pass, err := t.keyFilterPasses(key); err != nil || !pass {
			if err == nil {
				err = reader.ErrNotFound
			}
			return Entry{}, err
		}
	}
	it := iterPool.Get().(*TableIterator)
	defer func() {
		it.buf.release()
		iterPool.Put(it) // it keeps t until its next use: a pool holds no table alive past a GC
	}()
	*it = TableIterator{t: t, i: -1, seek: it.seek[:0], blk: it.blk, buf: it.buf}
	found, err := it.get(key, min(seq, MaxSequence))
	if err != nil || !found {
		if err == nil {
			err = reader.ErrNotFound
		}
		return Entry{}, err
	}
	v := it.Value()
	if !copyOut {
		return Entry{Key: key, Seq: it.seq, Kind: it.kind, Value: append(dst, v...)}, nil
	}
	buf := make([]byte, len(key)+len(v)) // one allocation for both
	copy(buf, key)
	copy(buf[len(key):], v)
	return Entry{
		Key:   buf[:len(key):len(key)],
		Seq:   it.seq,
		Kind:  it.kind,
		Value: buf[len(key):],
	}, nil
}

// keyFilterPasses asks the table's whole-table filter about key, guarded
// against a fault in the mapping the filter's bits may lie in.
func (t *Table) keyFilterPasses(key []byte) (pass bool, err error) {
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	return t.KeyFilter(key), nil
}

// get positions it on key's newest version at or below seq, if the table
// holds one. The caller has asked the whole-table filter (KeyFilter), if
// any.
func (it *TableIterator) get(key []byte, seq uint64) (found bool, err error) {
	t := it.t
	if t.closed.Load() {
		return false, t.Named(ErrClosed)
	}
	if t.HasGlobalSeq {
		if seq < t.GlobalSeq {
			return false, nil
		}
		seq = MaxSequence
	}
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	it.seek = t.appendSeekKey(it.seek[:0], key, seq)
	// A per-block filter (LevelDB's) needs the block's offset: it is
	// asked after the index search.
	i := t.Index.Search(it.seek)
	if i >= t.Index.Len() {
		return false, nil
	}
	if t.Filter != nil && !t.Filter.MayContain(t.Index.handles[i].Offset, key) {
		return false, nil
	}
	if !it.load(i) {
		return false, it.err
	}
	if s := it.buf.side; s != nil {
		switch it.sideSeek(s, key, true) {
		case sidePositioned:
			return bytes.Equal(it.user, key), nil
		case sideAbsent:
			return false, nil
		}
		if it.err != nil {
			return false, it.err
		}
	}
	if !it.forward(it.seekBlock(it.seek)) {
		return false, it.err
	}
	return bytes.Equal(it.user, key), nil
}
