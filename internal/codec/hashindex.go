package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/prefetch"
)

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

// hashEntry is one key's location, recorded while a table is built.
type hashEntry struct {
	m      uint64 // hashIndexMix of the key's KeyHash
	block  uint32 // data block number
	offset uint32 // byte offset of the entry in the decoded block
}

// hashBucketBits sets the number of buckets (256) a HashIndexWriter sorts
// entries into by the top bits of m. The home slot grows with m, so each
// bucket's slots form one contiguous run (about 1.5 slots per entry of the
// bucket), and Append inserts bucket after bucket, sweeping the slot array
// once instead of missing the cache on every entry: at 1M entries the
// random inserts took 55 ms, a separate partition pass 40 ms.
const hashBucketBits = 8

// hashChunkLen is the number of entries in each chunk of a bucket (16
// KiB): buckets grow by whole chunks, never re-copying what they hold.
const hashChunkLen = 1024

// hashChunkPool recycles chunks between builds: a table's builder is
// usually followed by another (an LSM compaction writes several), and
// fresh memory costs a page fault per 4 KiB on first touch, which made up
// most of the writer's time at 1M entries.
var hashChunkPool = sync.Pool{New: func() any {
	c := make([]hashEntry, 0, hashChunkLen)
	return &c
}}

// HashIndexWriter collects the location of every entry of a table and
// encodes the hash index section. The zero value is ready to use. It holds
// 16 bytes per entry, in pooled chunks, until Append.
type HashIndexWriter struct {
	// FileOffsets makes Append store each entry's file offset (block
	// offset + offset in the block) instead of its offset in the decoded
	// block. Set it when every data block is stored raw: a lookup then
	// loads the entry straight from the slot, in parallel with the
	// block's bookkeeping, instead of after reading the block's offset.
	// Append ignores it when file offsets would not fit a slot; the
	// decoded index's FileOffsets says which was written.
	FileOffsets bool

	// DecodedStarts, if set for a table whose blocks are compressed, holds
	// the offset of every data block's decoded contents in the
	// concatenation of all of them, then their total size. Append then
	// stores each entry's offset in that concatenation and the table
	// itself, so that a reader keeping decoded blocks at those offsets in
	// one region finds an entry from its slot alone.
	DecodedStarts []uint64

	// FirstKeyShared writes the hash index of format Version4: slots hold
	// each entry's offset in its decoded block, whose entries are
	// prefix-compressed against the block's first key
	// (BlockWriter.ShareWithFirst) rather than stored whole; the table has
	// CompactHashIndexSlots slots of the narrowest width leaving a 5-bit
	// tag. FileOffsets and DecodedStarts are then ignored.
	FirstKeyShared bool

	// FilterLen, if not 0, leaves room for a filter of that many bytes at
	// the end of a FirstKeyShared section, after the block offsets, and
	// flags it: the filter of every key of the table, under the table's
	// filter policy, which a partitioned Version4 table carries besides
	// its partitions' filters so that a memory-mapped reader rules an
	// absent key out with one probe of one filter. Append neither reads
	// nor writes those bytes: the caller fills them, before, after or
	// while Append runs (the builder generates the filter there).
	FilterLen int

	buckets   [][][]hashEntry          // 1<<hashBucketBits of them, by m's top bits; each a list of full chunks
	cur       [][]hashEntry            // each bucket's chunk being filled: one slice header per bucket, side by side, so that Add loads one
	stage     *[hashStageLen]hashEntry // entries not yet in their buckets (flushStage)
	staged    int
	n         uint64
	maxOffset uint32
}

// hashStageLen is the number of entries Add gathers before it sorts them
// into their buckets' chunks. Written one at a time, each entry goes to
// one of 256 chunks, whose lines the rest of a build (the data block,
// the compressor, the filter) evicts between two writes: in a 1M-entry
// build, Add took 32 ns an entry, against 7 in a loop of its own. Sorted
// 1024 at a time, each chunk takes its 4 or so entries in one burst: 22
// ns, and the builder's own list of hashes, written beside them, went
// from 12 ns an entry to 1.
const hashStageLen = 1024

// Add records that the key whose KeyHash is hash is stored in data block
// number block, at byte offset offset of the block's decoded contents. The
// entry there must have shared = 0.
func (w *HashIndexWriter) Add(hash uint64, block, offset uint32) {
	if w.stage == nil {
		w.stage = new([hashStageLen]hashEntry)
	} else if w.staged == hashStageLen {
		w.flushStage()
	}
	w.stage[w.staged] = hashEntry{hashIndexMix(hash), block, offset}
	w.staged++
	w.n++
	w.maxOffset = max(w.maxOffset, offset)
}

// flushStage appends the staged entries to their buckets' chunks, in the
// order they were added.
func (w *HashIndexWriter) flushStage() {
	if w.staged == 0 {
		return
	}
	if w.buckets == nil {
		w.buckets = make([][][]hashEntry, 1<<hashBucketBits)
		w.cur = make([][]hashEntry, 1<<hashBucketBits)
	}
	for _, e := range w.stage[:w.staged] {
		b := e.m >> (64 - hashBucketBits)
		c := &w.cur[b]
		if len(*c) == cap(*c) {
			if *c != nil {
				w.buckets[b] = append(w.buckets[b], *c)
			}
			*c = (*hashChunkPool.Get().(*[]hashEntry))[:0]
		}
		*c = append(*c, e)
	}
	w.staged = 0
}

// Len returns the number of entries added.
func (w *HashIndexWriter) Len() uint64 { return w.n }

// hashLayout is the shape of the section Append writes.
type hashLayout struct {
	flags                          byte
	base                           []uint64 // added to each entry's offset in its block; nil for none
	numSlots, width, pad           uint64
	blockBits, offsetBits, tagBits uint
	offWidth                       int // bytes per block offset
	tables                         int // bytes after the slots: block offsets, decoded starts, filter
	total                          int // bytes of the whole section, header included
}

// layout works out the section's shape from the entries recorded and
// Append's arguments.
func (w *HashIndexWriter) layout(sectionOffset uint64, blockOffsets []uint64) hashLayout {
	var l hashLayout
	numBlocks := uint64(len(blockOffsets) - 1)
	l.blockBits = uint(bits.Len64(numBlocks)) // the field holds block+1; 0 means empty
	l.offsetBits = uint(bits.Len32(w.maxOffset))
	// File offsets are used only if they fit a slot with the block number
	// and a tag (a raw table of 2^22 4-KiB blocks already needs 23+35+8
	// bits); otherwise the slots hold offsets in the decoded blocks.
	minTag := uint(hashIndexMinTagBits)
	l.numSlots = HashIndexSlots(w.n)
	l.offWidth = 8
	if w.FirstKeyShared {
		l.flags |= hashIndexFirstKey
		minTag = compactMinTagBits
		l.numSlots = CompactHashIndexSlots(w.n)
		if w.FilterLen > 0 {
			l.flags |= hashIndexFilter
		}
		if blockOffsets[numBlocks] <= math.MaxUint32 {
			l.flags |= hashIndexNarrowOffsets
			l.offWidth = 4
		}
	} else if fb := uint(bits.Len64(blockOffsets[numBlocks])); w.FileOffsets && l.blockBits+fb+hashIndexMinTagBits <= 64 {
		l.base = blockOffsets
		l.flags |= hashIndexFileOffsets
		l.offsetBits = fb
	} else if d := w.DecodedStarts; len(d) == len(blockOffsets) && l.blockBits+uint(bits.Len64(d[numBlocks]))+hashIndexMinTagBits <= 64 {
		l.base = d
		l.flags |= hashIndexDecodedOffsets
		l.offsetBits = uint(bits.Len64(d[numBlocks]))
	}
	// At most 8 bytes: blockBits <= 32 and offsetBits <= 30 (the builder
	// keeps blocks below 1 GiB) leave a tag of at least 2 bits even then.
	width := min(8, max(4, (l.blockBits+l.offsetBits+minTag+7)/8))
	l.width = uint64(width)
	l.tagBits = 8*width - l.blockBits - l.offsetBits
	l.pad = (64 - (sectionOffset+HashIndexHeaderLen)%64) % 64
	l.tables = l.offWidth * int(numBlocks+1) // block offsets, and decoded starts if flagged
	if l.flags&hashIndexDecodedOffsets != 0 {
		l.tables *= 2
	}
	if l.flags&hashIndexFilter != 0 {
		l.tables += w.FilterLen
	}
	l.total = HashIndexHeaderLen + int(l.pad) + int(l.numSlots*l.width) + l.tables
	return l
}

// SectionLen returns the number of bytes Append will append given the
// same arguments and no more calls to Add: a caller can allocate the
// section's buffer itself.
func (w *HashIndexWriter) SectionLen(sectionOffset uint64, blockOffsets []uint64) int {
	return w.layout(sectionOffset, blockOffsets).total
}

// Append appends the hash index section contents (without trailer) to dst
// and returns the extended slice. sectionOffset is the file offset the
// section will be written at (it sets the padding); blockOffsets holds the
// file offset of every data block, in order, followed by the data
// section's size. Every block number given to Add must be below
// len(blockOffsets)-1. It appends SectionLen bytes, of which the last
// FilterLen are left as dst's spare capacity held them (the caller's to
// fill). Append releases the recorded entries.
func (w *HashIndexWriter) Append(dst []byte, sectionOffset uint64, blockOffsets []uint64) []byte {
	w.flushStage()
	l := w.layout(sectionOffset, blockOffsets)
	numBlocks := uint64(len(blockOffsets) - 1)
	numSlots, width, base, offWidth := l.numSlots, l.width, l.base, l.offWidth
	blockBits, offsetBits := l.blockBits, l.offsetBits
	dst = slices.Grow(dst, l.total)
	dst = append(dst, byte(width), byte(blockBits), byte(offsetBits), l.flags)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(numBlocks))
	dst = binary.LittleEndian.AppendUint64(dst, numSlots)
	start := len(dst)
	dst = dst[:start+int(l.pad)+int(numSlots*width)+l.tables]
	clear(dst[start : len(dst)-w.FilterLen])
	start += int(l.pad)
	slots := dst[start : start+int(numSlots*width)]
	// The 8 bytes after each slot are writable: block offsets follow.
	wide := dst[start:]
	tagMask := uint64(1)<<l.tagBits - 1
	slotMask := uint64(1)<<(8*width) - 1
	if width == 8 {
		slotMask = ^uint64(0)
	}
	for bi, bucket := range w.buckets {
		if c := w.cur[bi]; len(c) > 0 {
			bucket = append(bucket, c)
		}
		w.cur[bi] = nil
		for _, chunk := range bucket {
			for _, e := range chunk {
				off := uint64(e.offset)
				if base != nil {
					off += base[e.block]
				}
				v := (e.m&tagMask)<<(blockBits+offsetBits) | uint64(e.block+1)<<offsetBits | off
				pos, _ := bits.Mul64(e.m, numSlots)
				if width == 4 {
					// 4-byte slots (most tables) take 4-byte loads and
					// stores: an 8-byte store then a load of the next
					// slot overlapping it defeats store forwarding.
					for binary.LittleEndian.Uint32(slots[4*pos:]) != 0 {
						if pos++; pos == numSlots {
							pos = 0
						}
					}
					binary.LittleEndian.PutUint32(slots[4*pos:], uint32(v))
					continue
				}
				for {
					p := pos * uint64(width)
					old := binary.LittleEndian.Uint64(wide[p:])
					if old&slotMask == 0 {
						binary.LittleEndian.PutUint64(wide[p:], old&^slotMask|v)
						break
					}
					if pos++; pos == numSlots {
						pos = 0
					}
				}
			}
		}
		for _, chunk := range bucket {
			chunk = chunk[:0]
			hashChunkPool.Put(&chunk)
		}
		w.buckets[bi] = nil
	}
	offs := dst[start+len(slots):]
	for i, off := range blockOffsets {
		if offWidth == 4 {
			binary.LittleEndian.PutUint32(offs[4*i:], uint32(off))
		} else {
			binary.LittleEndian.PutUint64(offs[8*i:], off)
		}
	}
	if l.flags&hashIndexDecodedOffsets != 0 {
		for i, off := range w.DecodedStarts {
			binary.LittleEndian.PutUint64(offs[8*(len(blockOffsets)+i):], off)
		}
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

// hashIndexFirstKey is the header flag (byte 3, bit 2) of a Version4
// hash index: slots hold offsets in the decoded block, whose entries are
// prefix-compressed against the block's first key.
const hashIndexFirstKey = 4

// hashIndexNarrowOffsets is the header flag (byte 3, bit 4), only with
// hashIndexFirstKey, saying that the block offsets are uint32LE, as a
// Version4 writer stores them when the data blocks end below 4 GiB.
const hashIndexNarrowOffsets = 16

// hashIndexFilter is the header flag (byte 3, bit 3), only with
// hashIndexFirstKey, saying that the table's whole filter follows the
// block offsets, to the end of the section.
const hashIndexFilter = 8

// FirstKeyShared reports whether the index is a Version4 one: slots hold
// offsets in the decoded block, and the entry there shares its key's
// first bytes with the block's first key, not with the previous entry
// (EntryParts decodes it).
func (x *HashIndex) FirstKeyShared() bool { return x.firstKey }

// Filter returns the table's whole filter carried by a Version4 hash
// index section, under the table's filter policy, or nil if the section
// has none. It aliases the section.
func (x *HashIndex) Filter() []byte { return x.filter }

// hashIndexFileOffsets is the header flag (byte 3, bit 0) saying that
// slots hold entries' file offsets rather than offsets in decoded blocks.
const hashIndexFileOffsets = 1

// hashIndexDecodedOffsets is the header flag (byte 3, bit 1) saying that
// slots hold entries' offsets in the concatenation of all decoded data
// blocks, whose starts follow the block offsets.
const hashIndexDecodedOffsets = 2

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

// EntriesEnd returns the end of the entries of decoded block contents:
// the offset of the restart array. blockOff is the block's file offset,
// for errors, which wrap ErrCorrupt.
func EntriesEnd(contents []byte, blockOff int64) (int, error) {
	n := len(contents)
	if n < 4 {
		return 0, format.Corruptf(format.SectionDataBlock, blockOff, "block of %d bytes has no restart count", n)
	}
	nr := uint64(binary.LittleEndian.Uint32(contents[n-4:]))
	if nr > uint64(n-4)/4 {
		return 0, format.Corruptf(format.SectionDataBlock, blockOff, "restart count %d does not fit in a %d-byte block", nr, n)
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
	shared, unshared, vlen, p, fault := parseEntryHeader(entries, int(off))
	switch {
	case fault == entryOutside:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "hash index entry offset %d lies past the entries (%d bytes)", off, len(entries))
	case fault == entryOverrun:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d (key %d bytes, value %d bytes) overruns the entries", off, unshared, vlen)
	case fault != entryOK && fault != entrySharedTooLong:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "bad entry header at block offset %d", off)
	case shared != 0:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d shares %d key bytes: a hash-indexed entry must stand alone", off, shared)
	}
	k := p + int(unshared)
	return entries[p:k:k], entries[k : k+int(vlen) : k+int(vlen)], nil
}

// EntryParts decodes the entry at byte offset off of the entries of a
// Version4 data block (its contents up to EntriesEnd), whose entries
// share prefixes with the block's first key (BlockWriter.ShareWithFirst):
// the entry's key is head followed by tail, where head is the first key's
// first shared bytes. All three slices alias entries. blockOff is the
// block's file offset, for errors, which wrap ErrCorrupt: an offset past
// the entries, a bad header, an entry overrunning the entries, a first
// entry that is not whole, or a shared length beyond the first key.
func EntryParts(entries []byte, blockOff int64, off uint32) (head, tail, value []byte, err error) {
	shared, unshared, vlen, p, fault := parseEntryHeader(entries, int(off))
	switch {
	case fault == entryOutside:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "hash index entry offset %d lies past the entries (%d bytes)", off, len(entries))
	case fault == entryOverrun:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d (key %d bytes, value %d bytes) overruns the entries", off, unshared, vlen)
	case fault != entryOK && fault != entrySharedTooLong:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "bad entry header at block offset %d", off)
	}
	k := p + int(unshared)
	tail, value = entries[p:k:k], entries[k:k+int(vlen):k+int(vlen)]
	if shared == 0 {
		return nil, tail, value, nil
	}
	s0, u0, _, p0, fault := parseEntryHeader(entries, 0)
	switch {
	case fault != entryOK && fault != entrySharedTooLong || s0 != 0:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "the first entry of a block is not stored whole")
	case shared > u0:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d shares %d key bytes with a first key of %d bytes", off, shared, u0)
	}
	return entries[p0 : p0+int(shared) : p0+int(shared)], tail, value, nil
}
