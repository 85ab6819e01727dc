package filterblock

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/sstkit/sstable/internal/prefetch"
)

// BloomName is the name stored in tables built with Bloom.
const BloomName = "sstkit.CacheLocalBloom.xxh64"

// lineBytes is the size of one filter line: a 64-byte cache line.
const lineBytes = 64

// Bloom returns the default filter policy: a cache-local (blocked) Bloom
// filter at bitsPerKey bits per key, in the manner of RocksDB's
// FastLocalBloom (util/bloom_impl.h). bitsPerKey may be fractional, as
// BloomFPR chooses it; values below 1, and NaN, mean 10. Builders record
// it in the table's properties to 1/1000 bit (Properties.FilterBitsPerKey)
// and refuse more than builder.MaxBitsPerKey; readers need neither, since
// a filter stores its k and its length gives its lines. Bloom took an int
// before: for every integer, the policy, k and the filters it builds are
// unchanged.
//
// Each key is hashed once with XXH64 (github.com/cespare/xxhash/v2). The
// high 32 bits pick one 64-byte line (Lemire's multiply-shift range
// reduction); the low 32 bits a give the in-line probes: probe i tests bit
// a_i >> 23 of the line, with a_0 = a and a_(i+1) = a_i · 0x9e3779b9 mod
// 2^32, as FastLocalBloom does. This is double hashing in the sense of
// Kirsch and Mitzenmacher ("Less Hashing, Same Performance", 2006): two
// hash halves stand in for k independent hashes. All k probes cost at most
// one cache miss. Additive double hashing inside 32 bits (a + i·b) was
// measured at 1.05% FPR against 0.957% in theory at 10 bits per key; the
// multiplicative form matches theory. k, from 1 to 16, minimises the
// cache-local false positive rate CacheLocalFPR at bitsPerKey (7 at 10
// bits per key, near bitsPerKey·ln 2).
//
// Filter layout: for n keys, ceil(round(n·bitsPerKey)/512) lines of 64
// bytes (at least one when n > 0), then one byte holding k. A filter with
// no lines matches nothing; a malformed filter (wrong length, k of 0 or
// > 30) matches everything.
func Bloom(bitsPerKey float64) Policy {
	if !(bitsPerKey >= 1) { // NaN too
		bitsPerKey = 10
	}
	return &bloomPolicy{bitsPerKey: bitsPerKey, k: bestCacheLocalK(bitsPerKey)}
}

// remix is the 32-bit golden-ratio multiplier (Knuth's multiplicative
// hashing) that derives each next in-line probe from the previous one.
const remix = 0x9e3779b9

type bloomPolicy struct {
	bitsPerKey float64
	k          int
}

func (p *bloomPolicy) Name() string        { return BloomName }
func (p *bloomPolicy) BitsPerKey() float64 { return p.bitsPerKey }
func (p *bloomPolicy) String() string {
	return fmt.Sprintf("%s(%g bits/key, k=%d)", BloomName, p.bitsPerKey, p.k)
}

// Probes returns k, the number of bits tested per key (Probed).
func (p *bloomPolicy) Probes() int { return p.k }

func (p *bloomPolicy) NewGenerator() Generator { return &bloomGenerator{policy: p} }

func (p *bloomPolicy) MayContain(filter, key []byte) bool {
	return BloomMayContain(filter, key)
}

// BloomMayContain is Bloom's MayContain as a plain function, for callers
// that want to avoid an interface call on a hot path. It allocates nothing.
func BloomMayContain(filter, key []byte) bool {
	return BloomMayContainHash(filter, xxhash.Sum64(key))
}

// BloomMayContainHash is BloomMayContain for a key whose XXH64 hash (seed
// 0, as codec.KeyHash computes it) is h, so that a reader that also needs
// the hash for its hash index computes it once.
func BloomMayContainHash(filter []byte, h uint64) bool {
	n := len(filter) - 1
	if n < 0 || n%lineBytes != 0 {
		return true
	}
	k := int(filter[n])
	if k == 0 || k > 30 {
		return true
	}
	lines := uint64(n / lineBytes)
	if lines == 0 {
		return false
	}
	hi := (h >> 32 * lines) >> 32 // Lemire range reduction, lines < 2^32
	line := filter[hi*lineBytes : hi*lineBytes+lineBytes : hi*lineBytes+lineBytes]
	a := uint32(h)
	for i := 0; i < k; i++ {
		pos := a >> 23
		if line[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
		a *= remix
	}
	return true
}

// BloomProber probes one Bloom filter (as BloomMayContainHash does) with
// its probe count and line count decoded once, for a reader that keeps a
// filter and probes it on every lookup. The zero value rules nothing out.
type BloomProber struct {
	lines []byte // the filter's 64-byte lines, without the probe count
	n     uint64 // number of lines
	k     int    // probes, 1 to 30; 0: rule nothing out
}

// NewBloomProber returns a prober of filter, a Bloom filter as the Bloom
// policies encode it. A malformed filter gives a prober that rules
// nothing out, as BloomMayContainHash answers for it.
func NewBloomProber(filter []byte) BloomProber {
	n := len(filter) - 1
	if n < 0 || n%lineBytes != 0 {
		return BloomProber{}
	}
	k := int(filter[n])
	if k == 0 || k > 30 {
		return BloomProber{}
	}
	if n == 0 {
		return BloomProber{k: -1} // no lines: nothing is in the filter
	}
	return BloomProber{lines: filter[:n:n], n: uint64(n / lineBytes), k: k}
}

// MayContainHash is BloomMayContainHash on the prober's filter.
func (p *BloomProber) MayContainHash(h uint64) bool {
	if p.n == 0 {
		return p.k >= 0
	}
	hi := (h >> 32 * p.n) >> 32
	line := p.lines[hi*lineBytes : hi*lineBytes+lineBytes : hi*lineBytes+lineBytes]
	a := uint32(h)
	for i := 0; i < p.k; i++ {
		pos := a >> 23
		if line[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
		a *= remix
	}
	return true
}

// hashChunk is the number of hashes per chunk of a bloomGenerator: 256 KiB.
// Chunks spare large builds from re-copying one ever-growing slice
// (0.94 s of a 5.5 s build at 10M keys, measured by bench/cmd/compare).
const hashChunk = 1 << 15

type bloomGenerator struct {
	policy *bloomPolicy
	full   [][]uint64 // chunks of hashChunk hashes, and runs from AddHashes
	hashes []uint64   // the chunk being filled; grows by doubling up to hashChunk
}

func (g *bloomGenerator) Add(key []byte) { g.AddHash(xxhash.Sum64(key)) }

// AddHash records a key by its XXH64 hash (HashAdder).
func (g *bloomGenerator) AddHash(h uint64) {
	if len(g.hashes) == hashChunk {
		g.full = append(g.full, g.hashes)
		g.hashes = make([]uint64, 0, hashChunk)
	}
	g.hashes = append(g.hashes, h)
}

// AddHashes records keys by their XXH64 hashes, keeping hs until
// Generate (HashesAdder).
func (g *bloomGenerator) AddHashes(hs []uint64) {
	if len(hs) > 0 {
		g.full = append(g.full, hs)
	}
}

func (g *bloomGenerator) Generate(dst []byte) []byte {
	n := len(g.hashes)
	for _, c := range g.full {
		n += len(c)
	}
	totalBits := uint64(float64(n)*g.policy.bitsPerKey + 0.5)
	lines := (totalBits + lineBytes*8 - 1) / (lineBytes * 8)
	if n > 0 && lines == 0 {
		lines = 1
	}
	start := len(dst)
	dst = slices.Grow(dst, int(lines)*lineBytes+1)[:start+int(lines)*lineBytes]
	f := dst[start:]
	clear(f)
	k := g.policy.k
	for _, chunk := range append(g.full, g.hashes) {
		setBloomBits(f, lines, k, chunk)
	}
	g.full, g.hashes = nil, g.hashes[:0]
	return append(dst, byte(k))
}

// setBloomBits sets in f, a filter of lines cache lines, the k bits of
// each of hashes. A filter larger than the CPU's caches takes a miss per
// hash; the line of the hash bloomAhead places further on is prefetched,
// so that the misses overlap rather than queue (BenchmarkGenerate, 1M
// keys in 1.25 MB: see the commit that added it).
func setBloomBits(f []byte, lines uint64, k int, hashes []uint64) {
	base := unsafe.Pointer(unsafe.SliceData(f))
	for i, h := range hashes {
		if j := i + bloomAhead; j < len(hashes) {
			prefetch.Line(unsafe.Add(base, (hashes[j]>>32*lines)>>32*lineBytes))
		}
		hi := (h >> 32 * lines) >> 32 // Lemire range reduction, lines < 2^32
		line := f[hi*lineBytes : hi*lineBytes+lineBytes : hi*lineBytes+lineBytes]
		a := uint32(h)
		for i := 0; i < k; i++ {
			pos := a >> 23
			line[pos>>3] |= 1 << (pos & 7)
			a *= remix
		}
	}
}

// bloomAhead is how many hashes ahead setBloomBits prefetches.
const bloomAhead = 8

// BloomFPR returns the default cache-local policy (Bloom) sized for a
// target false positive rate p instead of bits per key. It starts from
// the classic Bloom filter sizing (Bloom 1970; Broder and Mitzenmacher,
// 2004): m/n = -ln p / (ln 2)² bits per key, with k = (m/n)·ln 2 probes.
// That sizing assumes probes spread over the whole filter; confining them
// to one 64-byte line costs about 15% more false positives at 10 bits per
// key. So BloomFPR then raises the bits per key, by bisection to 1/1000
// bit (the precision properties store), until CacheLocalFPR at its best k
// is at most p, and returns Bloom at that size: p = 0.01 gives 9.9 bits
// per key, where the classic sizing says 9.59. p outside (0, 0.5] is
// clamped to [1e-9, 0.5]; NaN means Bloom(10), as in Bloom.
func BloomFPR(p float64) Policy {
	if math.IsNaN(p) {
		return Bloom(10)
	}
	p = math.Min(math.Max(p, 1e-9), 0.5)
	b := -math.Log(p) / (math.Ln2 * math.Ln2)
	lo, hi := math.Max(1, b), b*2+8
	for hi-lo > 0.001 {
		mid := (lo + hi) / 2
		if CacheLocalFPR(mid, bestCacheLocalK(mid)) <= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	hi = math.Ceil(hi*1000) / 1000
	return &bloomPolicy{bitsPerKey: hi, k: bestCacheLocalK(hi)}
}
