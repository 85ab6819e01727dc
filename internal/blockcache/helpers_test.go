package blockcache

import (
	"bytes"
	"math/rand/v2"
	"sync"
)

// Block contents in the tests are windows of one random buffer: block i of
// table id at version v holds patternBase[off:][:n] with off derived from
// (id, i, v). Filling and checking are then one copy and one compare,
// which stay cheap under -race, and two versions of a block, or two
// blocks, differ in content unless their offsets collide (1 in 65536).
const (
	patternOffsets = 1 << 16
	patternMax     = 4 << 20 // the largest block a test fills
)

var (
	patternOnce sync.Once
	patternBase []byte
)

func patternOff(id uint64, i int, v uint32) int {
	h := (id*0x9e3779b97f4a7c15 ^ uint64(i)*0xc2b2ae3d27d4eb4f ^ uint64(v)*0x165667b19e3779f9)
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return int(h % patternOffsets)
}

func pattern(id uint64, i int, v uint32, n int) []byte {
	patternOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		patternBase = make([]byte, patternMax+patternOffsets)
		for j := 0; j < len(patternBase); j += 8 {
			x := r.Uint64()
			for k := 0; k < 8; k++ {
				patternBase[j+k] = byte(x >> (8 * k))
			}
		}
	})
	off := patternOff(id, i, v)
	return patternBase[off : off+n : off+n]
}

func fill(b []byte, id uint64, i int, v uint32) { copy(b, pattern(id, i, v, len(b))) }

func matches(b []byte, id uint64, i int, v uint32) bool {
	return bytes.Equal(b, pattern(id, i, v, len(b)))
}

func chunksOf(n int) int { return (n + ChunkSize - 1) / ChunkSize }

// publish reserves, fills and publishes block i of t at version v, and
// returns the still pinned Handle.
func publish(t *Table, i, n int, v uint32) (Handle, bool) {
	h, ok := t.Reserve(i, n)
	if !ok {
		return h, false
	}
	fill(h.Bytes(), t.id, i, v)
	t.Publish(i, h, v)
	return h, true
}

// put is publish followed by Release.
func put(t *Table, i, n int, v uint32) bool {
	h, ok := publish(t, i, n, v)
	h.Release()
	return ok
}

// listed reports whether block i of t is in the cache (its slot holds a
// live word), without touching its access count as Get would.
func listed(t *Table, i int) bool {
	w := t.slots[i].Load()
	return w != 0 && w&ghostBit == 0
}

// ghost reports whether block i of t is remembered as a ghost.
func ghost(t *Table, i int) bool { return t.slots[i].Load()&ghostBit != 0 }

// newCache is New for tests, whose capacities always map.
func newCache(capacity int64) *Cache {
	c, err := New(capacity)
	if err != nil {
		panic(err)
	}
	return c
}
