package codec

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/prefetch"
)

// HashIndexHeaderLen is the size in bytes of the hash index header.
const HashIndexHeaderLen = 16

// hashIndexFileOffsets is the header flag (byte 3, bit 0) saying that
// slots hold entries' file offsets rather than offsets in decoded blocks.
const hashIndexFileOffsets = 1

// hashIndexDecodedOffsets is the header flag (byte 3, bit 1) saying that
// slots hold entries' offsets in the concatenation of all decoded data
// blocks, whose starts follow the block offsets.
const hashIndexDecodedOffsets = 2

// hashIndexFirstKey is the header flag (byte 3, bit 2) of a Version4
// hash index: slots hold offsets in the decoded block, whose entries are
// prefix-compressed against the block's first key.
const hashIndexFirstKey = 4

// hashIndexFilter is the header flag (byte 3, bit 3), only with
// hashIndexFirstKey, saying that the table's whole filter follows the
// block offsets, to the end of the section.
const hashIndexFilter = 8

// hashIndexNarrowOffsets is the header flag (byte 3, bit 4), only with
// hashIndexFirstKey, saying that the block offsets are uint32LE, as a
// Version4 writer stores them when the data blocks end below 4 GiB.
const hashIndexNarrowOffsets = 16

// hashIndexMinTagBits is the smallest tag the writer stores in a slot: a
// probe that passes a slot of another key touches that key's entry (a
// cache miss) with probability 2^-tagBits.
const hashIndexMinTagBits = 8

// KeyHash returns the 64-bit hash of key that the hash index (and the
// default Bloom filter) use: XXH64 with seed 0
// (github.com/cespare/xxhash/v2).
func KeyHash(key []byte) uint64 { return xxhash.Sum64(key) }

// hashIndexMix derives the slot hash from a KeyHash with the SplitMix64
// finaliser (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number
// Generators", OOPSLA 2014), so that the slot and tag bits are not the
// bits the Bloom filter uses to place the same key.
func hashIndexMix(h uint64) uint64 {
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// compactMinTagBits is the smallest tag of a Version4 hash index's slot.
// Its slots are the narrowest that hold the block number, the entry's
// offset in its block and this many tag bits: 4 bytes for tables of up to
// about 2M entries in 4 KiB blocks. A successful probe at load 0.9 passes
// about 4.5 slots of other keys (Knuth, TAOCP vol. 3, section 6.4), so a
// 5-bit tag sends it to another key's entry 14% of the time.
const compactMinTagBits = 5

// CompactHashIndexSlots returns the number of slots a Version4 hash index
// gives n entries: n + n/9 + 1, a load factor of at most 0.9, which
// keeps the slots at about 4.4 bytes per entry. A successful lookup
// probes about 5.5 slots (22 bytes of 4-byte slots, mostly one cache
// line) and an unsuccessful one about 50; the filter rules out nearly
// every absent key before the slots are read.
func CompactHashIndexSlots(n uint64) uint64 { return n + n/9 + 1 }

// HashIndexSlots returns the number of slots the writer gives n entries:
// n + n/2 + 1, a load factor of at most 2/3, so a successful lookup probes
// about 2 slots and an unsuccessful one about 5 (Knuth, TAOCP vol. 3,
// section 6.4, linear probing), and at least one slot stays empty.
func HashIndexSlots(n uint64) uint64 { return n + n/2 + 1 }

// HashIndex is a decoded hash index section: for every key of a version 2
// table, a slot locating its entry (data block number and byte offset in
// the decoded block), found from the key's hash by linear probing. It
// aliases the section contents it was decoded from.
type HashIndex struct {
	wide       []byte // slots followed by the block offsets; loads of 8 bytes at any slot stay inside
	fileOff    int64  // file offset of slot 0, for errors
	offsets    []byte // numBlocks+1 uint64LE, or uint32LE if narrow
	narrow     bool   // block offsets are 4 bytes (hashIndexNarrowOffsets)
	numSlots   uint64
	numBlocks  int
	width      uint64
	blockBits  uint
	offsetBits uint
	tagBits    uint
	fileOffs   bool   // slots hold entry file offsets (hashIndexFileOffsets)
	decoded    []byte // numBlocks+1 uint64LE decoded starts (hashIndexDecodedOffsets); nil otherwise
	firstKey   bool   // entries share prefixes with their block's first key (hashIndexFirstKey)
	filter     []byte // the table's whole filter (hashIndexFilter); nil otherwise

	// Derived from the fields above by DecodeHashIndex, so that a probe
	// spends no instructions on them between the slot's arrival and the
	// entry's load.
	slotMask  uint64 // the slot's bits of an 8-byte load
	blockMask uint64 // the block field, once shifted down by offsetBits
	offMask   uint64 // the offset field
	tagShift  uint   // blockBits + offsetBits
}

// FirstKeyShared reports whether the index is a Version4 one: slots hold
// offsets in the decoded block, and the entry there shares its key's
// first bytes with the block's first key, not with the previous entry
// (EntryParts decodes it).
func (x *HashIndex) FirstKeyShared() bool { return x.firstKey }

// Filter returns the table's whole filter carried by a Version4 hash
// index section, under the table's filter policy, or nil if the section
// has none. It aliases the section.
func (x *HashIndex) Filter() []byte { return x.filter }

// DecodedOffsets reports whether slots hold entries' offsets in the
// concatenation of all decoded data blocks (see DecodedStart).
func (x *HashIndex) DecodedOffsets() bool { return x.decoded != nil }

// DecodedStart returns the offset of data block i's decoded contents in
// the concatenation of all of them (0 <= i <= NumBlocks; i = NumBlocks
// gives their total size). It is valid only if DecodedOffsets.
func (x *HashIndex) DecodedStart(i int) uint64 {
	return binary.LittleEndian.Uint64(x.decoded[8*i:])
}

// FileOffsets reports whether slots hold entries' file offsets (every
// data block is stored raw) rather than offsets in the decoded block.
func (x *HashIndex) FileOffsets() bool { return x.fileOffs }

// DecodeHashIndex decodes hash index section contents (trailer removed)
// stored at file offset off of a table whose data section is dataSize
// bytes and holds numBlocks data blocks. It checks the header, the
// padding, the section's length and that the block offsets start at 0,
// increase by at least one trailer and end at dataSize; slot contents are
// checked when used (and all of them by the reader's Verify). Errors wrap
// ErrCorrupt.
func DecodeHashIndex(contents []byte, off int64, dataSize, numBlocks uint64) (HashIndex, error) {
	var x HashIndex
	if len(contents) < HashIndexHeaderLen {
		return x, format.Corruptf(format.SectionHashIndex, off, "%d bytes cannot hold the %d-byte header", len(contents), HashIndexHeaderLen)
	}
	width, blockBits, offsetBits, flags := uint64(contents[0]), uint(contents[1]), uint(contents[2]), contents[3]
	pad := (64 - (uint64(off)+HashIndexHeaderLen)%64) % 64
	nb := uint64(binary.LittleEndian.Uint32(contents[4:]))
	numSlots := binary.LittleEndian.Uint64(contents[8:])
	switch {
	case width < 4 || width > 8:
		return x, format.Corruptf(format.SectionHashIndex, off, "slot width %d is not 4 to 8 bytes", width)
	case uint64(blockBits)+uint64(offsetBits) > 8*width:
		return x, format.Corruptf(format.SectionHashIndex, off+1, "%d block bits and %d offset bits do not fit a %d-byte slot", blockBits, offsetBits, width)
	case offsetBits > 32 && flags&(hashIndexFileOffsets|hashIndexDecodedOffsets) == 0:
		return x, format.Corruptf(format.SectionHashIndex, off+2, "%d offset bits: entry offsets in a block are below 2^32", offsetBits)
	case flags&^(hashIndexFileOffsets|hashIndexDecodedOffsets|hashIndexFirstKey|hashIndexFilter|hashIndexNarrowOffsets) != 0 ||
		flags&hashIndexNarrowOffsets != 0 && flags&hashIndexFirstKey == 0 ||
		flags&(hashIndexFileOffsets|hashIndexDecodedOffsets) == hashIndexFileOffsets|hashIndexDecodedOffsets ||
		flags&hashIndexFirstKey != 0 && flags&(hashIndexFileOffsets|hashIndexDecodedOffsets) != 0 ||
		flags&hashIndexFilter != 0 && flags&hashIndexFirstKey == 0:
		return x, format.Corruptf(format.SectionHashIndex, off+3, "unknown flags %#02x", flags)
	case nb != numBlocks:
		return x, format.Corruptf(format.SectionHashIndex, off+4, "%d data blocks, properties say %d", nb, numBlocks)
	case blockBits < 64 && nb >= 1<<blockBits:
		return x, format.Corruptf(format.SectionHashIndex, off+1, "%d data blocks need more than %d block bits", nb, blockBits)
	}
	rest := uint64(len(contents) - HashIndexHeaderLen)
	offWidth := uint64(8)
	if flags&hashIndexNarrowOffsets != 0 {
		offWidth = 4
	}
	tables := offWidth * (nb + 1)
	if flags&hashIndexDecodedOffsets != 0 {
		tables *= 2
	}
	withFilter := flags&hashIndexFilter != 0
	if rest < pad || numSlots > (rest-pad)/width || !withFilter && rest-pad-numSlots*width != tables || withFilter && rest-pad-numSlots*width <= tables {
		return x, format.Corruptf(format.SectionHashIndex, off+8, "%d slots of %d bytes and tables of %d bytes do not fill %d bytes", numSlots, width, tables, len(contents))
	}
	for i := uint64(0); i < pad; i++ {
		if contents[HashIndexHeaderLen+i] != 0 {
			return x, format.Corruptf(format.SectionHashIndex, off+HashIndexHeaderLen+int64(i), "non-zero padding byte")
		}
	}
	if numSlots == 0 && numBlocks > 0 {
		return x, format.Corruptf(format.SectionHashIndex, off+8, "no slots for %d data blocks", numBlocks)
	}
	start := HashIndexHeaderLen + pad
	x = HashIndex{
		wide:       contents[start:],
		fileOff:    off + int64(start),
		offsets:    contents[start+numSlots*width:],
		numSlots:   numSlots,
		numBlocks:  int(nb),
		width:      width,
		blockBits:  blockBits,
		offsetBits: offsetBits,
		tagBits:    uint(8*width) - blockBits - offsetBits,
		fileOffs:   flags&hashIndexFileOffsets != 0,
		firstKey:   flags&hashIndexFirstKey != 0,
		narrow:     offWidth == 4,
	}
	x.slotMask = ^uint64(0)
	if width < 8 {
		x.slotMask = 1<<(8*width) - 1
	}
	x.blockMask = 1<<blockBits - 1
	x.offMask = 1<<offsetBits - 1
	x.tagShift = blockBits + offsetBits
	if withFilter {
		x.filter = x.offsets[tables:]
		x.offsets = x.offsets[:tables:tables]
	}
	prev := uint64(0)
	for i := 0; i <= int(nb); i++ {
		o := x.blockOffset(i)
		bad := o != 0 && i == 0 || i > 0 && (o < prev || o-prev < format.BlockTrailerLen) || i == int(nb) && o != dataSize
		if bad {
			return HashIndex{}, format.Corruptf(format.SectionHashIndex, off+int64(start+numSlots*width)+int64(offWidth)*int64(i), "block offset %d of %d is %d (previous %d, data size %d)", i, nb, o, prev, dataSize)
		}
		prev = o
	}
	if flags&hashIndexDecodedOffsets != 0 {
		x.decoded = x.offsets[8*(nb+1):]
		prev = 0
		// Each decoded block holds at least its 4-byte restart count.
		for i := 0; i <= int(nb); i++ {
			d := binary.LittleEndian.Uint64(x.decoded[8*i:])
			if d != 0 && i == 0 || i > 0 && (d < prev || d-prev < 4) {
				return HashIndex{}, format.Corruptf(format.SectionHashIndex, off+int64(start+numSlots*width)+8*int64(int(nb)+1+i), "decoded start %d of %d is %d (previous %d)", i, nb, d, prev)
			}
			prev = d
		}
	}
	return x, nil
}

// NumSlots returns the number of slots.
func (x *HashIndex) NumSlots() uint64 { return x.numSlots }

// NumBlocks returns the number of data blocks the index locates.
func (x *HashIndex) NumBlocks() int { return x.numBlocks }

// SlotWidth returns the size of one slot in bytes (4 to 8).
func (x *HashIndex) SlotWidth() int { return int(x.width) }

// BlockHandle returns the handle of data block i (0 <= i < NumBlocks):
// the stored bytes between its offset and the next block's, less the
// trailer. The offsets were checked by DecodeHashIndex.
func (x *HashIndex) BlockHandle(i int) format.BlockHandle {
	o, next := x.blockOffset(i), x.blockOffset(i+1)
	return format.BlockHandle{Offset: o, Length: next - o - format.BlockTrailerLen}
}

// blockOffset returns block offset i (0 <= i <= NumBlocks).
func (x *HashIndex) blockOffset(i int) uint64 {
	if x.narrow {
		return uint64(binary.LittleEndian.Uint32(x.offsets[4*i:]))
	}
	return binary.LittleEndian.Uint64(x.offsets[8*i:])
}

// HashProbe walks the slots a key may occupy. It is a value type, so a
// lookup allocates nothing.
type HashProbe struct {
	x     *HashIndex
	pos   uint64
	left  uint64 // slots not yet visited
	tag   uint64
	valid bool
}

// Probe starts the search for the key whose KeyHash is h.
func (x *HashIndex) Probe(h uint64) HashProbe {
	if x.numSlots == 0 {
		return HashProbe{}
	}
	m := hashIndexMix(h)
	pos, _ := bits.Mul64(m, x.numSlots)
	return HashProbe{x: x, pos: pos, left: x.numSlots, tag: m & (1<<x.tagBits - 1), valid: true}
}

// Prefetch starts loading the probe's first slot into the cache without
// waiting for it, so that a caller can overlap that cache miss with other
// work (the filter probe) before calling Next, and a caller that then
// finds it need not call Next does not wait for the slot at all.
func (p *HashProbe) Prefetch() {
	if p.valid {
		prefetch.Line(unsafe.Pointer(&p.x.wide[p.pos*p.x.width]))
	}
}

// PrefetchHome starts loading the home slot of the key whose KeyHash is
// h into the cache, as Probe(h).Prefetch() does, without setting up a
// probe: a caller that may not need the slots at all (the filter may
// rule the key out) pays only the address computation.
func (x *HashIndex) PrefetchHome(h uint64) {
	if x.numSlots != 0 {
		pos, _ := bits.Mul64(hashIndexMix(h), x.numSlots)
		prefetch.Line(unsafe.Pointer(&x.wide[pos*x.width]))
	}
}

// Next returns the location in the next slot whose tag matches: data
// block number block (below NumBlocks, checked) and the entry's offset in
// the decoded block, or its file offset if FileOffsets (not checked). ok is false once an empty slot ends the
// probe sequence. A slot naming a block past the last gives a corruption
// error.
func (p *HashProbe) Next() (block int, offset uint64, ok bool, err error) {
	if !p.valid {
		return 0, 0, false, nil
	}
	x := p.x
	pos, left := p.pos, p.left
	for left > 0 {
		v := binary.LittleEndian.Uint64(x.wide[pos*x.width:]) & x.slotMask
		slot := pos
		if pos++; pos == x.numSlots {
			pos = 0
		}
		left--
		b := v >> x.offsetBits & x.blockMask
		if b == 0 {
			break
		}
		if v>>x.tagShift != p.tag {
			continue
		}
		p.pos, p.left = pos, left
		if b > uint64(x.numBlocks) {
			p.valid = false
			return 0, 0, false, format.Corruptf(format.SectionHashIndex, x.fileOff+int64(slot*x.width), "slot %d names data block %d of %d", slot, b-1, x.numBlocks)
		}
		return int(b - 1), v & x.offMask, true, nil
	}
	p.pos, p.left = pos, left
	p.valid = false
	return 0, 0, false, nil
}

// Occupied returns the number of non-empty slots; Verify compares it with
// the entry count.
func (x *HashIndex) Occupied() uint64 {
	var n uint64
	for i := uint64(0); i < x.numSlots; i++ {
		v := binary.LittleEndian.Uint64(x.wide[i*x.width:])
		if v>>x.offsetBits&(1<<x.blockBits-1) != 0 {
			n++
		}
	}
	return n
}
