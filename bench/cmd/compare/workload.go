package main

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
)

// Workload shape. Keys are 16 bytes in one of two shapes (keyShape): random
// bytes (deterministic, from a fixed seed) or sequential decimal numbers,
// sorted in bytes.Compare order; values are 100 bytes, the
// first half random bytes and the second half a slice of English text, so
// that snappy has something to compress and something it cannot.
const (
	keyLen       = 16
	valueLen     = 100
	randomPrefix = valueLen / 2
)

// text is the compressible half of every value; value i takes 50 bytes of
// it starting at a position that depends on i.
const text = "It was the best of times, it was the worst of times, it was the age of " +
	"wisdom, it was the age of foolishness, it was the epoch of belief, it was " +
	"the epoch of incredulity, it was the season of Light, it was the season " +
	"of Darkness, it was the spring of hope, it was the winter of despair. "

// dataset is the table contents and the lookup keys, shared by every
// implementation.
type dataset struct {
	n      int
	keys   []byte // n sorted keys, keyLen bytes each
	values []byte // n values, valueLen bytes each, values[i] belongs to keys[i]

	hits    []int32 // indexes of present keys to look up, in random order
	hitKeys []byte  // the keys of hits, in the same order, keyLen bytes each
	misses  []byte  // len(hits) absent keys, keyLen bytes each, in random order
}

func (d *dataset) key(i int) []byte { return d.keys[i*keyLen : (i+1)*keyLen : (i+1)*keyLen] }

func (d *dataset) value(i int) []byte {
	return d.values[i*valueLen : (i+1)*valueLen : (i+1)*valueLen]
}

// hitKey is the j'th present key to look up. The lookup keys are stored
// contiguously in lookup order, so that fetching the probe key is not
// itself a cache miss charged to the implementation.
func (d *dataset) hitKey(j int) []byte {
	return d.hitKeys[j*keyLen : (j+1)*keyLen : (j+1)*keyLen]
}

func (d *dataset) missKey(j int) []byte {
	return d.misses[j*keyLen : (j+1)*keyLen : (j+1)*keyLen]
}

// rawBytes is the total size of the keys and values: the numerator of
// build throughput.
func (d *dataset) rawBytes() int64 { return int64(d.n) * (keyLen + valueLen) }

// keyShape names how keys are drawn.
type keyShape string

const (
	// randomKeys are 16 uniformly random bytes: keys share almost no
	// prefix, the hardest case for prefix compression.
	randomKeys keyShape = "random"
	// sequentialKeys are fmt's %016d of 2i (present) and 2i+1 (absent):
	// the decimal row ids of an append-mostly store, where neighbouring keys
	// share 13 to 15 bytes.
	sequentialKeys keyShape = "sequential"
)

type key128 struct{ hi, lo uint64 }

// randomKey draws a key. Present keys have the lowest bit of their last
// byte clear and absent keys have it set, so an absent key can never
// collide with a present one, yet both look uniformly random (no
// near-neighbour structure that would favour one filter design).
func randomKey(rng *rand.Rand, present bool) key128 {
	k := key128{rng.Uint64(), rng.Uint64() &^ 1}
	if !present {
		k.lo |= 1
	}
	return k
}

func (k key128) put(dst []byte) {
	binary.BigEndian.PutUint64(dst, k.hi)
	binary.BigEndian.PutUint64(dst[8:], k.lo)
}

// newDataset generates n entries and lookups present and lookups absent
// keys (lookups is capped at n). Everything derives from fixed seeds, so
// every run and every implementation sees the same bytes.
func newDataset(n, lookups int, shape keyShape) *dataset {
	rng := rand.New(rand.NewPCG(0x5eed, 0x55ab1e))
	var ks []key128
	if shape != sequentialKeys {
		ks = make([]key128, n)
		for i := range ks {
			ks[i] = randomKey(rng, true)
		}
		slices.SortFunc(ks, func(a, b key128) int {
			if c := cmp.Compare(a.hi, b.hi); c != 0 {
				return c
			}
			return cmp.Compare(a.lo, b.lo)
		})
		ks = slices.Compact(ks) // a duplicate among 2^127 values is all but impossible
		n = len(ks)
	}

	d := &dataset{n: n, keys: make([]byte, n*keyLen), values: make([]byte, n*valueLen)}
	for i := 0; i < n; i++ {
		if shape == sequentialKeys {
			putDecimal(d.keys[i*keyLen:], uint64(2*i))
		} else {
			ks[i].put(d.keys[i*keyLen:])
		}
		v := d.values[i*valueLen : (i+1)*valueLen]
		for j := 0; j < randomPrefix; j += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], rng.Uint64())
			copy(v[j:randomPrefix], w[:])
		}
		off := (i * 37) % (len(text) - (valueLen - randomPrefix))
		copy(v[randomPrefix:], text[off:])
	}

	lookups = min(lookups, n)
	perm := rng.Perm(n)
	d.hits = make([]int32, lookups)
	d.hitKeys = make([]byte, lookups*keyLen)
	for j := range d.hits {
		d.hits[j] = int32(perm[j])
		copy(d.hitKeys[j*keyLen:], d.key(perm[j]))
	}
	d.misses = make([]byte, lookups*keyLen)
	for j := 0; j < lookups; j++ {
		if shape == sequentialKeys {
			putDecimal(d.misses[j*keyLen:], uint64(2*rng.IntN(n)+1))
		} else {
			randomKey(rng, false).put(d.misses[j*keyLen:])
		}
	}
	return d
}

// putDecimal writes v as keyLen decimal digits, zero-padded (fmt's %016d).
func putDecimal(dst []byte, v uint64) {
	for i := keyLen - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}
