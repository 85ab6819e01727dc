package lsmtable

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/sstkit/sstable/reader"
)

// RangeDel is one range deletion as a table stores it: the user keys in
// [Start, End) deleted as of Seq.
type RangeDel struct {
	Start, End []byte
	Seq        uint64
}

// Fragments are a table's range deletions cut where any of them starts
// or ends, as RocksDB's FragmentedRangeTombstoneList does: sorted, not
// overlapping, each with the largest sequence number of the deletions
// over it.
type Fragments struct {
	frags []fragment
}

type fragment struct {
	start, end []byte
	seq        uint64   // the largest sequence number over the fragment
	value      [][]byte // the span's value: seq, 8 bytes big-endian
}

func (f *fragment) span() reader.Span {
	return reader.Span{Start: f.start, End: f.end, Values: f.value}
}

// Fragment cuts dels (any order, overlapping or not; empty ranges
// ignored) into fragments, in bytewise order of user keys.
func Fragment(dels []RangeDel) *Fragments {
	var bounds [][]byte
	for _, d := range dels {
		if bytes.Compare(d.Start, d.End) < 0 {
			bounds = append(bounds, d.Start, d.End)
		}
	}
	sort.Slice(bounds, func(i, j int) bool { return bytes.Compare(bounds[i], bounds[j]) < 0 })
	uniq := bounds[:0]
	for i, b := range bounds {
		if i == 0 || !bytes.Equal(b, uniq[len(uniq)-1]) {
			uniq = append(uniq, b)
		}
	}
	sorted := append([]RangeDel(nil), dels...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].Start, sorted[j].Start) < 0 })
	f := &Fragments{}
	var active []RangeDel
	next := 0
	for i := 0; i+1 < len(uniq); i++ {
		lo, hi := uniq[i], uniq[i+1]
		for next < len(sorted) && bytes.Compare(sorted[next].Start, lo) <= 0 {
			if bytes.Compare(sorted[next].Start, sorted[next].End) < 0 {
				active = append(active, sorted[next])
			}
			next++
		}
		kept := active[:0]
		var seq uint64
		any := false
		for _, d := range active {
			if bytes.Compare(d.End, lo) > 0 {
				kept = append(kept, d)
				if !any || d.Seq > seq {
					seq = d.Seq
				}
				any = true
			}
		}
		active = kept
		if any {
			f.frags = append(f.frags, fragment{start: lo, end: hi, seq: seq, value: [][]byte{binary.BigEndian.AppendUint64(nil, seq)}})
		}
	}
	return f
}

// Len returns the number of fragments.
func (f *Fragments) Len() int { return len(f.frags) }

// at returns the fragment covering key.
func (f *Fragments) at(key []byte) (*fragment, bool) {
	i := sort.Search(len(f.frags), func(i int) bool { return bytes.Compare(f.frags[i].end, key) > 0 })
	if i < len(f.frags) && bytes.Compare(f.frags[i].start, key) <= 0 {
		return &f.frags[i], true
	}
	return nil, false
}

// covers reports whether a range deletion newer than seq covers key: a
// deletion hides the points of its own table with smaller sequence
// numbers only (RocksDB's rule; a point at the deletion's own number
// stands).
func (f *Fragments) covers(key []byte, seq uint64) bool {
	fr, ok := f.at(key)
	return ok && fr.seq > seq
}

// spanIter walks the fragments of one or more tables whose key ranges
// follow one another, as merge.SpanIterator.
type spanIter struct {
	frags []*fragment
	i     int // current; -1 before the first, len past the last
	err   error
}

func newSpanIter(fs []*Fragments) *spanIter {
	it := &spanIter{i: -1}
	for _, f := range fs {
		for j := range f.frags {
			it.frags = append(it.frags, &f.frags[j])
		}
	}
	return it
}

func (it *spanIter) at(i int) bool {
	it.i = max(-1, min(i, len(it.frags)))
	return it.err == nil && it.i >= 0 && it.i < len(it.frags)
}

func (it *spanIter) First() bool { return it.at(0) }
func (it *spanIter) Last() bool  { return it.at(len(it.frags) - 1) }
func (it *spanIter) Next() bool  { return it.at(it.i + 1) }
func (it *spanIter) Prev() bool {
	return it.at(it.i - 1)
}

func (it *spanIter) SeekGE(key []byte) bool {
	return it.at(sort.Search(len(it.frags), func(i int) bool { return bytes.Compare(it.frags[i].end, key) > 0 }))
}

func (it *spanIter) SeekLT(key []byte) bool {
	return it.at(sort.Search(len(it.frags), func(i int) bool { return bytes.Compare(it.frags[i].start, key) >= 0 }) - 1)
}

func (it *spanIter) Span() reader.Span { return it.frags[it.i].span() }
func (it *spanIter) Err() error        { return it.err }
func (it *spanIter) Close() error      { return it.err }

// Clip returns the fragments cut to [lo, hi) (hi nil: unbounded above),
// as RocksDB truncates a table's range deletions to the key range its
// MANIFEST gives the table (db/range_del_aggregator.cc,
// TruncatedRangeDelIterator): a deletion stored past a table's bounds,
// which compactions leave behind, hides nothing there.
func (f *Fragments) Clip(lo, hi []byte) *Fragments {
	out := &Fragments{}
	for _, fr := range f.frags {
		start, end := fr.start, fr.end
		if bytes.Compare(start, lo) < 0 {
			start = lo
		}
		if hi != nil && bytes.Compare(end, hi) > 0 {
			end = hi
		}
		if bytes.Compare(start, end) < 0 {
			fr.start, fr.end = start, end
			out.frags = append(out.frags, fr)
		}
	}
	return out
}
