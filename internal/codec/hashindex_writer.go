package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"
)

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
