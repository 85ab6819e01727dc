package filterblock

import "encoding/binary"

// LevelDBName is the name LevelDB (since 1.18) stores for its built-in
// bloom filter. goleveldb builds byte-identical filters under the name
// "leveldb.BuiltinBloomFilter".
const LevelDBName = "leveldb.BuiltinBloomFilter2"

// LevelDBBloom returns a policy bit for bit identical to LevelDB's
// built-in bloom filter (util/bloom.cc) at bitsPerKey bits per key; values
// < 1 mean 10. It hashes with LevelDB's 32-bit Hash (util/hash.cc) and
// seed 0xbc9f1d34, uses k = int(bitsPerKey × 0.69) clamped to 1..30
// probes, at least 64 bits, and double hashing with delta = the hash
// rotated right by 17 bits (Kirsch and Mitzenmacher, 2006).
//
// Filter layout: ceil(max(n×bitsPerKey, 64)/8) bytes of bits, then one
// byte holding k. A filter shorter than 2 bytes matches nothing; one whose
// k byte exceeds 30 matches everything (LevelDB reserves those encodings).
//
// bitsPerKey is an int, as LevelDB's NewBloomFilterPolicy(int
// bits_per_key) takes it (include/leveldb/filter_policy.h): LevelDB sizes
// a filter as n × bits_per_key bits in integer arithmetic, so a fractional
// value would build filters LevelDB never writes. Bloom takes a float64.
//
// It is provided for compatibility and comparison: its hash has no final
// avalanche, so keys differing only in their last bytes get correlated
// probes and a much higher false positive rate than Bloom's.
func LevelDBBloom(bitsPerKey int) Policy {
	if bitsPerKey < 1 {
		bitsPerKey = 10
	}
	k := int(float64(bitsPerKey) * 0.69) // 0.69 ≈ ln 2, as LevelDB rounds it
	k = max(1, min(k, 30))
	return &levelDBPolicy{bitsPerKey: bitsPerKey, k: k}
}

type levelDBPolicy struct {
	bitsPerKey int
	k          int
}

func (p *levelDBPolicy) Name() string            { return LevelDBName }
func (p *levelDBPolicy) BitsPerKey() float64     { return float64(p.bitsPerKey) }
func (p *levelDBPolicy) Probes() int             { return p.k }
func (p *levelDBPolicy) NewGenerator() Generator { return &levelDBGenerator{policy: p} }

func (p *levelDBPolicy) MayContain(filter, key []byte) bool {
	n := len(filter)
	if n < 2 {
		return false
	}
	k := filter[n-1]
	if k > 30 {
		return true
	}
	bits := uint64(n-1) * 8 // 64-bit like LevelDB's size_t: no wrap at 512 MiB
	h := LevelDBHash(key, levelDBSeed)
	delta := h>>17 | h<<15
	for j := byte(0); j < k; j++ {
		pos := uint64(h) % bits
		if filter[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// levelDBSeed is the seed of LevelDB's BloomHash.
const levelDBSeed = 0xbc9f1d34

type levelDBGenerator struct {
	policy *levelDBPolicy
	hashes []uint32
}

func (g *levelDBGenerator) Add(key []byte) {
	g.hashes = append(g.hashes, LevelDBHash(key, levelDBSeed))
}

func (g *levelDBGenerator) Generate(dst []byte) []byte {
	bits := len(g.hashes) * g.policy.bitsPerKey
	bits = max(bits, 64)
	nBytes := (bits + 7) / 8
	bits = nBytes * 8
	start := len(dst)
	dst = append(dst, make([]byte, nBytes)...)
	f := dst[start:]
	for _, h := range g.hashes {
		delta := h>>17 | h<<15
		for j := 0; j < g.policy.k; j++ {
			pos := uint64(h) % uint64(bits)
			f[pos/8] |= 1 << (pos % 8)
			h += delta
		}
	}
	g.hashes = g.hashes[:0]
	return append(dst, byte(g.policy.k))
}

// LevelDBHash is LevelDB's 32-bit hash (util/hash.cc), a Murmur-like
// function: it mixes 4-byte little-endian words, then the 1 to 3 tail
// bytes, unsigned. Its lack of a final avalanche step is why keys that
// differ only in their last bytes probe correlated bits.
func LevelDBHash(data []byte, seed uint32) uint32 {
	const m = 0xc6a4a793
	h := seed ^ uint32(len(data))*m
	for ; len(data) >= 4; data = data[4:] {
		h += binary.LittleEndian.Uint32(data)
		h *= m
		h ^= h >> 16
	}
	switch len(data) {
	case 3:
		h += uint32(data[2]) << 16
		fallthrough
	case 2:
		h += uint32(data[1]) << 8
		fallthrough
	case 1:
		h += uint32(data[0])
		h *= m
		h ^= h >> 24
	}
	return h
}
