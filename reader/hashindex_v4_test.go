package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// Flags of a version 4 hash index section (format.Version4's doc, and
// codec: bit 4 says the block offsets are 4 bytes each).
const (
	v4FlagFirstKey = 4
	v4FlagFilter   = 8
	v4FlagNarrow   = 16
)

// compactSection is the hash index section of a version 4 table, located
// and parsed by the test itself from the layout in package format's doc,
// so that tests can rewrite it, re-encode it in another valid layout, and
// reseal its checksum.
type compactSection struct {
	data                  []byte // the whole table; edits go here
	props                 format.Properties
	off, length           uint64 // section contents: file offset and length (trailer excluded)
	width                 uint64 // slot width in bytes
	blockBits, offsetBits uint
	flags                 byte
	numBlocks             int
	numSlots              uint64
	slots                 uint64 // file offset of slot 0
	offsets               uint64 // file offset of the block offsets
	offWidth              uint64 // bytes per block offset: 4 (narrow) or 8
	filter                uint64 // file offset of the whole filter (flag 8), else the section's end
	blocks                []blockInfo
	loc                   map[string][2]uint64 // key -> (block field, offset field) of its slot
	keys                  []compactKey         // every key, in order, where it lies
}

// compactKey is an entry of a version 4 table and where it lies.
type compactKey struct {
	key        string
	block, off int // data block number, offset of the entry in the decoded block
}

// parseCompactSection parses the hash index of data, a version 4 table
// without a splitter, and works out which slot locates each key.
func parseCompactSection(t *testing.T, data []byte) *compactSection {
	t.Helper()
	p := tableProps(t, data)
	if p.FormatVersion != format.Version4 || p.Splitter != "" || p.HashIndexSize < codec.HashIndexHeaderLen+format.BlockTrailerLen {
		t.Fatalf("not a version 4 table without a splitter: version %d, splitter %q, hash index size %d", p.FormatVersion, p.Splitter, p.HashIndexSize)
	}
	h := &compactSection{data: data, props: p, off: p.DataSize, length: p.HashIndexSize - format.BlockTrailerLen}
	c := data[h.off : h.off+h.length]
	h.width, h.blockBits, h.offsetBits, h.flags = uint64(c[0]), uint(c[1]), uint(c[2]), c[3]
	h.numBlocks = int(binary.LittleEndian.Uint32(c[4:]))
	h.numSlots = binary.LittleEndian.Uint64(c[8:])
	h.offWidth = 8
	if h.flags&v4FlagNarrow != 0 {
		h.offWidth = 4
	}
	wantFlags := byte(v4FlagFirstKey)
	if p.Partitioned {
		wantFlags |= v4FlagFilter
	}
	if h.flags&^v4FlagNarrow != wantFlags {
		t.Fatalf("hash index flags %#02x, want %#02x", h.flags, wantFlags)
	}
	h.slots = (h.off + codec.HashIndexHeaderLen + 63) / 64 * 64
	h.offsets = h.slots + h.numSlots*h.width
	h.filter = h.offsets + h.offWidth*uint64(h.numBlocks+1)
	end := h.off + h.length
	if h.filter > end || h.filter == end && p.Partitioned || h.filter < end && !p.Partitioned || uint64(h.numBlocks) != p.NumDataBlocks {
		t.Fatalf("hash index layout: %d slots of %d bytes at %d, %d blocks, flags %#02x; section [%d, %d)", h.numSlots, h.width, h.slots, h.numBlocks, h.flags, h.off, end)
	}
	h.blocks = dataBlocks(t, data)
	for i, b := range h.blocks {
		if got := h.blockOffset(i); got != b.Handle.Offset {
			t.Fatalf("hash index block offset %d is %d, the index says %d", i, got, b.Handle.Offset)
		}
		for j, k := range b.Keys {
			h.keys = append(h.keys, compactKey{k, i, b.Offsets[j]})
		}
	}
	if got := h.blockOffset(h.numBlocks); got != p.DataSize {
		t.Fatalf("last hash index block offset %d, data size %d", got, p.DataSize)
	}
	byLoc := map[[2]uint64]string{}
	for _, k := range h.keys {
		byLoc[[2]uint64{uint64(k.block + 1), uint64(k.off)}] = k.key
	}
	h.loc = map[string][2]uint64{}
	for s := range h.numSlots {
		_, blk, off := h.fields(h.slot(s))
		if k, ok := byLoc[[2]uint64{blk, off}]; ok && blk != 0 {
			h.loc[k] = [2]uint64{blk, off}
		}
	}
	if uint64(len(h.loc)) != p.NumEntries || h.occupied() != p.NumEntries {
		t.Fatalf("the hash index's slots do not locate the table's %d entries", p.NumEntries)
	}
	return h
}

func (h *compactSection) blockOffset(i int) uint64 {
	p := h.offsets + h.offWidth*uint64(i)
	if h.offWidth == 4 {
		return uint64(binary.LittleEndian.Uint32(h.data[p:]))
	}
	return binary.LittleEndian.Uint64(h.data[p:])
}

func (h *compactSection) setBlockOffset(i int, v uint64) {
	p := h.offsets + h.offWidth*uint64(i)
	if h.offWidth == 4 {
		binary.LittleEndian.PutUint32(h.data[p:], uint32(v))
	} else {
		binary.LittleEndian.PutUint64(h.data[p:], v)
	}
}

func (h *compactSection) slot(s uint64) uint64 {
	var b [8]byte
	copy(b[:], h.data[h.slots+s*h.width:h.slots+(s+1)*h.width])
	return binary.LittleEndian.Uint64(b[:])
}

func (h *compactSection) setSlot(s, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(h.data[h.slots+s*h.width:h.slots+(s+1)*h.width], b[:h.width])
}

func (h *compactSection) fields(v uint64) (tag, block, off uint64) {
	return v >> (h.blockBits + h.offsetBits), v >> h.offsetBits & (1<<h.blockBits - 1), v & (1<<h.offsetBits - 1)
}

func (h *compactSection) occupied() uint64 {
	var n uint64
	for s := range h.numSlots {
		if _, b, _ := h.fields(h.slot(s)); b != 0 {
			n++
		}
	}
	return n
}

// slotOf returns the slot locating key.
func (h *compactSection) slotOf(t *testing.T, key string) uint64 {
	t.Helper()
	want, ok := h.loc[key]
	if !ok {
		t.Fatalf("no slot for %q", key)
	}
	for s := range h.numSlots {
		if _, b, o := h.fields(h.slot(s)); [2]uint64{b, o} == want {
			return s
		}
	}
	t.Fatalf("slot for %q not found", key)
	return 0
}

// retarget points key's slot (keeping its tag) at block field blk and
// offset field off, which must fit their bits.
func (h *compactSection) retarget(t *testing.T, key string, blk, off uint64) {
	t.Helper()
	if blk >= 1<<h.blockBits || off >= 1<<h.offsetBits {
		t.Skipf("block %d or offset %d does not fit %d and %d bits", blk, off, h.blockBits, h.offsetBits)
	}
	s := h.slotOf(t, key)
	tag, _, _ := h.fields(h.slot(s))
	h.setSlot(s, tag<<(h.blockBits+h.offsetBits)|blk<<h.offsetBits|off)
}

// keyAt returns where key lies.
func (h *compactSection) keyAt(t *testing.T, key string) compactKey {
	t.Helper()
	for _, k := range h.keys {
		if k.key == key {
			return k
		}
	}
	t.Fatalf("key %q is in no block", key)
	return compactKey{}
}

// reseal recomputes the section's trailer checksum.
func (h *compactSection) reseal() {
	stored := h.data[h.off : h.off+h.length]
	binary.LittleEndian.PutUint32(h.data[h.off+h.length+1:], codec.BlockChecksum(stored, h.data[h.off+h.length]))
}

// wholeFilter returns the whole filter the section carries (nil in a
// one-level table).
func (h *compactSection) wholeFilter() []byte {
	return h.data[h.filter : h.off+h.length]
}

// compactLayout is a way to encode a version 4 hash index section that
// format's doc allows: slots of width bytes (at least what the fields and
// a 5-bit tag need), block offsets of 4 bytes (narrow, flag 16) or 8.
type compactLayout struct {
	width  int
	narrow bool
}

// encode writes the section's contents for a section at file offset
// off, from the specification alone: header, zero padding to a multiple
// of 64, slots placed by linear probing from each key's SplitMix64-mixed
// XXH64 (home slot: the high 64 bits of m·numSlots; tag: m's low bits),
// the block offsets, then the whole filter, if any.
func (h *compactSection) encode(off uint64, l compactLayout, filter []byte) []byte {
	numSlots := h.numSlots
	tagBits := uint(8*l.width) - h.blockBits - h.offsetBits
	flags := byte(v4FlagFirstKey)
	if l.narrow {
		flags |= v4FlagNarrow
	}
	if len(filter) > 0 {
		flags |= v4FlagFilter
	}
	out := []byte{byte(l.width), byte(h.blockBits), byte(h.offsetBits), flags}
	out = binary.LittleEndian.AppendUint32(out, uint32(h.numBlocks))
	out = binary.LittleEndian.AppendUint64(out, numSlots)
	out = append(out, make([]byte, (64-(off+codec.HashIndexHeaderLen)%64)%64)...)
	slots := make([]uint64, numSlots)
	for _, k := range h.keys {
		m := codec.KeyHash([]byte(k.key))
		m = (m ^ m>>30) * 0xbf58476d1ce4e5b9
		m = (m ^ m>>27) * 0x94d049bb133111eb
		m ^= m >> 31
		pos, _ := bits.Mul64(m, numSlots)
		for slots[pos] != 0 {
			pos = (pos + 1) % numSlots
		}
		slots[pos] = (m&(1<<tagBits-1))<<(h.blockBits+h.offsetBits) | uint64(k.block+1)<<h.offsetBits | uint64(k.off)
	}
	for _, v := range slots {
		out = binary.LittleEndian.AppendUint64(out, v)[:len(out)+l.width]
	}
	for i := range h.numBlocks + 1 {
		if l.narrow {
			out = binary.LittleEndian.AppendUint32(out, uint32(h.blockOffset(i)))
		} else {
			out = binary.LittleEndian.AppendUint64(out, h.blockOffset(i))
		}
	}
	return append(out, filter...)
}

// relayout returns the table with its hash index section's contents
// replaced by section, everything after it moved: a one-level table's
// filter section re-padded for its new offset, a partitioned table's
// partitions copied and the top-level index's offsets shifted. The
// properties' and footer's sizes and handles follow. props replaces the
// table's properties (sizes are set here).
func (h *compactSection) relayout(t *testing.T, section []byte, props format.Properties) []byte {
	t.Helper()
	orig := h.data
	f, err := footer.Decode(orig[len(orig)-footer.Size:], int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(orig[:h.off])
	out = codec.AppendTrailer(append(out, section...), section, format.BlockTypeRaw)
	props.HashIndexSize = uint64(len(section)) + format.BlockTrailerLen
	index := orig[f.Index.Offset : f.Index.Offset+f.Index.Length]
	if !props.Partitioned {
		name, filter, err := filterblock.DecodeSection(orig[f.Filter.Offset:f.Filter.Offset+f.Filter.Length], f.Filter.Offset)
		if err != nil {
			t.Fatal(err)
		}
		fs := filterblock.AppendSection(nil, uint64(len(out)), name, filter)
		f.Filter = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(fs))}
		out = codec.AppendTrailer(append(out, fs...), fs, format.BlockTypeRaw)
		props.FilterSize = f.Filter.Length + format.BlockTrailerLen
	} else {
		// The partitions do not depend on where they lie; only the
		// top-level index names their offsets.
		delta := uint64(len(out)) - f.Filter.Offset
		parts := orig[f.Filter.Offset:f.Index.Offset]
		f.Filter.Offset += delta
		out = append(out, parts...)
		var top codec.BlockIter
		if err := top.Init(format.SectionTopIndex, 0, index); err != nil {
			t.Fatal(err)
		}
		w := codec.BlockWriter{RestartInterval: 1}
		for ok := top.First(); ok; ok = top.Next() {
			ph, ok := codec.DecodePartitionHandle(top.Value())
			if !ok {
				t.Fatal("bad partition handle")
			}
			ph.Offset += delta
			w.Add(top.Key(), codec.AppendPartitionHandle(nil, ph))
		}
		if err := top.Err(); err != nil {
			t.Fatal(err)
		}
		index = slices.Clone(w.Finish())
	}
	f.Index = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(index))}
	out = codec.AppendTrailer(append(out, index...), index, format.BlockTypeRaw)
	props.IndexSize = f.Index.Length + format.BlockTrailerLen
	pb := codec.AppendProperties(nil, &props)
	f.Properties = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(pb))}
	out = codec.AppendTrailer(append(out, pb...), pb, format.BlockTypeRaw)
	return f.Append(out)
}

// compactTables builds the version 4 tables the tests below rewrite: one
// level with raw and with snappy blocks, and partitioned (the hash index
// section carrying the whole filter). es is what they hold.
func compactTables(t *testing.T) (es []entry, tables []struct {
	name string
	data []byte
}) {
	es = numbered(300, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("x", i%40)) })
	for _, c := range []struct {
		name string
		opts builder.Options
	}{
		{"one-level-raw", builder.Options{BlockSize: 512, RestartInterval: 4, Compression: format.NoCompression}},
		{"one-level-snappy", builder.Options{BlockSize: 512, RestartInterval: 4, Compression: format.SnappyCompression}},
		{"partitioned", builder.Options{BlockSize: 512, RestartInterval: 4, Compression: format.SnappyCompression, PartitionThreshold: 1, PartitionSize: 256}},
	} {
		data, p := build(t, es, &c.opts)
		if p.FormatVersion != format.Version4 || p.Partitioned != (c.opts.PartitionThreshold > 0) || p.NumDataBlocks < 4 {
			t.Fatalf("%s: version %d, partitioned %v, %d data blocks", c.name, p.FormatVersion, p.Partitioned, p.NumDataBlocks)
		}
		tables = append(tables, struct {
			name string
			data []byte
		}{c.name, data})
	}
	return es, tables
}

// checkAnswers opens data through New and Open and checks that Verify
// passes and that Get answers every key of es and ErrNotFound for absent
// keys.
func checkAnswers(t *testing.T, data []byte, es []entry) {
	t.Helper()
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		for _, e := range es {
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %s, %v; want %q", e.Key, shorten(v), err, e.Value)
			}
		}
		for _, k := range matrixAbsent(es) {
			if v, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q) of an absent key = %s, %v", k, shorten(v), err)
			}
		}
	})
}

// TestCompactHashIndexLayouts re-encodes the hash index section of
// version 4 tables from the specification alone: in the writer's layout,
// which must give the writer's bytes exactly, and in the other layouts
// the format allows and a reader must read (slots wider than needed, 5
// and 8 bytes; block offsets of 8 bytes without the narrow flag). Each
// table must pass Verify and answer every Get through both read paths.
func TestCompactHashIndexLayouts(t *testing.T) {
	es, tables := compactTables(t)
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			h := parseCompactSection(t, slices.Clone(tb.data))
			if h.width != 4 || h.offWidth != 4 {
				t.Fatalf("the writer chose %d-byte slots and %d-byte block offsets for %d entries in %d blocks, want 4 and 4", h.width, h.offWidth, len(es), h.numBlocks)
			}
			filter := slices.Clone(h.wholeFilter())
			// Linear probing places keys in slots by the order they are
			// inserted in, which the format leaves to the writer; the
			// occupied slots and what they hold do not depend on it.
			own := h.encode(h.off, compactLayout{int(h.width), true}, filter)
			writer := tb.data[h.off : h.off+h.length]
			if len(own) != len(writer) || !bytes.Equal(own[:h.slots-h.off], writer[:h.slots-h.off]) || !bytes.Equal(own[h.offsets-h.off:], writer[h.offsets-h.off:]) {
				t.Fatal("the section encoded from the specification differs from the writer's outside the slots")
			}
			var ownSlots, writerSlots []uint64
			ownSection := &compactSection{data: own, slots: h.slots - h.off, width: h.width}
			for s := range h.numSlots {
				a, b := ownSection.slot(s), h.slot(s)
				if (a == 0) != (b == 0) {
					t.Fatalf("slot %d: %#x encoded from the specification, %#x written", s, a, b)
				}
				ownSlots, writerSlots = append(ownSlots, a), append(writerSlots, b)
			}
			slices.Sort(ownSlots)
			slices.Sort(writerSlots)
			if !slices.Equal(ownSlots, writerSlots) {
				t.Fatal("the slots encoded from the specification hold other values than the writer's")
			}
			for _, l := range []compactLayout{{5, true}, {8, true}, {4, false}, {6, false}} {
				t.Run(fmt.Sprintf("width%d-narrow%v", l.width, l.narrow), func(t *testing.T) {
					data := h.relayout(t, h.encode(h.off, l, filter), h.props)
					h2 := parseCompactSection(t, slices.Clone(data))
					if h2.width != uint64(l.width) || (h2.offWidth == 4) != l.narrow {
						t.Fatalf("relaid table has %d-byte slots and %d-byte block offsets", h2.width, h2.offWidth)
					}
					checkAnswers(t, data, es)
				})
			}
		})
	}
}

// craftedCompact is a rewrite of a version 4 hash index section, resealed
// so that it passes every checksum.
type craftedCompact struct {
	name string
	edit func(t *testing.T, h *compactSection)
	// affected keys may give ErrNotFound or ErrCorrupt (never a wrong
	// value); every other key must read back, unless anyKey.
	affected []string
	anyKey   bool
	sections []string // Verify's error must name one of these
	want     string   // in Verify's error
}

// TestCompactHashIndexCrafted is TestHashIndexCrafted for version 4's
// compact hash index, in the writer's layout (4-byte slots, 4-byte block
// offsets) and relaid with 5-byte slots and 8-byte block offsets, over
// one-level tables (raw and snappy blocks) and a partitioned one: slots
// pointing at another entry, swapped, emptied, added, naming a block past
// the last or the wrong block, leading inside an entry, to the restart
// array, past the block or to the largest offset, and block offsets that
// disagree with the index. Get must never return a wrong value: the
// damaged key gives ErrNotFound or ErrCorrupt and, where the damage
// cannot touch them, every other key reads back; Verify must report
// ErrCorrupt naming the hash index (or the data block the slot leads
// into); scans, which do not use the hash index, read every entry.
func TestCompactHashIndexCrafted(t *testing.T) {
	es, tables := compactTables(t)
	for _, tb := range tables {
		for _, l := range []compactLayout{{4, true}, {5, false}} {
			t.Run(fmt.Sprintf("%s/width%d-narrow%v", tb.name, l.width, l.narrow), func(t *testing.T) {
				orig := tb.data
				if l != (compactLayout{4, true}) {
					h := parseCompactSection(t, slices.Clone(orig))
					orig = h.relayout(t, h.encode(h.off, l, slices.Clone(h.wholeFilter())), h.props)
				}
				compactCrafted(t, es, orig)
			})
		}
	}
}

func compactCrafted(t *testing.T, es []entry, orig []byte) {
	base := parseCompactSection(t, slices.Clone(orig))
	b1, b2 := base.blocks[1], base.blocks[2]
	if len(b1.Keys) < 4 || len(b2.Keys) < 2 {
		t.Fatalf("blocks 1 and 2 hold %d and %d keys", len(b1.Keys), len(b2.Keys))
	}
	// a and b lie in different blocks, a2 in a's block; a is neither the
	// first nor the last entry of its block, and not a restart point.
	a, a2, b := b1.Keys[1], b1.Keys[2], b2.Keys[1]
	ka := base.keyAt(t, a)
	entriesEnd := func(i int) int {
		end, err := codec.EntriesEnd(base.blocks[i].Contents, 0)
		if err != nil {
			t.Fatal(err)
		}
		return end
	}
	both := append(slices.Clone(b1.Keys), b2.Keys...)
	inSlots := []string{format.SectionHashIndex}
	orData := []string{format.SectionHashIndex, format.SectionDataBlock}
	cases := []craftedCompact{
		{"slot to another entry", func(t *testing.T, h *compactSection) { h.retarget(t, a, h.loc[b][0], h.loc[b][1]) },
			[]string{a}, false, inSlots, a},
		{"slot to another entry in the same block", func(t *testing.T, h *compactSection) { h.retarget(t, a, h.loc[a2][0], h.loc[a2][1]) },
			[]string{a}, false, inSlots, a},
		{"two slots swapped", func(t *testing.T, h *compactSection) {
			la, lb := h.loc[a], h.loc[b]
			h.retarget(t, a, lb[0], lb[1])
			h.retarget(t, b, la[0], la[1])
		}, []string{a, b}, false, inSlots, ""},
		// Keys placed after a's slot in its cluster become unreachable too.
		{"slot emptied", func(t *testing.T, h *compactSection) { h.setSlot(h.slotOf(t, a), 0) },
			[]string{a}, true, inSlots, ""},
		{"extra slot", func(t *testing.T, h *compactSection) {
			v := h.slot(h.slotOf(t, a))
			for s := range h.numSlots {
				if _, blk, _ := h.fields(h.slot(s)); blk == 0 {
					h.setSlot(s, v)
					return
				}
			}
			t.Fatal("no empty slot")
		}, nil, false, inSlots, "occupied"},
		{"slot names a block past the last", func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(h.numBlocks+1), uint64(ka.off))
		}, []string{a}, false, inSlots, ""},
		{"slot names the wrong block", func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(ka.block+3), uint64(ka.off))
		}, []string{a}, false, orData, ""},
		{"slot to the restart array", func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(ka.block+1), uint64(entriesEnd(ka.block)))
		}, []string{a}, false, orData, ""},
		{"slot past the block", func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(ka.block+1), uint64(len(base.blocks[ka.block].Contents)+7))
		}, []string{a}, false, orData, ""},
		{"slot to the largest offset", func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(ka.block+1), 1<<h.offsetBits-1)
		}, []string{a}, false, orData, ""},
		// Block 2 starts a byte early: block 1 loses its last trailer
		// byte, block 2 gains it.
		{"block offsets disagree with the index", func(t *testing.T, h *compactSection) {
			h.setBlockOffset(2, h.blockOffset(2)-1)
		}, both, false, orData, ""},
		// Rejected when the section is decoded: no Get through it.
		{"block offsets decrease", func(t *testing.T, h *compactSection) {
			o1, o2 := h.blockOffset(1), h.blockOffset(2)
			h.setBlockOffset(1, o2)
			h.setBlockOffset(2, o1)
		}, nil, true, inSlots, "block offset"},
		{"last block offset past the data", func(t *testing.T, h *compactSection) {
			h.setBlockOffset(h.numBlocks, h.blockOffset(h.numBlocks)+1)
		}, nil, true, inSlots, "block offset"},
	}
	// Slots leading inside a's entry: its header, key and value.
	for _, d := range []int{1, 2, 3, 5, 12} {
		cases = append(cases, craftedCompact{fmt.Sprintf("slot to entry offset +%d", d), func(t *testing.T, h *compactSection) {
			h.retarget(t, a, uint64(ka.block+1), uint64(ka.off+d))
		}, []string{a}, false, orData, ""})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := parseCompactSection(t, slices.Clone(orig))
			tc.edit(t, h)
			h.reseal()
			data := h.data
			affected := map[string]bool{}
			for _, k := range tc.affected {
				affected[k] = true
			}
			craftedReaders(t, data, func(t *testing.T, r *reader.Reader, verifyFirst bool) {
				verify := func() {
					err := r.Verify()
					ce := wantCorrupt(t, err, len(data), tc.want)
					if !slices.Contains(tc.sections, ce.Section) {
						t.Fatalf("Verify: %v names section %q, want one of %q", err, ce.Section, tc.sections)
					}
				}
				if verifyFirst {
					verify()
				}
				for _, e := range es {
					v, err := r.Get([]byte(e.Key))
					switch {
					case err == nil && string(v) != e.Value:
						t.Fatalf("Get(%q) = %s, want %q or an error", e.Key, shorten(v), e.Value)
					case err == nil:
					case !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, reader.ErrNotFound):
						t.Fatalf("Get(%q): %v, want a value, ErrNotFound or ErrCorrupt", e.Key, err)
					case !affected[e.Key] && !tc.anyKey:
						t.Fatalf("Get(%q) of a key the damage does not touch: %v", e.Key, err)
					}
				}
				for _, k := range matrixAbsent(es) {
					if v, err := r.Get([]byte(k)); err == nil {
						t.Fatalf("Get(%q) of an absent key = %s", k, shorten(v))
					} else if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("Get(%q) of an absent key: %v", k, err)
					}
				}
				if !verifyFirst {
					verify()
				}
				if got, err := scan(r); err != nil || !slices.Equal(got, es) {
					t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
				}
			})
		})
	}
}

// TestCompactHashIndexForgedEntry is TestHashIndexForgedEntry for version
// 4: a slot, with a resealed checksum, points at bytes inside another
// entry's value that encode an entry for the slot's key with a different
// value, stored whole or sharing its first bytes with the block's first
// key (as version 4 entries do). Get trusts a slot's offset, as format's
// doc says ("A reader trusts a slot only as far as its checksum"), so it
// may return the forged value; Verify, which requires every slot to lead
// to a real entry, must report it. Get's answer is logged.
func TestCompactHashIndexForgedEntry(t *testing.T) {
	const victim, forged = "key000050", "FORGED"
	for _, c := range []struct {
		name     string
		embedded []byte
	}{
		{"whole", append([]byte{0, byte(len(victim)), byte(len(forged))}, victim+forged...)},
		{"sharing the first key", append([]byte{3, byte(len(victim) - 3), byte(len(forged))}, victim[3:]+forged...)},
	} {
		for _, comp := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			t.Run(c.name+"/"+comp.String(), func(t *testing.T) {
				// Keys 30 to 39 carry the forged entry; the first of them
				// that is not its block's first entry is the carrier.
				es := numbered(100, func(i int) string {
					if i >= 30 && i < 40 {
						return "<" + string(c.embedded) + ">"
					}
					return fmt.Sprintf("value %d", i)
				})
				orig, _ := build(t, es, &builder.Options{BlockSize: 256, Compression: comp})
				h := parseCompactSection(t, slices.Clone(orig))
				var k compactKey
				for i := 30; i < 40 && k.off == 0; i++ {
					k = h.keyAt(t, es[i].Key)
				}
				if k.off == 0 {
					t.Fatal("every carrier is its block's first entry")
				}
				// The carrier's entry: 3 one-byte varints, its unshared
				// key bytes, then the value, whose byte 1 starts the
				// embedded entry.
				ent := h.blocks[k.block].Contents[k.off:]
				h.retarget(t, victim, uint64(k.block+1), uint64(k.off+3+int(ent[1])+1))
				h.reseal()
				craftedReaders(t, h.data, func(t *testing.T, r *reader.Reader, _ bool) {
					ce := wantCorrupt(t, r.Verify(), len(h.data))
					if ce.Section != format.SectionHashIndex && ce.Section != format.SectionDataBlock {
						t.Fatalf("Verify: %v, want an error in the hash index or the data block", ce)
					}
					v, err := r.Get([]byte(victim))
					switch {
					case err == nil && string(v) == forged:
						t.Logf("Get(%q) = %q: the forged value (undetectable without Verify)", victim, v)
					case err == nil && string(v) != "value 50":
						t.Fatalf("Get(%q) = %q, neither its value nor the forged one", victim, v)
					case err != nil && !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, reader.ErrNotFound):
						t.Fatalf("Get(%q): %v", victim, err)
					default:
						t.Logf("Get(%q) = %q, %v", victim, v, err)
					}
				})
			})
		}
	}
}

// TestCompactHashIndexLyingSizes is TestHashIndexLyingSizes for version
// 4, one-level and partitioned: the hash index header (slot count, block
// count, widths and bit counts), its flags (first key, narrow block
// offsets, the whole filter's, and those version 4 must not set), the
// whole filter's presence, and the properties (hash index size, the
// partitioned tag) lie, with valid checksums. Open or Verify must report
// corruption naming the lie, and no read may panic, give a wrong answer
// (ErrNotFound for a present key included) or allocate the claimed sizes.
func TestCompactHashIndexLyingSizes(t *testing.T) {
	const huge = 1 << 30
	_, tables := compactTables(t)
	for _, tb := range tables[1:] { // one-level snappy, partitioned
		t.Run(tb.name, func(t *testing.T) {
			orig := tb.data
			base := parseCompactSection(t, slices.Clone(orig))
			g := newGoldenTable(t, "v4-"+tb.name, orig)
			withHeader := func(edit func(hdr []byte)) []byte {
				h := parseCompactSection(t, slices.Clone(orig))
				edit(h.data[h.off : h.off+codec.HashIndexHeaderLen])
				h.reseal()
				return h.data
			}
			withProps := func(edit func(p *format.Properties)) []byte {
				p := base.props
				edit(&p)
				return withPropertiesBlock(orig, codec.AppendProperties(nil, &p), format.BlockTypeRaw)
			}
			// withSection relays the table around a section encoded in the
			// writer's layout with the given whole filter, then flags
			// edited.
			withSection := func(filter []byte, flags func(byte) byte) []byte {
				s := base.encode(base.off, compactLayout{int(base.width), true}, filter)
				s[3] = flags(s[3])
				return base.relayout(t, s, base.props)
			}
			keep := func(f byte) byte { return f }
			tests := []lyingTable{
				{"control", orig, ""},
				{"header: 2^40 slots", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], 1<<40) }), "slots"},
				{"header: no slots", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], 0) }), "slots"},
				{"header: one slot more", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], base.numSlots+1) }), ""},
				{"header: one slot fewer", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], base.numSlots-1) }), ""},
				{"header: block count", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint32(hdr[4:], uint32(base.numBlocks+1)) }), "data blocks"},
				{"header: slot width 9", withHeader(func(hdr []byte) { hdr[0] = 9 }), "slot width"},
				{"header: slot width 3", withHeader(func(hdr []byte) { hdr[0] = 3 }), "slot width"},
				{"header: 33 offset bits", withHeader(func(hdr []byte) { hdr[0], hdr[2] = 8, 33 }), "offset bits"},
				{"header: fields wider than the slot", withHeader(func(hdr []byte) { hdr[2] = byte(33 - base.blockBits) }), "do not fit"},
				{"header: no block bits", withHeader(func(hdr []byte) { hdr[1] = 0 }), "block bits"},
				{"flags: first key cleared", withHeader(func(hdr []byte) { hdr[3] &^= v4FlagFirstKey }), "unknown flags"},
				{"flags: file offsets", withHeader(func(hdr []byte) { hdr[3] |= 1 }), "unknown flags"},
				{"flags: decoded offsets", withHeader(func(hdr []byte) { hdr[3] |= 2 }), "unknown flags"},
				{"flags: bit 5", withHeader(func(hdr []byte) { hdr[3] |= 32 }), "unknown flags"},
				{"flags: narrow block offsets cleared", withHeader(func(hdr []byte) { hdr[3] &^= v4FlagNarrow }), ""},
				{"properties: no hash index size", withProps(func(p *format.Properties) { p.HashIndexSize = 0 }), ""},
				{"properties: hash index size 1 GiB", withProps(func(p *format.Properties) { p.HashIndexSize = huge }), "hash index size"},
				{"properties: data and hash index split moved", withProps(func(p *format.Properties) { p.DataSize += 64; p.HashIndexSize -= 64 }), ""},
				{"properties: hash index grown into the filter", withProps(func(p *format.Properties) { p.HashIndexSize += 64 }), ""},
				{"properties: partitioned tag flipped", withProps(func(p *format.Properties) { p.Partitioned = !p.Partitioned }), ""},
			}
			if base.props.Partitioned {
				tests = append(tests,
					lyingTable{"flags: whole filter cleared", withHeader(func(hdr []byte) { hdr[3] &^= v4FlagFilter }), "do not fill"},
					lyingTable{"whole filter removed", withSection(nil, keep), "filter"},
					lyingTable{"whole filter removed, flag kept", withSection(nil, func(f byte) byte { return f | v4FlagFilter }), "do not fill"},
				)
			} else {
				tests = append(tests,
					lyingTable{"flags: whole filter set", withHeader(func(hdr []byte) { hdr[3] |= v4FlagFilter }), "do not fill"},
					lyingTable{"whole filter added", withSection([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6}, keep), "filter"},
				)
			}
			checkLyingTables(t, g, tests)
		})
	}
}

// TestHeldFilterForged rewrites the whole filter a partitioned version 4
// table's hash index section carries (which a memory-mapped reader copies
// and probes before the slots), resealing the section, into other filters
// of valid encoding that miss the table's keys: every bit cleared, no
// lines at all (the filter of no key), and its first line alone. The
// reader trusts a filter as far as its checksum, as it does a slot, so a
// memory-mapped Get may answer ErrNotFound for a present key (counted and
// logged); it must never return a wrong value, and Verify must report the
// filter. A filter with every bit set matches every key: Get must answer
// exactly and Verify pass. Filters that do not decode as Bloom filters (a
// k byte of 0, a length that is not whole lines plus one byte) fail open,
// matching every key: Get must answer exactly; Verify may pass or report
// them.
func TestHeldFilterForged(t *testing.T) {
	es, tables := compactTables(t)
	orig := tables[2].data
	base := parseCompactSection(t, slices.Clone(orig))
	filter := base.wholeFilter()
	if len(filter) < 2*64+1 || (len(filter)-1)%64 != 0 || filter[len(filter)-1] == 0 {
		t.Fatalf("whole filter of %d bytes, k %d: not a Bloom filter of at least two lines", len(filter), filter[len(filter)-1])
	}
	k := filter[len(filter)-1]
	lines := func(n int, fill byte) []byte {
		return append(bytes.Repeat([]byte{fill}, 64*n), k)
	}
	withFilter := func(f []byte) []byte {
		return base.relayout(t, base.encode(base.off, compactLayout{int(base.width), true}, f), base.props)
	}
	for _, c := range []struct {
		name  string
		data  []byte
		exact bool // the filter matches every key: every answer is exact
		valid bool // and it is a valid filter: Verify passes
	}{
		{"every bit cleared", withFilter(lines((len(filter)-1)/64, 0)), false, false},
		{"no lines", withFilter([]byte{k}), false, false},
		{"first line alone", withFilter(append(slices.Clone(filter[:64]), k)), false, false},
		{"every bit set", withFilter(lines((len(filter)-1)/64, 0xff)), true, true},
		{"k byte 0", withFilter(append(slices.Clone(filter[:len(filter)-1]), 0)), true, false},
		{"not whole lines", withFilter(slices.Clone(filter[10:])), true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			craftedReaders(t, c.data, func(t *testing.T, r *reader.Reader, _ bool) {
				switch err := r.Verify(); {
				case c.valid && err != nil:
					t.Fatalf("Verify: %v", err)
				case c.exact && err != nil:
					wantCorrupt(t, err, len(c.data))
				case !c.exact:
					ce := wantCorrupt(t, err, len(c.data), "whole filter")
					if ce.Section != format.SectionHashIndex {
						t.Fatalf("Verify: %v, want an error in the hash index", err)
					}
				}
				missed := 0
				for _, e := range es {
					v, err := r.Get([]byte(e.Key))
					switch {
					case err == nil && string(v) != e.Value:
						t.Fatalf("Get(%q) = %s, want %q", e.Key, shorten(v), e.Value)
					case err == nil:
					case c.exact:
						t.Fatalf("Get(%q): %v", e.Key, err)
					case errors.Is(err, reader.ErrNotFound):
						missed++
					case !errors.Is(err, format.ErrCorrupt):
						t.Fatalf("Get(%q): %v, want a value, ErrNotFound or ErrCorrupt", e.Key, err)
					}
				}
				for _, k := range matrixAbsent(es) {
					if v, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("Get(%q) of an absent key = %s, %v", k, shorten(v), err)
					}
				}
				if missed > 0 {
					t.Logf("%d of %d present keys: ErrNotFound (the forged filter is trusted; Verify reports it)", missed, len(es))
				}
			})
		})
	}
}
