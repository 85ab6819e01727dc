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
// format.ErrCorrupt for damage met, or a read error.
func (t *Table) Get(key []byte, seq uint64) (Entry, error) {
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

// get positions it on key's newest version at or below seq, if the table
// holds one.
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
	// The filter's probe, then at once the index search: with nothing
	// between them (no call into the runtime), the CPU starts the search's
	// loads while the probe's cache miss is outstanding, and a present key
	// pays for the two misses together. An absent key pays for the setup
	// above only.
	if t.KeyFilter != nil && !t.KeyFilter(key) {
		return false, nil
	}
	i := t.Index.Search(it.seek)
	if i >= t.Index.Len() {
		return false, nil
	}
	if t.Filter != nil && !t.Filter.MayContain(t.Index.handles[i].Offset, key) {
		return false, nil
	}
	if !it.load(i) || !it.forward(it.seekBlock(it.seek)) {
		return false, it.err
	}
	return bytes.Equal(it.user, key), nil
}
