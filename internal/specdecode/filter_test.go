package specdecode

// Filters, as package filterblock documents their encodings (Bloom,
// LevelDBBloom and BinaryFuse8), written from that documentation.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Filter policy names (property tag 12).
const (
	bloomName   = "sstkit.CacheLocalBloom.xxh64"
	levelDBName = "leveldb.BuiltinBloomFilter2"
	fuseName    = "sstkit.BinaryFuse8.xxh64"
)

// checkFilter checks that filter, of the named policy, has the shape its
// policy gives a filter of members at milliBits/1000 bits per key, and
// that it may contain every member.
func checkFilter(policy string, filter []byte, members [][]byte, milliBits uint64) error {
	n := uint64(len(members))
	switch policy {
	case bloomName:
		// ceil(n·bitsPerKey/512) lines of 64 bytes, then k.
		lines := (n*milliBits + 512000 - 1) / 512000
		if uint64(len(filter)) != 64*lines+1 {
			return fmt.Errorf("bloom filter of %d bytes for %d keys at %d/1000 bits, want %d lines and the k byte", len(filter), n, milliBits, lines)
		}
		if k := filter[len(filter)-1]; k < 1 || k > 30 || milliBits == 10000 && k != 7 {
			return fmt.Errorf("bloom filter with k = %d", k)
		}
	case levelDBName:
		// ceil(max(n·bitsPerKey, 64)/8) bytes, then k = int(bitsPerKey·0.69)
		// in 1..30.
		bpk := milliBits / 1000
		want := (max(n*bpk, 64) + 7) / 8
		k := max(1, min(int(float64(bpk)*0.69), 30))
		if uint64(len(filter)) != want+1 || int(filter[len(filter)-1]) != k {
			return fmt.Errorf("leveldb filter of %d bytes, k = %d; want %d bytes and k = %d", len(filter), filter[len(filter)-1], want+1, k)
		}
	case fuseName:
		if len(filter) < 16 {
			return fmt.Errorf("binary fuse filter of %d bytes", len(filter))
		}
		segLen, segCount := binary.LittleEndian.Uint32(filter[8:]), binary.LittleEndian.Uint32(filter[12:])
		fp := uint64(len(filter) - 16)
		if n == 0 {
			if !bytes.Equal(filter, make([]byte, 16)) {
				return fmt.Errorf("binary fuse filter of no keys is % x", filter)
			}
			break
		}
		if segLen == 0 || segLen > 1<<18 || segLen&(segLen-1) != 0 || fp != (uint64(segCount)+2)*uint64(segLen) || fp >= 1<<32 {
			return fmt.Errorf("binary fuse filter: segment length %d, count %d, %d fingerprints", segLen, segCount, fp)
		}
	default:
		return fmt.Errorf("filter policy %q is not one this decoder knows", policy)
	}
	for _, m := range members {
		if !mayContain(policy, filter, m) {
			return fmt.Errorf("filter rules out %q, which it holds", m)
		}
	}
	return nil
}

// mayContain probes a filter checked by checkFilter.
func mayContain(policy string, filter, key []byte) bool {
	switch policy {
	case bloomName:
		return bloomMayContain(filter, key)
	case levelDBName:
		return levelDBMayContain(filter, key)
	case fuseName:
		return fuseMayContain(filter, key)
	}
	return true
}

// bloomMayContain: XXH64's high 32 bits pick a line (multiply-shift), the
// low 32 bits a give probe i bit a_i >> 23 of it, a_(i+1) = a_i·0x9e3779b9.
func bloomMayContain(filter, key []byte) bool {
	lines := uint64(len(filter)-1) / 64
	if lines == 0 {
		return false
	}
	k := int(filter[len(filter)-1])
	h := xxhash.Sum64(key)
	line := filter[(h>>32*lines)>>32*64:]
	a := uint32(h)
	for range k {
		pos := a >> 23
		if line[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
		a *= 0x9e3779b9
	}
	return true
}

// levelDBHash is LevelDB's 32-bit hash (util/hash.cc).
func levelDBHash(b []byte, seed uint32) uint32 {
	const m = 0xc6a4a793
	h := seed ^ uint32(len(b))*m
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b)
		h *= m
		h ^= h >> 16
	}
	switch len(b) {
	case 3:
		h += uint32(b[2]) << 16
		fallthrough
	case 2:
		h += uint32(b[1]) << 8
		fallthrough
	case 1:
		h += uint32(b[0])
		h *= m
		h ^= h >> 24
	}
	return h
}

// levelDBMayContain: k probes at h mod bits, h advancing by h rotated
// right by 17 bits.
func levelDBMayContain(filter, key []byte) bool {
	if len(filter) < 2 {
		return false
	}
	nbits := uint64(len(filter)-1) * 8
	h := levelDBHash(key, 0xbc9f1d34)
	delta := h>>17 | h<<15
	for range int(filter[len(filter)-1]) {
		pos := uint64(h) % nbits
		if filter[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

func murmur64(z uint64) uint64 {
	z ^= z >> 33
	z *= 0xff51afd7ed558ccd
	z ^= z >> 33
	z *= 0xc4ceb9fe1a85ec53
	z ^= z >> 33
	return z
}

// fuseMayContain: the three fingerprints h0, h1, h2 XOR to the key's.
func fuseMayContain(filter, key []byte) bool {
	seed := binary.LittleEndian.Uint64(filter)
	segLen, segCount := binary.LittleEndian.Uint32(filter[8:]), binary.LittleEndian.Uint32(filter[12:])
	fp := filter[16:]
	if segLen == 0 {
		return false // the empty set
	}
	x := murmur64(xxhash.Sum64(key) + seed)
	f := uint8(x ^ x>>32)
	hi, _ := bits.Mul64(x, uint64(segCount)*uint64(segLen))
	h0 := uint32(hi)
	h1 := (h0 + segLen) ^ (uint32(x>>18) & (segLen - 1))
	h2 := (h0 + 2*segLen) ^ (uint32(x) & (segLen - 1))
	return f^fp[h0]^fp[h1]^fp[h2] == 0
}

// distinct returns the distinct prefixes (keys, without a splitter) of
// the entries of blocks, in order.
func (t *table) distinct(blocks []*dataBlock) [][]byte {
	var out [][]byte
	for _, b := range blocks {
		for _, e := range b.entries {
			if p := t.prefix(e.key); len(out) == 0 || !bytes.Equal(out[len(out)-1], p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// decodeFilters reads the filter section ("Filter section"), or every
// filter partition and, in version 4, the whole filter the hash index
// section carries, and checks each against the keys it covers.
func (t *table) decodeFilters() error {
	policy, milli := t.p.policy, t.p.milliBits
	if !t.partitioned {
		sec, err := t.rawBlock(secFilter, t.filter)
		if err != nil {
			return err
		}
		n, w := binary.Uvarint(sec)
		if w <= 0 || n > uint64(len(sec)-w) {
			return bad(secFilter, t.filter.off, "bad name length")
		}
		if name := string(sec[w : w+int(n)]); name != policy {
			return bad(secFilter, t.filter.off, "policy %q, tag 12 says %q", name, policy)
		}
		p := uint64(w) + n
		pad := (64 - (t.filter.off+p)%64) % 64
		if pad > uint64(len(sec))-p {
			return bad(secFilter, t.filter.off+p, "section ends in its padding")
		}
		for i, c := range sec[p : p+pad] {
			if c != 0 {
				return bad(secFilter, t.filter.off+p+uint64(i), "padding byte %#x", c)
			}
		}
		t.filterBytes = sec[p+pad:]
		if policy == "" {
			return nil
		}
		if err := checkFilter(policy, t.filterBytes, t.distinct(t.blocks), milli); err != nil {
			return bad(secFilter, t.filter.off+p+pad, "%v", err)
		}
		return nil
	}
	for i, p := range t.parts {
		var blocks []*dataBlock
		for _, b := range t.blocks {
			if b.part == i {
				blocks = append(blocks, b)
			}
		}
		if err := checkFilter(policy, p.filter, t.distinct(blocks), milli); err != nil {
			return bad(secFilterPart, p.off, "partition %d: %v", i, err)
		}
	}
	if t.version >= 4 {
		x := t.hash
		if err := checkFilter(policy, x.filter, t.distinct(t.blocks), milli); err != nil {
			return bad(secHash, x.filterOff, "whole filter: %v", err)
		}
	}
	return nil
}
