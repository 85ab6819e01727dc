package rocksfilter

import "encoding/binary"

// fastLocalBloomMayContain is FastLocalBloomImpl::HashMayMatch
// (util/bloom_impl.h): the low 32 bits of the key's 64-bit hash pick a
// 64-byte line by multiply-shift range reduction, the high 32 bits give
// the probes, each the top 9 bits (a bit of the 512-bit line, least
// significant bit first within a byte) of the hash times successive
// powers of the 32-bit golden ratio 0x9e3779b9.
func (f *Filter) fastLocalBloomMayContain(h uint64) bool {
	lines := uint64(len(f.data) >> 6)
	line := f.data[(uint64(uint32(h))*lines>>32)<<6:]
	line = line[:64]
	p := uint32(h >> 32)
	for i := uint8(0); i < f.probe; i++ {
		bit := p >> (32 - 9)
		if line[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
		p *= 0x9e3779b9
	}
	return true
}

// legacyBloomMayContain is LegacyLocalityBloomImpl<false>::HashMayMatch
// (util/bloom_impl.h): the 32-bit hash modulo the line count picks a
// line; each probe tests the hash's low bits within the line, then adds
// the hash rotated right by 17 bits (double hashing, as LevelDB's
// filter).
func (f *Filter) legacyBloomMayContain(h uint32) bool {
	line := f.data[uint64(h%f.lines)<<f.lineShift:]
	mask := uint32(1)<<(f.lineShift+3) - 1
	delta := h>>17 | h<<15
	for i := uint8(0); i < f.probe; i++ {
		bit := h & mask
		if line[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// legacyHash is RocksDB's BloomHash (util/hash.h): its 32-bit Hash with
// seed 0xbc9f1d34. It is LevelDB's hash except that the 1 to 3 tail bytes
// are sign-extended (read as int8, as LevelDB before 1.18 did), so keys
// whose length is not a multiple of 4 and whose tail holds a byte of
// 0x80 or more hash differently from LevelDB 1.18+ and goleveldb.
func legacyHash(data []byte) uint32 {
	const m = 0xc6a4a793
	h := 0xbc9f1d34 ^ uint32(len(data))*m
	for ; len(data) >= 4; data = data[4:] {
		h += binary.LittleEndian.Uint32(data)
		h *= m
		h ^= h >> 16
	}
	switch len(data) {
	case 3:
		h += uint32(int8(data[2])) << 16
		fallthrough
	case 2:
		h += uint32(int8(data[1])) << 8
		fallthrough
	case 1:
		h += uint32(int8(data[0]))
		h *= m
		h ^= h >> 24
	}
	return h
}
