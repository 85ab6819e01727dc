package main

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
)

// Workload shape: 16-byte keys and 100-byte values, as in cmd/compare.
const (
	keyLen   = 16
	valueLen = 100
)

// text is the compressible tail of every value (the head is random
// bytes), so that snappy has something to compress and something it
// cannot.
const text = "It was the best of times, it was the worst of times, it was the age of " +
	"wisdom, it was the age of foolishness, it was the epoch of belief, it was " +
	"the epoch of incredulity, it was the season of Light, it was the season " +
	"of Darkness, it was the spring of hope, it was the winter of despair. "

// randomHead is how many leading bytes of a value are random.
const randomHead = valueLen / 2

// span is a range deletion over key indexes [lo, hi) of the key space:
// the keys [space.key(lo), space.key(hi)).
type span struct{ lo, hi int }

// table is one table's logical contents: the key indexes it holds (in
// increasing order, each with the value value(t, j)) and its range
// deletions (sorted, disjoint and not adjacent, none covering one of the
// table's own keys).
type table struct {
	keys  []int32
	spans []span
}

// workload is the logical data every library stores in its own format:
// tables[0] the oldest, tables[len-1] the newest.
type workload struct {
	space  []byte // the key space: nkeys sorted keys, keyLen bytes each
	nkeys  int
	tables []table

	// The live view, by key index: newest[j] is the newest table holding
	// key j (-1 for none), live[j] whether key j is visible (held, and no
	// newer table's range deletion covers it).
	newest []int8
	live   []bool
	nlive  int

	oldOnly []byte  // keys held by the oldest table only and visible, in random order, keyLen bytes each
	oldIdx  []int32 // their key indexes
	nold    int     // distinct such keys (oldOnly repeats them when there are fewer than the lookups)
	absent  []byte  // keys in no table, in random order
	seeks   []byte  // random seek keys (absent from every table: they fall between keys)
	sample  []int32 // live key indexes whose values are cross-checked
}

func (w *workload) key(j int) []byte { return w.space[j*keyLen : (j+1)*keyLen : (j+1)*keyLen] }

func keyAt(buf []byte, j int) []byte { return buf[j*keyLen : (j+1)*keyLen : (j+1)*keyLen] }

// value is table t's value for key index j: 50 random bytes derived from
// (t, j), then 50 bytes of text, so that a key's values differ from table
// to table and shadowing shows.
func value(dst []byte, t, j int) []byte {
	dst = dst[:0]
	x := uint64(t)<<40 | uint64(j)
	for len(dst) < randomHead {
		x = mix(x)
		dst = binary.LittleEndian.AppendUint64(dst, x)
	}
	dst = dst[:randomHead]
	off := (j*37 + t*11) % (len(text) - (valueLen - randomHead))
	return append(dst, text[off:off+valueLen-randomHead]...)
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// params shape a workload.
type params struct {
	tables, entries int     // tables, and entries per table
	keySpace        int     // distinct keys the tables draw from
	rangeDels       int     // range deletions per table (before merging those that touch)
	delFrac         float64 // fraction of the key space each table's range deletions cover
	lookups, seeks  int     // keys per Get measurement, seeks per SeekGE measurement
	samples         int     // live keys whose values are cross-checked by Get
}

// newWorkload generates the tables. Each table draws its keys uniformly
// from one shared key space of p.keySpace sorted random keys (so with 8
// tables of 250k keys over 1M keys a key is in about 2 tables, with a
// different value in each), after placing p.rangeDels range deletions of
// equal width covering p.delFrac of the key space at random, and
// leaving the keys under its own range deletions out: a range deletion
// hides the keys of older tables only, and no library need decide what
// one does to its own table's keys. Everything derives from fixed seeds.
func newWorkload(p params) *workload {
	rng := rand.New(rand.NewPCG(0x3e76e, 0x5eed))
	n := p.keySpace
	ks := make([]key128, 0, n+n/64)
	for len(ks) < n {
		for len(ks) < n {
			ks = append(ks, key128{rng.Uint64(), rng.Uint64() &^ 1}) // present keys: low bit clear
		}
		slices.SortFunc(ks, key128.cmp)
		ks = slices.Compact(ks)
	}
	w := &workload{space: make([]byte, n*keyLen), nkeys: n, tables: make([]table, p.tables)}
	for j, k := range ks {
		k.put(w.space[j*keyLen:])
	}

	width := max(1, int(float64(n)*p.delFrac)/max(1, p.rangeDels))
	covered := make([]bool, n)
	spanTop := make([]int8, n) // the newest table whose range deletion covers the key; -1 none
	w.newest = make([]int8, n)
	for j := range n {
		spanTop[j], w.newest[j] = -1, -1
	}
	perm := make([]int32, n)
	for t := range w.tables {
		tb := &w.tables[t]
		clear(covered)
		var raw []span
		for range p.rangeDels {
			if n <= width+1 {
				break
			}
			lo := rng.IntN(n - width - 1)
			raw = append(raw, span{lo, lo + width})
		}
		slices.SortFunc(raw, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
		for _, s := range raw { // merge the overlapping and adjacent: Pebble's DeleteRange wants fragments
			if k := len(tb.spans); k > 0 && s.lo <= tb.spans[k-1].hi {
				tb.spans[k-1].hi = max(tb.spans[k-1].hi, s.hi)
				continue
			}
			tb.spans = append(tb.spans, s)
		}
		for _, s := range tb.spans {
			for j := s.lo; j < s.hi; j++ {
				covered[j] = true
				spanTop[j] = int8(t)
			}
		}
		for i := range perm {
			perm[i] = int32(i)
		}
		// A partial Fisher-Yates shuffle: the first picks are a uniform
		// sample without replacement.
		for i := 0; i < n && len(tb.keys) < p.entries; i++ {
			r := i + rng.IntN(n-i)
			perm[i], perm[r] = perm[r], perm[i]
			if !covered[perm[i]] {
				tb.keys = append(tb.keys, perm[i])
			}
		}
		slices.Sort(tb.keys)
		for _, j := range tb.keys {
			w.newest[j] = int8(t)
		}
	}

	w.live = make([]bool, n)
	var oldOnly []int32
	for j := range n {
		if w.newest[j] >= 0 && spanTop[j] < w.newest[j] {
			w.live[j] = true
			w.nlive++
		}
	}
	for _, j := range w.tables[0].keys {
		if w.newest[j] == 0 && w.live[j] {
			oldOnly = append(oldOnly, j)
		}
	}
	rng.Shuffle(len(oldOnly), func(a, b int) { oldOnly[a], oldOnly[b] = oldOnly[b], oldOnly[a] })
	w.nold = len(oldOnly)

	w.oldOnly = make([]byte, p.lookups*keyLen)
	if len(oldOnly) == 0 {
		w.oldOnly = nil
	}
	for i := range p.lookups {
		if len(oldOnly) == 0 {
			break
		}
		j := oldOnly[i%len(oldOnly)] // repeats when there are fewer
		copy(w.oldOnly[i*keyLen:], w.key(int(j)))
		w.oldIdx = append(w.oldIdx, j)
	}
	w.absent = make([]byte, p.lookups*keyLen)
	for i := range p.lookups {
		key128{rng.Uint64(), rng.Uint64() | 1}.put(w.absent[i*keyLen:]) // low bit set: in no table
	}
	w.seeks = make([]byte, p.seeks*keyLen)
	for i := range p.seeks {
		key128{rng.Uint64(), rng.Uint64() | 1}.put(w.seeks[i*keyLen:])
	}
	for len(w.sample) < p.samples && w.nlive > 0 {
		if j := rng.IntN(n); w.live[j] {
			w.sample = append(w.sample, int32(j))
		}
	}
	return w
}

type key128 struct{ hi, lo uint64 }

func (a key128) cmp(b key128) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

func (k key128) put(dst []byte) {
	binary.BigEndian.PutUint64(dst, k.hi)
	binary.BigEndian.PutUint64(dst[8:], k.lo)
}

// rawBytes is the key and value bytes of every table's entries.
func (w *workload) rawBytes() int64 {
	var n int64
	for _, t := range w.tables {
		n += int64(len(t.keys)) * (keyLen + valueLen)
	}
	return n
}

// entries is the number of entries of every table together (duplicates
// counted).
func (w *workload) entries() int {
	n := 0
	for _, t := range w.tables {
		n += len(t.keys)
	}
	return n
}

// spanKeys returns the keys of s: its start and (exclusive) end.
func (w *workload) spanKeys(s span) (start, end []byte) { return w.key(s.lo), w.key(s.hi) }
