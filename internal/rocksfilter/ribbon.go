package rocksfilter

import (
	"encoding/binary"
	"math/bits"

	"github.com/sstkit/sstable/format"
)

// RocksDB's Standard128 Ribbon filter (filter_policy.cc
// Standard128RibbonBitsReader over util/ribbon_impl.h and
// util/ribbon_alg.h): a solution matrix of 128 slots per block, stored
// interleaved as 16-byte segments (little-endian, low 64 bits first), one
// segment per block and result column. Blocks before upperStartBlock have
// one column fewer than the rest. A key's 64-bit hash, rehashed with the
// filter's seed, picks a start slot (multiply-shift over numStarts) and a
// 128-bit coefficient row; the key may be present when, for every column,
// the parity of the row ANDed with the 128 solution bits from the start
// slot equals the matching bit of the expected result (32 bits of the
// rehash).

const (
	ribbonRehashFactor = 0x6193d459236a3a0d // StandardRehasherAdapter::kRehashFactor
	ribbonCoeffFactor  = 0xc28f82822b650bed // StandardHasher::kCoeffAndResultFactor
	ribbonCoeffXor64   = 0xc367844a6e52731d // StandardHasher::kCoeffXor64
	ribbonToRawSeed    = 0xc78219a23eeadd03 // StandardHasher::kToRawSeedFactor
	ribbonSeedMixMask  = 0xf0f0f0f0f0f0f0f0
	ribbonMaxColumns   = 32 // bits of the uint32 result row
	ribbonBlockSlots   = 128
	ribbonSegmentBytes = 16
	ribbonMinBlocks    = 2
)

// parseRibbon reads the metadata of the -2 marker: the ordinal seed (one
// byte), then the number of 128-slot blocks in 24 bits, little-endian.
// The solution's column layout follows from the block count and the
// number of segments (SerializableInterleavedSolution::InternalConfigure).
func parseRibbon(data, meta []byte, metaOff int64) (Filter, bool, error) {
	seed := uint32(meta[1])
	blocks := uint32(meta[2]) | uint32(meta[3])<<8 | uint32(meta[4])<<16
	if blocks < ribbonMinBlocks {
		// RocksDB never writes these (one block cannot be hashed into)
		// and reads them as matching everything.
		return Filter{kind: alwaysTrue}, false, nil
	}
	if len(data)%ribbonSegmentBytes != 0 {
		return Filter{}, false, format.Corruptf(Section, metaOff, "Ribbon filter solution of %d bytes is not whole %d-byte segments", len(data), ribbonSegmentBytes)
	}
	segments := uint32(len(data) / ribbonSegmentBytes)
	upper := (segments + blocks - 1) / blocks
	upperStart := upper*blocks - segments
	if upper > ribbonMaxColumns {
		// RocksDB uses 32 columns and leaves the rest unused.
		upper, upperStart = ribbonMaxColumns, 0
	}
	// SetOrdinalSeed: spread the ordinal seed into a 32-bit raw seed.
	t := uint64(seed) * ribbonToRawSeed
	t ^= (t & ribbonSeedMixMask) >> 4
	return Filter{
		kind:            ribbon,
		data:            data,
		numStarts:       blocks*ribbonBlockSlots - ribbonBlockSlots + 1,
		upperColumns:    upper,
		upperStartBlock: upperStart,
		rawSeed:         uint32(t),
	}, true, nil
}

// ribbonMayContain is Standard128RibbonBitsReader::MayMatch given the
// key's hash (InterleavedPrepareQuery and InterleavedFilterQuery).
func (f *Filter) ribbonMayContain(h uint64) bool {
	h = (h ^ uint64(f.rawSeed)) * ribbonRehashFactor
	hi, _ := bits.Mul64(h, uint64(f.numStarts))
	start := uint32(hi)
	block := start / ribbonBlockSlots
	columns := f.upperColumns
	segment := block*columns - min(block, f.upperStartBlock)
	if block < f.upperStartBlock {
		columns--
	}
	shift := uint(start % ribbonBlockSlots)

	a := h * ribbonCoeffFactor
	// The coefficient row: a in the high half, a^xor in the low half,
	// with the first coefficient forced to 1.
	crHi, crLo := a, (a^ribbonCoeffXor64)|1
	expected := uint32(bits.ReverseBytes64(a))

	if shift == 0 {
		for i := uint32(0); i < columns; i++ {
			lo, hi := f.segment(segment + i)
			if parity(lo&crLo, hi&crHi) != (expected>>i)&1 {
				return false
			}
		}
		return true
	}
	// The 128 slots from start span the end of one block's segment and
	// the start of the next block's: AND the first with the row shifted
	// left by shift, the second with it shifted right by 128-shift.
	var lLo, lHi, rLo, rHi uint64
	if shift < 64 {
		lLo, lHi = crLo<<shift, crHi<<shift|crLo>>(64-shift)
		rLo, rHi = crHi>>(64-shift), 0
	} else {
		lLo, lHi = 0, crLo<<(shift-64)
		rLo, rHi = crLo>>(128-shift)|crHi<<(shift-64), crHi>>(128-shift)
	}
	for i := uint32(0); i < columns; i++ {
		aLo, aHi := f.segment(segment + i)
		bLo, bHi := f.segment(segment + columns + i)
		if parity(aLo&lLo^bLo&rLo, aHi&lHi^bHi&rHi) != (expected>>i)&1 {
			return false
		}
	}
	return true
}

func (f *Filter) segment(i uint32) (lo, hi uint64) {
	s := f.data[uint64(i)*ribbonSegmentBytes:]
	s = s[:ribbonSegmentBytes]
	return binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
}

func parity(lo, hi uint64) uint32 { return uint32(bits.OnesCount64(lo^hi) & 1) }
