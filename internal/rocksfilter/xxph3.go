package rocksfilter

import (
	"encoding/binary"
	"math/bits"
)

// This file is RocksDB's key hash for its new Bloom and Ribbon filters:
// GetSliceHash64(key) = Hash64(key, seed 0) = XXPH3_64bits (util/hash.cc,
// util/xxph3.h). XXPH3 is a frozen preview of XXH3, xxHash 0.7.2, which
// RocksDB standardised on before XXH3 was final; its results differ from
// the released XXH3 (github.com/zeebo/xxh3 and xxHash >= 0.8) for every
// length. Besides the preview's own algorithm, RocksDB changed one thing:
// the empty input hashes to fold64(seed + secret[0:8], prime64_2) instead
// of 0. Where the preview and the final XXH3 differ, below:
//   - 1-3 bytes: the bytes are packed first, middle, last, length from the
//     low byte up, keyed with the first 4 secret bytes only;
//   - 4-8 bytes: its own mixing (a 51-bit xorshift, prime32_1, prime64_2);
//   - 9-16 bytes: the length is added, not the byte-swapped low word;
//   - over 240 bytes: each stripe adds its input words to their own lanes
//     (no swap of adjacent lanes), and the final overlapping stripe is
//     accumulated only when the length is not a multiple of 64.

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
)

// xxph3Secret is XXPH3's default 192-byte secret (kSecret in util/xxph3.h,
// the same bytes as xxHash 0.7.2's kSecret).
var xxph3Secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// fold64 multiplies to 128 bits and xors the halves (XXH3_mul128_fold64).
func fold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= prime64_3
	return h ^ h>>32
}

// keyHash is RocksDB's GetSliceHash64: the hash its FastLocalBloom and
// Ribbon filters give each key and prefix.
func keyHash(key []byte) uint64 { return xxph3(key, 0) }

// xxph3 is XXPH3_64bits_withSeed of RocksDB's util/xxph3.h (RocksDB's
// Hash64(data, n, seed)).
func xxph3(p []byte, seed uint64) uint64 {
	n := len(p)
	s := xxph3Secret[:]
	switch {
	case n == 0:
		return fold64(seed+le64(s), prime64_2)
	case n <= 3:
		c := uint32(p[0]) | uint32(p[n>>1])<<8 | uint32(p[n-1])<<16 | uint32(n)<<24
		keyed := uint64(c) ^ (uint64(le32(s)) + seed)
		return avalanche(keyed * prime64_1)
	case n <= 8:
		in := uint64(le32(p)) | uint64(le32(p[n-4:]))<<32
		keyed := in ^ (le64(s) + seed)
		mix := uint64(n) + (keyed^keyed>>51)*prime32_1
		return avalanche((mix ^ mix>>47) * prime64_2)
	case n <= 16:
		lo := le64(p) ^ (le64(s) + seed)
		hi := le64(p[n-8:]) ^ (le64(s[8:]) - seed)
		return avalanche(uint64(n) + lo + hi + fold64(lo, hi))
	case n <= 128:
		acc := uint64(n) * prime64_1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += mix16(p[48:], s[96:], seed)
					acc += mix16(p[n-64:], s[112:], seed)
				}
				acc += mix16(p[32:], s[64:], seed)
				acc += mix16(p[n-48:], s[80:], seed)
			}
			acc += mix16(p[16:], s[32:], seed)
			acc += mix16(p[n-32:], s[48:], seed)
		}
		acc += mix16(p, s, seed)
		acc += mix16(p[n-16:], s[16:], seed)
		return avalanche(acc)
	case n <= 240:
		acc := uint64(n) * prime64_1
		for i := 0; i < 8; i++ {
			acc += mix16(p[16*i:], s[16*i:], seed)
		}
		acc = avalanche(acc)
		for i := 8; i < n/16; i++ {
			acc += mix16(p[16*i:], s[16*(i-8)+3:], seed)
		}
		acc += mix16(p[n-16:], s[136-17:], seed)
		return avalanche(acc)
	}
	if seed != 0 {
		// The long path keys with a derived secret instead of the seed.
		var custom [192]byte
		for i := 0; i < len(custom); i += 16 {
			binary.LittleEndian.PutUint64(custom[i:], le64(s[i:])+seed)
			binary.LittleEndian.PutUint64(custom[i+8:], le64(s[i+8:])-seed)
		}
		return xxph3Long(p, custom[:])
	}
	return xxph3Long(p, s)
}

func mix16(p, s []byte, seed uint64) uint64 {
	return fold64(le64(p)^(le64(s)+seed), le64(p[8:])^(le64(s[8:])-seed))
}

// xxph3Long hashes more than 240 bytes: 64-byte stripes into 8 lanes,
// the lanes scrambled after each 1 KiB block (16 stripes, with secret
// offsets stepping by 8 bytes).
func xxph3Long(p, s []byte) uint64 {
	const stripe, perBlock = 64, (192 - 64) / 8
	acc := [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}
	n := len(p)
	block := stripe * perBlock
	blocks := n / block
	for b := 0; b < blocks; b++ {
		for i := 0; i < perBlock; i++ {
			accumulate(&acc, p[b*block+i*stripe:], s[8*i:])
		}
		for i := range acc {
			a := acc[i]
			a ^= a >> 47
			a ^= le64(s[192-stripe+8*i:])
			acc[i] = a * prime32_1
		}
	}
	rest := p[blocks*block:]
	for i := 0; i < len(rest)/stripe; i++ {
		accumulate(&acc, rest[i*stripe:], s[8*i:])
	}
	if n%stripe != 0 {
		accumulate(&acc, p[n-stripe:], s[192-stripe-7:])
	}
	h := uint64(n) * prime64_1
	for i := 0; i < 4; i++ {
		h += fold64(acc[2*i]^le64(s[11+16*i:]), acc[2*i+1]^le64(s[11+16*i+8:]))
	}
	return avalanche(h)
}

func accumulate(acc *[8]uint64, p, s []byte) {
	for i := range acc {
		v := le64(p[8*i:])
		k := v ^ le64(s[8*i:])
		acc[i] += v + uint64(uint32(k))*(k>>32)
	}
}
