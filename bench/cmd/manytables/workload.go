package main

import (
	"encoding/binary"
	"math"
)

// Workload shape, as in cmd/compare: 16-byte keys and 100-byte values,
// the first half of a value pseudo-random bytes and the second half a
// slice of English text, so that snappy has something to compress and
// something it cannot.
const (
	keyLen       = 16
	valueLen     = 100
	randomPrefix = valueLen / 2
)

// text is the compressible half of every value (cmd/compare's text).
const text = "It was the best of times, it was the worst of times, it was the age of " +
	"wisdom, it was the age of foolishness, it was the epoch of belief, it was " +
	"the epoch of incredulity, it was the season of Light, it was the season " +
	"of Darkness, it was the spring of hope, it was the winter of despair. "

// Limits that keep (table, entry) packable into one 64-bit mixer input.
const (
	maxTables  = 1 << 24
	maxEntries = 1 << 31
)

// workload describes the tables' contents without holding them: entry j
// of table t, its key and its value, and an absent key near it are all
// computed from (t, j) on demand, so that neither the builder nor the
// measuring process keeps the key set (200 × 50,000 keys would be 160 MB).
//
// Keys are two big-endian 64-bit words hi, lo. Entry j has
//
//	hi = j*spacing + jitter,            jitter  < spacing/2
//	lo = pseudo-random
//
// so keys are sorted in j yet spread over the whole key space like sorted
// random keys, and differ from table to table. The absent key next to
// entry j has hi = j*spacing + spacing/2 + jitter' (jitter' < spacing/2)
// and a random lo: it looks just as random, yet its hi lies strictly
// between those of entries j and j+1, so it can never equal a present key.
type workload struct {
	tables, entries int
	spacing         uint64 // math.MaxUint64 / entries
	presentPct      int    // the share of Gets that look up present keys, in percent
}

// newWorkload returns the workload of tables tables of entries entries
// each, with half the Gets of present keys (set presentPct for another
// share).
func newWorkload(tables, entries int) workload {
	return workload{tables: tables, entries: entries, spacing: math.MaxUint64 / uint64(entries), presentPct: 50}
}

// splitmix64 is SplitMix64's output function: a cheap, well-mixing
// bijection of 64-bit words.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Streams of pseudo-random words per entry.
const (
	streamPresentHi = iota
	streamPresentLo
	streamAbsentHi
	streamAbsentLo
	streamValue // streamValue+0 .. streamValue+6: the value's random bytes
)

// mix returns the stream'th pseudo-random word of entry j of table t.
func mix(t, j int, stream uint64) uint64 {
	base := splitmix64(uint64(t)<<32 | uint64(j))
	return splitmix64(base + stream*0xd1b54a32d192ed03)
}

// presentKey writes entry j's key of table t into dst[:keyLen].
func (w workload) presentKey(dst []byte, t, j int) {
	half := w.spacing / 2
	binary.BigEndian.PutUint64(dst[:8], uint64(j)*w.spacing+mix(t, j, streamPresentHi)%half)
	binary.BigEndian.PutUint64(dst[8:keyLen], mix(t, j, streamPresentLo))
}

// absentKey writes into dst[:keyLen] a key of table t that lies between
// entries j and j+1 (after the last entry for j = entries-1).
func (w workload) absentKey(dst []byte, t, j int) {
	half := w.spacing / 2
	binary.BigEndian.PutUint64(dst[:8], uint64(j)*w.spacing+half+mix(t, j, streamAbsentHi)%half)
	binary.BigEndian.PutUint64(dst[8:keyLen], mix(t, j, streamAbsentLo))
}

// value writes entry j's value of table t into dst[:valueLen].
func (w workload) value(dst []byte, t, j int) {
	var word [8]byte
	for i := 0; i < randomPrefix; i += 8 {
		binary.LittleEndian.PutUint64(word[:], mix(t, j, streamValue+uint64(i/8)))
		copy(dst[i:randomPrefix], word[:])
	}
	off := (t*7919 + j*37) % (len(text) - (valueLen - randomPrefix))
	copy(dst[randomPrefix:valueLen], text[off:])
}

// rawBytes is the total size of one table's keys and values.
func (w workload) rawBytes() int64 { return int64(w.entries) * (keyLen + valueLen) }

// rng is a per-goroutine SplitMix64 generator: no allocation, no sharing.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a uniform int in [0, n) from the high 32 bits of x
// (n < 2^32).
func below(x uint64, n int) int { return int((x >> 32) * uint64(n) >> 32) }
