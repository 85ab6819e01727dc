package leveldb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// SectionBatch names a write batch, a log record, in corruption errors.
const SectionBatch = "write batch"

// memEntry is a user key's newest write replayed from the logs.
type memEntry struct {
	key, value []byte
	deleted    bool
}

// memLevel is the writes replayed from the write-ahead logs, newest per
// user key, sorted: the newest merge.Level of a DB.
type memLevel struct {
	entries []memEntry
	dir     string      // the database's, for closedError
	closed  atomic.Bool // the DB was closed: every read fails
}

// closedError is the error of a closed DB's reads, and of its memLevel's.
type closedError struct{ dir string }

func (e closedError) Error() string { return "leveldb: database " + e.dir + " is closed" }

// Unwrap returns ErrClosed.
func (e closedError) Unwrap() error { return ErrClosed }

// replay builds a memLevel from write batches, applied in log order.
type replay struct {
	ops     []memEntry // every write, in log order; keys and values alias the records
	lastSeq uint64
}

// apply decodes one write batch, a log record at off, with
// lsmdb.DecodeBatchInOrder: LevelDB's batches (db/write_batch.cc) are
// RocksDB's without column families, holding puts (kind 1) and deletions
// (kind 0) only; any other record is refused. On an error, the records
// before the bad one are applied, as LevelDB's recovery applies them.
// The entries alias rec, which must stay unchanged.
func (r *replay) apply(rec []byte, off int64) error {
	if len(rec) < 12 {
		return format.Corruptf(SectionBatch, off, "batch of %d bytes is shorter than its 12-byte header", len(rec))
	}
	seq := binary.LittleEndian.Uint64(rec)
	count := binary.LittleEndian.Uint32(rec[8:])
	if seq > MaxSequence || uint64(count) > MaxSequence-seq {
		return format.Corruptf(SectionBatch, off, "sequence number %d and count %d run past 2^56", seq, count)
	}
	r.ops = slices.Grow(r.ops, int(min(count, uint32((len(rec)-12)/2))))
	n := 0
	err := lsmdb.DecodeBatchInOrder(rec, off, func(op lsmdb.BatchOp) error {
		if op.Tag != uint8(KindValue) && op.Tag != uint8(KindDeletion) {
			return format.Corruptf(SectionBatch, off, "record %d: unknown kind %d", n, op.Tag)
		}
		n++
		// Never nil: a merge level's nil key means no key.
		r.ops = append(r.ops, memEntry{key: op.Key, value: op.Value, deleted: op.Kind == KindDeletion})
		return nil
	})
	if err != nil {
		return err
	}
	if count > 0 {
		r.lastSeq = max(r.lastSeq, seq+uint64(count)-1)
	}
	return nil
}

// noteSeq takes the sequence numbers of a batch that failed to apply
// as used, as LevelDB's recovery does with paranoid_checks off, when its
// header gives them.
func (r *replay) noteSeq(rec []byte) {
	if len(rec) < 12 {
		return
	}
	seq := binary.LittleEndian.Uint64(rec)
	count := binary.LittleEndian.Uint32(rec[8:])
	if count > 0 && seq <= MaxSequence && uint64(count) <= MaxSequence-seq {
		r.lastSeq = max(r.lastSeq, seq+uint64(count)-1)
	}
}

// level returns the writes as a memLevel's entries: sorted by key, the
// last write of each key kept.
func (r *replay) level() []memEntry {
	// Sort positions with an 8-byte fence of each key (after the bytes
	// every key shares): swaps move 16 bytes, not a 56-byte entry, and
	// most comparisons are of two integers. Ties sort by position, so a
	// key's last write ends its run.
	skip := 0
	if len(r.ops) > 0 {
		first := r.ops[0].key
		skip = len(first)
		for _, e := range r.ops[1:] {
			n := 0
			for n < skip && n < len(e.key) && e.key[n] == first[n] {
				n++
			}
			skip = n
		}
	}
	type pos struct {
		fence uint64
		i     int32
	}
	ps := make([]pos, len(r.ops))
	for i, e := range r.ops {
		ps[i] = pos{lsmtable.Fence(e.key, skip), int32(i)}
	}
	slices.SortFunc(ps, func(a, b pos) int {
		if a.fence != b.fence {
			return cmp.Compare(a.fence, b.fence)
		}
		if c := bytes.Compare(r.ops[a.i].key, r.ops[b.i].key); c != 0 {
			return c
		}
		return int(a.i - b.i)
	})
	out := make([]memEntry, 0, len(ps))
	for j, p := range ps {
		if j+1 < len(ps) && bytes.Equal(r.ops[ps[j+1].i].key, r.ops[p.i].key) {
			continue // a later write of the same key follows
		}
		out = append(out, r.ops[p.i])
	}
	return out
}

// NewIter returns an iterator over the level within o's bounds, which it
// copies, as reader.Reader.NewIter does.
func (m *memLevel) NewIter(o *reader.IterOptions) merge.LevelIterator {
	it := &memIter{m: m, i: -1}
	if o != nil {
		it.SetBounds(o.LowerBound, o.UpperBound)
	}
	return it
}

func (m *memLevel) NewSpanIter() merge.SpanIterator { return nil }

func (m *memLevel) Get(key []byte) ([]byte, error) {
	if m.closed.Load() {
		return nil, closedError{m.dir}
	}
	i := sort.Search(len(m.entries), func(i int) bool { return bytes.Compare(m.entries[i].key, key) >= 0 })
	if i == len(m.entries) || !bytes.Equal(m.entries[i].key, key) {
		return nil, reader.ErrNotFound
	}
	if m.entries[i].deleted {
		return lsmtable.DeletionMark(), nil
	}
	return append([]byte(nil), m.entries[i].value...), nil
}

func (m *memLevel) SpanAt(key []byte) (reader.Span, error) {
	if m.closed.Load() {
		return reader.Span{}, closedError{m.dir}
	}
	return reader.Span{}, reader.ErrNotFound
}

// memIter is a memLevel's iterator: an index into its sorted entries.
type memIter struct {
	m                  *memLevel
	lower, upper       []byte // copies in the bufs; nil: unbounded
	lowerBuf, upperBuf []byte
	prefix             []byte
	inPrefix           bool
	i                  int
	err                error
}

// at moves to entry i, if it lies within the bounds (and the prefix).
func (it *memIter) at(i int) bool {
	it.i = i
	if it.m.closed.Load() {
		it.err, it.i = closedError{it.m.dir}, -1
		return false
	}
	if i < 0 || i >= len(it.m.entries) {
		it.i = -1
		return false
	}
	k := it.m.entries[i].key
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 || it.upper != nil && bytes.Compare(k, it.upper) >= 0 ||
		it.inPrefix && !bytes.HasPrefix(k, it.prefix) {
		it.i = -1
		return false
	}
	return true
}

func (it *memIter) search(key []byte) int {
	return sort.Search(len(it.m.entries), func(i int) bool { return bytes.Compare(it.m.entries[i].key, key) >= 0 })
}

func (it *memIter) seekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.at(it.search(key))
}

func (it *memIter) seekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.at(it.search(key) - 1)
}

func (it *memIter) First() bool {
	it.inPrefix = false
	if it.lower != nil {
		return it.seekGE(it.lower)
	}
	return it.at(0)
}

func (it *memIter) Last() bool {
	it.inPrefix = false
	return it.last()
}

// last moves to the last entry below the upper bound.
func (it *memIter) last() bool {
	if it.upper != nil {
		return it.seekLT(it.upper)
	}
	return it.at(len(it.m.entries) - 1)
}

func (it *memIter) Next() bool {
	if it.i < 0 {
		return false
	}
	return it.at(it.i + 1)
}

func (it *memIter) Prev() bool {
	if it.i < 0 {
		return false
	}
	return it.at(it.i - 1)
}

func (it *memIter) SeekGE(key []byte) bool { it.inPrefix = false; return it.seekGE(key) }
func (it *memIter) SeekLT(key []byte) bool { it.inPrefix = false; return it.seekLT(key) }

// SeekPrefixGE moves as reader.Iterator's does: a key below the prefix
// seeks from the prefix.
func (it *memIter) SeekPrefixGE(prefix, key []byte) bool {
	it.prefix, it.inPrefix = append(it.prefix[:0], prefix...), true
	if bytes.Compare(key, prefix) < 0 {
		key = prefix
	}
	return it.seekGE(key)
}

// SeekPrefixLT moves as reader.Iterator's does: a key above the prefix's
// keys finds the last of them; one at or below the prefix finds none.
func (it *memIter) SeekPrefixLT(prefix, key []byte) bool {
	it.prefix, it.inPrefix = append(it.prefix[:0], prefix...), true
	if !bytes.HasPrefix(key, prefix) && bytes.Compare(key, prefix) > 0 {
		if key = lsmtable.PrefixSuccessor(prefix); key == nil {
			return it.last() // no key lies above them all
		}
	}
	return it.seekLT(key)
}

func (it *memIter) Key() []byte {
	if it.i < 0 {
		return nil
	}
	return it.m.entries[it.i].key
}

func (it *memIter) Value() []byte {
	if it.i < 0 {
		return nil
	}
	if e := &it.m.entries[it.i]; !e.deleted {
		return e.value
	}
	return lsmtable.DeletionMark()
}

// SetBounds copies the bounds, as reader.Iterator's does.
func (it *memIter) SetBounds(lower, upper []byte) {
	it.lower = lsmtable.CopyBound(&it.lowerBuf, lower)
	it.upper = lsmtable.CopyBound(&it.upperBuf, upper)
	it.inPrefix, it.i = false, -1
}

func (it *memIter) Err() error   { return it.err }
func (it *memIter) Close() error { it.i = -1; return it.err }
