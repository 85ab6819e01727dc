package specdecode

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Hash index header flags ("Hash index section", "Version 4").
const (
	flagFileOffsets    = 1
	flagDecodedOffsets = 2
	flagFirstKey       = 4
	flagWholeFilter    = 8
	flagNarrowOffsets  = 16
)

// hashIndex is a decoded hash index section.
type hashIndex struct {
	off                   uint64 // file offset of the section
	width                 uint64
	blockBits, offsetBits uint
	tagBits               uint
	flags                 byte
	numBlocks, numSlots   uint64
	slotsOff              uint64 // file offset of slot 0
	slots                 []byte
	blockOffsets          []uint64
	decodedStarts         []uint64 // with flagDecodedOffsets
	filter                []byte   // with flagWholeFilter
	filterOff             uint64   // its file offset
}

// decodeHashIndex decodes the section's contents and checks them against
// the data blocks, including the writer's choices the specification
// states.
func (t *table) decodeHashIndex(sec []byte) (*hashIndex, error) {
	off := t.p.dataSize
	if len(sec) < 16 {
		return nil, bad(secHash, off, "%d bytes cannot hold the 16-byte header", len(sec))
	}
	x := &hashIndex{
		off:        off,
		width:      uint64(sec[0]),
		blockBits:  uint(sec[1]),
		offsetBits: uint(sec[2]),
		flags:      sec[3],
		numBlocks:  uint64(binary.LittleEndian.Uint32(sec[4:])),
		numSlots:   binary.LittleEndian.Uint64(sec[8:]),
	}
	if x.width < 4 || x.width > 8 || uint64(x.blockBits+x.offsetBits) > 8*x.width {
		return nil, bad(secHash, off, "slot width %d with %d block and %d offset bits", x.width, x.blockBits, x.offsetBits)
	}
	x.tagBits = uint(8*x.width) - x.blockBits - x.offsetBits
	f := x.flags
	var want byte
	if t.version >= 4 {
		want = flagFirstKey
		if t.p.partitioned {
			want |= flagWholeFilter
		}
		if t.p.dataSize < 1<<32 {
			want |= flagNarrowOffsets
		}
	} else {
		want = f & (flagFileOffsets | flagDecodedOffsets) // checked with the writer's rules below
		if want == flagFileOffsets|flagDecodedOffsets {
			want = 0
		}
	}
	if f != want {
		return nil, bad(secHash, off+3, "flags %#x, want %#x", f, want)
	}
	if x.numBlocks != uint64(len(t.blocks)) {
		return nil, bad(secHash, off+4, "numBlocks %d, %d data blocks", x.numBlocks, len(t.blocks))
	}
	pad := (64 - (off+16)%64) % 64
	offWidth := uint64(8)
	if f&flagNarrowOffsets != 0 {
		offWidth = 4
	}
	tables := offWidth * (x.numBlocks + 1)
	if f&flagDecodedOffsets != 0 {
		tables += 8 * (x.numBlocks + 1)
	}
	rest := uint64(len(sec)) - 16
	if rest < pad || x.numSlots > (rest-pad)/x.width || rest-pad-x.numSlots*x.width < tables {
		return nil, bad(secHash, off+8, "%d slots of %d bytes and %d bytes of tables do not fit %d bytes", x.numSlots, x.width, tables, len(sec))
	}
	filterLen := rest - pad - x.numSlots*x.width - tables
	if (f&flagWholeFilter != 0) != (filterLen > 0) {
		return nil, bad(secHash, off+16+pad+x.numSlots*x.width+tables, "%d bytes after the tables, flags %#x", filterLen, f)
	}
	for i, c := range sec[16 : 16+pad] {
		if c != 0 {
			return nil, bad(secHash, off+16+uint64(i), "padding byte %#x", c)
		}
	}
	x.slotsOff = off + 16 + pad
	p := 16 + pad
	x.slots = sec[p : p+x.numSlots*x.width]
	p += x.numSlots * x.width
	for i := uint64(0); i <= x.numBlocks; i++ {
		if offWidth == 4 {
			x.blockOffsets = append(x.blockOffsets, uint64(binary.LittleEndian.Uint32(sec[p:])))
		} else {
			x.blockOffsets = append(x.blockOffsets, binary.LittleEndian.Uint64(sec[p:]))
		}
		p += offWidth
	}
	if f&flagDecodedOffsets != 0 {
		for i := uint64(0); i <= x.numBlocks; i++ {
			x.decodedStarts = append(x.decodedStarts, binary.LittleEndian.Uint64(sec[p:]))
			p += 8
		}
	}
	x.filter, x.filterOff = sec[p:], off+p

	// Block offsets: data block i's offset, DataSize last; decoded
	// starts: each block's decoded start, the total last.
	var decoded uint64
	allRaw := true
	for i := uint64(0); i <= x.numBlocks; i++ {
		wantOff, at := t.p.dataSize, x.slotsOff+x.numSlots*x.width+i*offWidth
		if i < x.numBlocks {
			wantOff = t.blocks[i].h.off
		}
		if x.blockOffsets[i] != wantOff {
			return nil, bad(secHash, at, "block offset %d is %d, want %d", i, x.blockOffsets[i], wantOff)
		}
		if x.decodedStarts != nil && x.decodedStarts[i] != decoded {
			return nil, bad(secHash, at+(x.numBlocks+1)*offWidth, "decoded start %d is %d, want %d", i, x.decodedStarts[i], decoded)
		}
		if i < x.numBlocks {
			decoded += uint64(len(t.blocks[i].contents))
			allRaw = allRaw && t.blocks[i].typ == blockRaw
		}
	}

	// The writer's choices.
	n := uint64(len(t.slotted()))
	minTag, slots := uint(8), n+n/2+1
	if t.version >= 4 {
		minTag, slots = 5, n+n/9+1
	}
	var wantFlags byte
	wantOffsetBits := bitLen(uint64(t.maxSlottedOffset()))
	switch {
	case t.version >= 4:
		wantFlags = f
	case allRaw && x.blockBits+bitLen(t.p.dataSize)+8 <= 64:
		wantFlags, wantOffsetBits = flagFileOffsets, bitLen(t.p.dataSize)
	case !allRaw && x.blockBits+bitLen(decoded)+8 <= 64:
		wantFlags, wantOffsetBits = flagDecodedOffsets, bitLen(decoded)
	}
	wantWidth := uint64(8)
	for w := uint64(4); w <= 8; w++ {
		if uint(8*w) >= x.blockBits+wantOffsetBits+minTag {
			wantWidth = w
			break
		}
	}
	switch {
	case f != wantFlags:
		return nil, bad(secHash, off+3, "flags %#x, the writer's rule gives %#x", f, wantFlags)
	case x.blockBits != bitLen(x.numBlocks):
		return nil, bad(secHash, off+1, "%d block bits for %d blocks", x.blockBits, x.numBlocks)
	case x.offsetBits != wantOffsetBits:
		return nil, bad(secHash, off+2, "%d offset bits, the writer's rule gives %d", x.offsetBits, wantOffsetBits)
	case x.width != wantWidth:
		return nil, bad(secHash, off, "slot width %d, the writer's rule gives %d", x.width, wantWidth)
	case x.numSlots != slots:
		return nil, bad(secHash, off+8, "%d slots for %d keys, want %d", x.numSlots, n, slots)
	}
	return x, nil
}

// loc names an entry: data block number and offset in the decoded block.
type loc struct {
	block int
	off   int
}

// slotted returns the entries the hash index has a slot for: every entry,
// or with a splitter each distinct prefix's first entry.
func (t *table) slotted() []loc {
	var out []loc
	var prev []byte
	for bi, b := range t.blocks {
		for _, e := range b.entries {
			if t.split == nil || prev == nil || !bytes.Equal(t.prefix(e.key), t.prefix(prev)) {
				out = append(out, loc{bi, e.off})
			}
			prev = e.key
		}
	}
	return out
}

func (t *table) maxSlottedOffset() int {
	m := 0
	for _, l := range t.slotted() {
		m = max(m, l.off)
	}
	return m
}

// mix is the SplitMix64 finaliser the slots are placed by.
func mix(h uint64) uint64 {
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// slot returns slot i's value.
func (x *hashIndex) slot(i uint64) uint64 {
	var b [8]byte
	copy(b[:], x.slots[i*x.width:(i+1)*x.width])
	return binary.LittleEndian.Uint64(b[:])
}

// fields splits a slot's value into the entry's location field, the block
// field (block number + 1; 0: empty) and the tag.
func (x *hashIndex) fields(v uint64) (offset, block, tag uint64) {
	offset = v & (1<<x.offsetBits - 1)
	block = v >> x.offsetBits & (1<<x.blockBits - 1)
	tag = v >> (x.offsetBits + x.blockBits)
	return
}

// home returns the home slot and tag of a key (or prefix).
func (x *hashIndex) home(key []byte) (uint64, uint64) {
	m := mix(xxhash.Sum64(key))
	hi, _ := bits.Mul64(m, x.numSlots)
	return hi, m & (1<<x.tagBits - 1)
}

// inBlock converts a slot's offset field for block b into the entry's
// offset in the decoded block.
func (x *hashIndex) inBlock(b int, off uint64) (uint64, bool) {
	base := uint64(0)
	switch {
	case x.flags&flagFileOffsets != 0:
		base = x.blockOffsets[b]
	case x.flags&flagDecodedOffsets != 0:
		base = x.decodedStarts[b]
	}
	return off - base, off >= base
}

// checkHashSlots checks that probing finds every slotted entry at its
// exact location, and that no slot names anything else.
func (t *table) checkHashSlots() error {
	x := t.hash
	want := map[loc]bool{}
	for _, l := range t.slotted() {
		want[l] = true
		key := t.blocks[l.block].entries[0].key
		for _, e := range t.blocks[l.block].entries {
			if e.off == l.off {
				key = e.key
			}
		}
		found, err := t.probe(t.prefix(key), func(got loc) bool { return got == l })
		if err != nil {
			return err
		}
		if !found {
			return bad(secHash, x.slotsOff, "probing for %q does not reach its entry (block %d, offset %d)", key, l.block, l.off)
		}
	}
	occupied := 0
	for i := uint64(0); i < x.numSlots; i++ {
		off, b, _ := x.fields(x.slot(i))
		if b == 0 {
			continue
		}
		occupied++
		if b > x.numBlocks {
			return bad(secHash, x.slotsOff+i*x.width, "slot %d names block %d of %d", i, b-1, x.numBlocks)
		}
		o, ok := x.inBlock(int(b-1), off)
		if !ok || !want[loc{int(b - 1), int(o)}] {
			return bad(secHash, x.slotsOff+i*x.width, "slot %d names block %d offset %d, no slotted entry", i, b-1, o)
		}
	}
	if occupied != len(want) {
		return bad(secHash, x.slotsOff, "%d occupied slots for %d slotted entries", occupied, len(want))
	}
	return nil
}

// probe walks the slots of fk (a key, or a prefix) from its home slot to
// the first empty one, calling match with the location each slot with
// fk's tag names, until match returns true.
func (t *table) probe(fk []byte, match func(loc) bool) (bool, error) {
	x := t.hash
	if x.numSlots == 0 {
		return false, nil
	}
	s, tag := x.home(fk)
	for range x.numSlots {
		off, b, tg := x.fields(x.slot(s))
		if b == 0 {
			return false, nil
		}
		if tg == tag {
			if b > x.numBlocks {
				return false, bad(secHash, x.slotsOff+s*x.width, "slot %d names block %d of %d", s, b-1, x.numBlocks)
			}
			o, ok := x.inBlock(int(b-1), off)
			if !ok {
				return false, bad(secHash, x.slotsOff+s*x.width, "slot %d's offset %d lies before block %d", s, off, b-1)
			}
			if match(loc{int(b - 1), int(o)}) {
				return true, nil
			}
		}
		if s++; s == x.numSlots {
			s = 0
		}
	}
	return false, bad(secHash, x.slotsOff, "no empty slot")
}
