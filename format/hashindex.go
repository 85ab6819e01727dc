package format

import (
	"encoding/binary"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// SectionHashIndex names the hash index section in corruption errors.
const SectionHashIndex = "hash index"

// HashIndexHeaderLen is the size in bytes of the hash index header.
const HashIndexHeaderLen = 16

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

// HashIndexSlots returns the number of slots the writer gives n entries:
// n + n/2 + 1, a load factor of at most 2/3, so a successful lookup probes
// about 2 slots and an unsuccessful one about 5 (Knuth, TAOCP vol. 3,
// section 6.4, linear probing), and at least one slot stays empty.
func HashIndexSlots(n uint64) uint64 { return n + n/2 + 1 }

// hashEntry is one key's location, recorded while a table is built.
type hashEntry struct {
	hash   uint64 // KeyHash of the key
	block  uint32 // data block number
	offset uint32 // byte offset of the entry in the decoded block
}

// hashChunkLen is the number of entries per chunk of a HashIndexWriter:
// 512 KiB, so a large build never re-copies one growing slice.
const hashChunkLen = 1 << 15

// HashIndexWriter collects the location of every entry of a table and
// encodes the hash index section. The zero value is ready to use. It holds
// 16 bytes per entry until Append.
type HashIndexWriter struct {
	chunks    [][]hashEntry
	n         uint64
	maxBlock  uint32
	maxOffset uint32
}

// Add records that the key whose KeyHash is hash is stored in data block
// number block, at byte offset offset of the block's decoded contents. The
// entry there must have shared = 0.
func (w *HashIndexWriter) Add(hash uint64, block, offset uint32) {
	if len(w.chunks) == 0 || len(w.chunks[len(w.chunks)-1]) == hashChunkLen {
		w.chunks = append(w.chunks, make([]hashEntry, 0, hashChunkLen))
	}
	last := &w.chunks[len(w.chunks)-1]
	*last = append(*last, hashEntry{hash, block, offset})
	w.n++
	w.maxBlock = max(w.maxBlock, block)
	w.maxOffset = max(w.maxOffset, offset)
}

// Len returns the number of entries added.
func (w *HashIndexWriter) Len() uint64 { return w.n }

// Append appends the hash index section contents (without trailer) to dst
// and returns the extended slice. sectionOffset is the file offset the
// section will be written at (it sets the padding); blockOffsets holds the
// file offset of every data block, in order, followed by the data
// section's size. Every block number given to Add must be below
// len(blockOffsets)-1.
func (w *HashIndexWriter) Append(dst []byte, sectionOffset uint64, blockOffsets []uint64) []byte {
	numBlocks := uint64(len(blockOffsets) - 1)
	blockBits := uint(bits.Len64(numBlocks)) // the field holds block+1; 0 means empty
	offsetBits := uint(bits.Len32(w.maxOffset))
	width := max(4, (blockBits+offsetBits+hashIndexMinTagBits+7)/8)
	tagBits := 8*width - blockBits - offsetBits
	numSlots := HashIndexSlots(w.n)
	pad := (64 - (sectionOffset+HashIndexHeaderLen)%64) % 64

	dst = append(dst, byte(width), byte(blockBits), byte(offsetBits), byte(pad))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(numBlocks))
	dst = binary.LittleEndian.AppendUint64(dst, numSlots)
	dst = append(dst, make([]byte, pad)...)

	start := len(dst)
	dst = append(dst, make([]byte, numSlots*uint64(width)+8*(numBlocks+1))...)
	slots := dst[start : start+int(numSlots)*int(width)]
	// The 8 bytes after each slot are writable: block offsets follow.
	wide := dst[start:]
	tagMask := uint64(1)<<tagBits - 1
	slotMask := uint64(1)<<(8*width) - 1
	if width == 8 {
		slotMask = ^uint64(0)
	}
	// Insert in home-slot order: entries are first partitioned by the top
	// bits of m (the home slot grows with m), so that the inserts sweep the
	// slot array once instead of missing the cache on every entry (at 1M
	// entries, 55 ms of random inserts became a few ms).
	buckets := 1
	for uint64(buckets)*4096 < numSlots {
		buckets <<= 1
	}
	shift := 64 - uint(bits.Len(uint(buckets))-1)
	bucketStart := make([]int, buckets+1)
	for _, chunk := range w.chunks {
		for _, e := range chunk {
			bucketStart[hashIndexMix(e.hash)>>shift+1]++
		}
	}
	for b := 1; b <= buckets; b++ {
		bucketStart[b] += bucketStart[b-1]
	}
	type placed struct{ m, v uint64 }
	order := make([]placed, w.n)
	for ci, chunk := range w.chunks {
		for _, e := range chunk {
			m := hashIndexMix(e.hash)
			b := m >> shift
			order[bucketStart[b]] = placed{m, (m&tagMask)<<(blockBits+offsetBits) | uint64(e.block+1)<<offsetBits | uint64(e.offset)}
			bucketStart[b]++
		}
		w.chunks[ci] = nil // let the chunk go
	}
	for _, e := range order {
		pos, _ := bits.Mul64(e.m, numSlots)
		for {
			p := pos * uint64(width)
			old := binary.LittleEndian.Uint64(wide[p:])
			if old&slotMask == 0 {
				binary.LittleEndian.PutUint64(wide[p:], old&^slotMask|e.v)
				break
			}
			if pos++; pos == numSlots {
				pos = 0
			}
		}
	}
	offs := dst[start+len(slots):]
	for i, off := range blockOffsets {
		binary.LittleEndian.PutUint64(offs[8*i:], off)
	}
	return dst
}

// HashIndex is a decoded hash index section: for every key of a version 2
// table, a slot locating its entry (data block number and byte offset in
// the decoded block), found from the key's hash by linear probing. It
// aliases the section contents it was decoded from.
type HashIndex struct {
	wide       []byte // slots followed by the block offsets; loads of 8 bytes at any slot stay inside
	fileOff    int64  // file offset of slot 0, for errors
	offsets    []byte // numBlocks+1 uint64LE
	numSlots   uint64
	numBlocks  int
	width      uint64
	blockBits  uint
	offsetBits uint
	tagBits    uint
}

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
		return x, Corruptf(SectionHashIndex, off, "%d bytes cannot hold the %d-byte header", len(contents), HashIndexHeaderLen)
	}
	width, blockBits, offsetBits, pad := uint64(contents[0]), uint(contents[1]), uint(contents[2]), uint64(contents[3])
	nb := uint64(binary.LittleEndian.Uint32(contents[4:]))
	numSlots := binary.LittleEndian.Uint64(contents[8:])
	switch {
	case width < 4 || width > 8:
		return x, Corruptf(SectionHashIndex, off, "slot width %d is not 4 to 8 bytes", width)
	case uint64(blockBits)+uint64(offsetBits) > 8*width:
		return x, Corruptf(SectionHashIndex, off+1, "%d block bits and %d offset bits do not fit a %d-byte slot", blockBits, offsetBits, width)
	case offsetBits > 32:
		return x, Corruptf(SectionHashIndex, off+2, "%d offset bits: entry offsets are below 2^32", offsetBits)
	case nb != numBlocks:
		return x, Corruptf(SectionHashIndex, off+4, "%d data blocks, properties say %d", nb, numBlocks)
	case blockBits < 64 && nb >= 1<<blockBits:
		return x, Corruptf(SectionHashIndex, off+1, "%d data blocks need more than %d block bits", nb, blockBits)
	case (uint64(off)+HashIndexHeaderLen+pad)%64 != 0 || pad > 63:
		return x, Corruptf(SectionHashIndex, off+3, "padding of %d bytes does not align the slots to 64 bytes", pad)
	}
	rest := uint64(len(contents) - HashIndexHeaderLen)
	if rest < pad || numSlots > (rest-pad)/width || (rest-pad-numSlots*width) != 8*(nb+1) {
		return x, Corruptf(SectionHashIndex, off+8, "%d slots of %d bytes and %d block offsets do not fill %d bytes", numSlots, width, nb+1, len(contents))
	}
	for i := uint64(0); i < pad; i++ {
		if contents[HashIndexHeaderLen+i] != 0 {
			return x, Corruptf(SectionHashIndex, off+HashIndexHeaderLen+int64(i), "non-zero padding byte")
		}
	}
	if numSlots == 0 && numBlocks > 0 {
		return x, Corruptf(SectionHashIndex, off+8, "no slots for %d data blocks", numBlocks)
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
	}
	prev := uint64(0)
	for i := 0; i <= int(nb); i++ {
		o := binary.LittleEndian.Uint64(x.offsets[8*i:])
		bad := o != 0 && i == 0 || i > 0 && (o < prev || o-prev < BlockTrailerLen) || i == int(nb) && o != dataSize
		if bad {
			return HashIndex{}, Corruptf(SectionHashIndex, off+int64(start+numSlots*width)+8*int64(i), "block offset %d of %d is %d (previous %d, data size %d)", i, nb, o, prev, dataSize)
		}
		prev = o
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
func (x *HashIndex) BlockHandle(i int) BlockHandle {
	o := binary.LittleEndian.Uint64(x.offsets[8*i:])
	next := binary.LittleEndian.Uint64(x.offsets[8*i+8:])
	return BlockHandle{Offset: o, Length: next - o - BlockTrailerLen}
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

// Next returns the location in the next slot whose tag matches: data
// block number block (below NumBlocks, checked) and entry offset in the
// decoded block (not checked). ok is false once an empty slot ends the
// probe sequence. A slot naming a block past the last gives a corruption
// error.
func (p *HashProbe) Next() (block int, offset uint32, ok bool, err error) {
	if !p.valid {
		return 0, 0, false, nil
	}
	x := p.x
	for p.left > 0 {
		v := binary.LittleEndian.Uint64(x.wide[p.pos*x.width:])
		if x.width < 8 {
			v &= 1<<(8*x.width) - 1
		}
		slot := p.pos
		if p.pos++; p.pos == x.numSlots {
			p.pos = 0
		}
		p.left--
		b := v >> x.offsetBits & (1<<x.blockBits - 1)
		if b == 0 {
			break
		}
		if v>>(x.blockBits+x.offsetBits) != p.tag {
			continue
		}
		if b > uint64(x.numBlocks) {
			p.valid = false
			return 0, 0, false, Corruptf(SectionHashIndex, x.fileOff+int64(slot*x.width), "slot %d names data block %d of %d", slot, b-1, x.numBlocks)
		}
		return int(b - 1), uint32(v & (1<<x.offsetBits - 1)), true, nil
	}
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

// EntriesEnd returns the end of the entries of decoded block contents:
// the offset of the restart array. blockOff is the block's file offset,
// for errors, which wrap ErrCorrupt.
func EntriesEnd(contents []byte, blockOff int64) (int, error) {
	n := len(contents)
	if n < 4 {
		return 0, Corruptf(SectionDataBlock, blockOff, "block of %d bytes has no restart count", n)
	}
	nr := uint64(binary.LittleEndian.Uint32(contents[n-4:]))
	if nr > uint64(n-4)/4 {
		return 0, Corruptf(SectionDataBlock, blockOff, "restart count %d does not fit in a %d-byte block", nr, n)
	}
	return n - 4 - 4*int(nr), nil
}

// EntryAt decodes the self-contained entry (shared = 0) at byte offset off
// of decoded data block contents: its key and value, aliasing contents.
// blockOff is the block's file offset, for errors. An entry that overruns
// the block's entries, or is prefix-compressed, gives an error wrapping
// ErrCorrupt.
func EntryAt(contents []byte, blockOff int64, off uint32) (key, value []byte, err error) {
	end, err := EntriesEnd(contents, blockOff)
	if err != nil {
		return nil, nil, err
	}
	return EntryIn(contents[:end], blockOff, off)
}

// EntryIn is EntryAt for a block whose entries (the contents up to
// EntriesEnd) are already known, so that a lookup need not read the
// restart count at the far end of the block: another cache line.
func EntryIn(entries []byte, blockOff int64, off uint32) (key, value []byte, err error) {
	end := len(entries)
	p := int(off)
	if uint64(off) >= uint64(end) {
		return nil, nil, Corruptf(SectionDataBlock, blockOff, "hash index entry offset %d lies past the entries (%d bytes)", off, end)
	}
	var shared, unshared, vlen uint64
	if p+3 <= end && entries[p]|entries[p+1]|entries[p+2] < 0x80 {
		// One-byte varints: the common case.
		shared, unshared, vlen = uint64(entries[p]), uint64(entries[p+1]), uint64(entries[p+2])
		p += 3
	} else {
		var k1, k2, k3 int
		shared, k1 = binary.Uvarint(entries[p:end])
		if k1 > 0 {
			unshared, k2 = binary.Uvarint(entries[p+k1 : end])
		}
		if k1 > 0 && k2 > 0 {
			vlen, k3 = binary.Uvarint(entries[p+k1+k2 : end])
		}
		if k1 <= 0 || k2 <= 0 || k3 <= 0 {
			return nil, nil, Corruptf(SectionDataBlock, blockOff, "bad entry header at block offset %d", off)
		}
		p += k1 + k2 + k3
	}
	if shared != 0 {
		return nil, nil, Corruptf(SectionDataBlock, blockOff, "entry at block offset %d shares %d key bytes: a hash-indexed entry must stand alone", off, shared)
	}
	if unshared > uint64(end-p) || vlen > uint64(end-p)-unshared {
		return nil, nil, Corruptf(SectionDataBlock, blockOff, "entry at block offset %d (key %d bytes, value %d bytes) overruns the entries", off, unshared, vlen)
	}
	k := p + int(unshared)
	return entries[p:k:k], entries[k : k+int(vlen) : k+int(vlen)], nil
}
