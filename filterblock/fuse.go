package filterblock

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/FastFilter/xorfilter"
	"github.com/cespare/xxhash/v2"
)

// BinaryFuse8Name is the name stored in tables built with BinaryFuse8.
const BinaryFuse8Name = "sstkit.BinaryFuse8.xxh64"

// Binary fuse filter layout constants (see BinaryFuse8).
const (
	fuseHeaderLen     = 16
	fuseMaxSegmentLen = 1 << 18 // the largest segment length the construction uses
	// fuseMaxKeys bounds the keys of one binary fuse filter: the
	// construction counts keys and fingerprint slots in uint32.
	fuseMaxKeys = 1 << 31
)

// FuseAttempts is how many times BinaryFuse8's generator runs the
// construction, each time with a different seed sequence, before it falls
// back to a Bloom filter. Each run itself tries up to
// xorfilter.MaxIterations (1024) seeds.
const FuseAttempts = 3

// BinaryFuse8 returns a binary fuse filter policy with 8-bit fingerprints
// and three hash functions (Graf and Lemire, "Binary Fuse Filters: Fast
// and Smaller Than Xor Filters", ACM Journal of Experimental Algorithmics
// 27, 2022, doi:10.1145/3510449). Its false positive rate is 2^-8 ≈ 0.39%
// at about 9.1 bits per key for a million keys (1.125·8 bits per key
// asymptotically, more for small sets), where a Bloom filter spends 10
// bits per key for 0.96%. A filter is immutable once built and probes
// exactly three bytes per query.
//
// Each key is hashed once with XXH64 (seed 0, codec.KeyHash), as for
// Bloom; the 64-bit hashes are the keys of the construction, done by
// github.com/FastFilter/xorfilter (BuildBinaryFuse with uint8
// fingerprints), the paper's authors' Go implementation. The construction
// (peeling a random 3-hypergraph) can fail; it retries with new seeds,
// and after FuseAttempts runs, or for more than 2^31 keys, the generator
// builds a Bloom(10) filter instead. A builder then records BloomName as
// the table's filter policy (see FallbackReporter).
//
// Filter layout, integers little-endian:
//
//	+-----------+-------------------+------------------+-------------------------------+
//	| seed u64  | segmentLength u32 | segmentCount u32 | fingerprints (uint8 each)     |
//	+-----------+-------------------+------------------+-------------------------------+
//	 16-byte header                                      (segmentCount+2)·segmentLength bytes
//
// A key with XXH64 hash h is in the set only if
//
//	x   = murmur64(h + seed)                (mod 2^64; MurmurHash3's 64-bit finaliser)
//	f   = uint8(x ^ x>>32)
//	h0  = high 64 bits of x · (segmentCount·segmentLength)
//	h1  = (h0 + segmentLength)   ^ (uint32(x>>18) & (segmentLength-1))
//	h2  = (h0 + 2·segmentLength) ^ (uint32(x)     & (segmentLength-1))
//	f ^ fingerprints[h0] ^ fingerprints[h1] ^ fingerprints[h2] == 0
//
// where murmur64(z) is z ^= z>>33; z *= 0xff51afd7ed558ccd; z ^= z>>33;
// z *= 0xc4ceb9fe1a85ec53; z ^= z>>33. segmentLength is a power of two,
// at most 2^18, and (segmentCount+2)·segmentLength < 2^32. The filter of
// an empty set is the header alone with segmentLength and segmentCount 0,
// and matches nothing; a filter breaking any other rule is malformed and
// matches everything.
func BinaryFuse8() Policy { return binaryFuse8 }

var binaryFuse8 = &fusePolicy{}

type fusePolicy struct{}

func (p *fusePolicy) Name() string            { return BinaryFuse8Name }
func (p *fusePolicy) String() string          { return BinaryFuse8Name }
func (p *fusePolicy) NewGenerator() Generator { return &fuseGenerator{} }

func (p *fusePolicy) MayContain(filter, key []byte) bool {
	return FuseMayContainHash(filter, xxhash.Sum64(key))
}

// FuseMayContain is BinaryFuse8's MayContain as a plain function. It reads
// filter in place and allocates nothing.
func FuseMayContain(filter, key []byte) bool {
	return FuseMayContainHash(filter, xxhash.Sum64(key))
}

// FuseMayContainHash is FuseMayContain for a key whose XXH64 hash (seed 0,
// as codec.KeyHash computes it) is h.
func FuseMayContainHash(filter []byte, h uint64) bool {
	if len(filter) < fuseHeaderLen {
		return true
	}
	seed := binary.LittleEndian.Uint64(filter)
	segLen := binary.LittleEndian.Uint32(filter[8:])
	segCount := binary.LittleEndian.Uint32(filter[12:])
	fp := filter[fuseHeaderLen:]
	if segLen == 0 || segLen > fuseMaxSegmentLen || segLen&(segLen-1) != 0 || segCount == 0 ||
		uint64(len(fp)) != (uint64(segCount)+2)*uint64(segLen) || uint64(len(fp)) >= 1<<32 {
		// The empty set's filter matches nothing; any other malformed
		// filter everything.
		return len(fp) != 0 || segLen != 0 || segCount != 0
	}
	x := murmur64(h + seed)
	f := uint8(x ^ x>>32)
	hi, _ := bits.Mul64(x, uint64(segCount*segLen))
	h0 := uint32(hi)
	mask := segLen - 1
	h1 := (h0 + segLen) ^ (uint32(x>>18) & mask)
	h2 := (h0 + 2*segLen) ^ (uint32(x) & mask)
	return f^fp[h0]^fp[h1]^fp[h2] == 0
}

// murmur64 is MurmurHash3's 64-bit finaliser (fmix64), as the xorfilter
// package mixes keys with its seed.
func murmur64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// FallbackReporter is implemented by generators that may build a filter
// of another policy than their own, as BinaryFuse8's falls back to Bloom
// when its construction fails. A builder asks it after Generate which
// policy's name and bits per key to store with the filter.
type FallbackReporter interface {
	// GeneratedPolicy returns the policy whose encoding the last Generate
	// call produced.
	GeneratedPolicy() Policy
}

// fuseBuilders recycles the construction's working memory (about 25
// bytes per key) between filters.
var fuseBuilders = sync.Pool{New: func() any { return new(xorfilter.BinaryFuseBuilder) }}

// buildFuse runs the construction; tests replace it to make it fail.
var buildFuse = xorfilter.BuildBinaryFuse[uint8]

// fuseFallback is the policy a failed construction falls back to.
var fuseFallback = Bloom(10)

type fuseGenerator struct {
	hashes []uint64
	used   Policy
}

func (g *fuseGenerator) Add(key []byte) { g.hashes = append(g.hashes, xxhash.Sum64(key)) }

// AddHash records a key by its XXH64 hash (HashAdder).
func (g *fuseGenerator) AddHash(h uint64) { g.hashes = append(g.hashes, h) }

// GeneratedPolicy returns BinaryFuse8, or the Bloom policy the last
// Generate fell back to (FallbackReporter).
func (g *fuseGenerator) GeneratedPolicy() Policy {
	if g.used == nil {
		return binaryFuse8
	}
	return g.used
}

func (g *fuseGenerator) Generate(dst []byte) []byte {
	keys := g.hashes
	g.hashes = nil
	g.used = binaryFuse8
	if len(keys) == 0 {
		return append(dst, make([]byte, fuseHeaderLen)...)
	}
	if len(keys) <= fuseMaxKeys {
		b := fuseBuilders.Get().(*xorfilter.BinaryFuseBuilder)
		defer fuseBuilders.Put(b)
		// Attempt i adds salt_i to every key, so the construction's seeds
		// s give hashes murmur64(h + salt_i + s): a fresh seed sequence.
		// The stored seed is salt_i + s.
		var salt uint64
		for attempt := 0; attempt < FuseAttempts; attempt++ {
			if attempt > 0 {
				const step = 0x9e3779b97f4a7c15 // 2^64 / golden ratio
				for i := range keys {
					keys[i] += step
				}
				salt += step
			}
			f, err := buildFuse(b, keys)
			if err != nil {
				continue
			}
			dst = binary.LittleEndian.AppendUint64(dst, f.Seed+salt)
			dst = binary.LittleEndian.AppendUint32(dst, f.SegmentLength)
			dst = binary.LittleEndian.AppendUint32(dst, f.SegmentCount)
			return append(dst, f.Fingerprints...)
		}
		for i := range keys {
			keys[i] -= salt
		}
	}
	// The construction failed: a Bloom filter over the same hashes.
	g.used = fuseFallback
	bg := fuseFallback.NewGenerator().(*bloomGenerator)
	for _, h := range keys {
		bg.AddHash(h)
	}
	return bg.Generate(dst)
}
