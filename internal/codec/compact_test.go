package codec_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Flags of a version 4 hash index section: first key (bit 2), the whole
// filter after the block offsets (bit 3), block offsets of 4 bytes (bit 4).
const (
	flagFirstKey = 4
	flagFilter   = 8
	flagNarrow   = 16
)

// compactLayout is the geometry a version 4 writer must choose, from the
// format description: slots holding the block number + 1 and the entry's
// offset in its block, the narrowest of 4 to 8 bytes leaving a 5-bit tag;
// n + n/9 + 1 slots; block offsets of 4 bytes while the data ends below
// 4 GiB, else 8; the whole filter, if any, to the section's end.
type compactLayout struct {
	width, blockBits, offsetBits int
	numSlots                     uint64
	flags                        byte
	pad, offWidth, size          int
}

func compactLayoutFor(locs []hloc, sectionOff uint64, blockOffsets []uint64, filter []byte) compactLayout {
	nb := len(blockOffsets) - 1
	var maxOff uint32
	for _, l := range locs {
		maxOff = max(maxOff, l.offset)
	}
	l := compactLayout{blockBits: bits.Len(uint(nb)), offsetBits: bits.Len32(maxOff), numSlots: codec.CompactHashIndexSlots(uint64(len(locs))), flags: flagFirstKey, offWidth: 8}
	l.width = max(4, (l.blockBits+l.offsetBits+5+7)/8)
	if blockOffsets[nb] <= math.MaxUint32 {
		l.flags |= flagNarrow
		l.offWidth = 4
	}
	if len(filter) > 0 {
		l.flags |= flagFilter
	}
	l.pad = int((64 - (sectionOff+codec.HashIndexHeaderLen)%64) % 64)
	l.size = codec.HashIndexHeaderLen + l.pad + int(l.numSlots)*l.width + l.offWidth*(nb+1) + len(filter)
	return l
}

// writeCompact writes a version 4 section of locs with the whole filter
// filter (none if empty).
func writeCompact(locs []hloc, sectionOff uint64, blockOffsets []uint64, filter []byte) []byte {
	c := writeHashIndexWith(codec.HashIndexWriter{FirstKeyShared: true, FilterLen: len(filter)}, locs, sectionOff, blockOffsets)
	copy(c[len(c)-len(filter):], filter)
	return c
}

// checkCompact decodes a section written by writeCompact and checks it
// against the layout the format prescribes and the locations written.
func checkCompact(t rapid.TB, contents []byte, sectionOff uint64, blockOffsets []uint64, locs []hloc, filter []byte) codec.HashIndex {
	t.Helper()
	lay := compactLayoutFor(locs, sectionOff, blockOffsets, filter)
	nb := len(blockOffsets) - 1
	if got, want := contents[:4], []byte{byte(lay.width), byte(lay.blockBits), byte(lay.offsetBits), lay.flags}; !bytes.Equal(got, want) {
		t.Fatalf("%d entries in %d blocks ending at %d: width, block bits, offset bits, flags = %v, want %v", len(locs), nb, blockOffsets[nb], got, want)
	}
	if n := binary.LittleEndian.Uint64(contents[8:]); n != lay.numSlots || binary.LittleEndian.Uint32(contents[4:]) != uint32(nb) || len(contents) != lay.size {
		t.Fatalf("%d slots (want %d), %d bytes (want %d)", n, lay.numSlots, len(contents), lay.size)
	}
	x, err := codec.DecodeHashIndex(contents, int64(sectionOff), blockOffsets[nb], uint64(nb))
	if err != nil {
		t.Fatalf("DecodeHashIndex of a written section: %v", err)
	}
	if !x.FirstKeyShared() || x.FileOffsets() || x.DecodedOffsets() || x.SlotWidth() != lay.width || x.NumSlots() != lay.numSlots || x.Occupied() != uint64(len(locs)) {
		t.Fatalf("first key shared %v, file offsets %v, decoded offsets %v, width %d, %d slots, %d occupied", x.FirstKeyShared(), x.FileOffsets(), x.DecodedOffsets(), x.SlotWidth(), x.NumSlots(), x.Occupied())
	}
	switch fl := x.Filter(); {
	case len(filter) == 0 && fl != nil:
		t.Fatalf("Filter() = %x without a filter", fl)
	case len(filter) > 0 && (!bytes.Equal(fl, filter) || unsafe.SliceData(fl) != &contents[len(contents)-len(filter)]):
		t.Fatalf("Filter() = %x, want %x at the section's end", fl, filter)
	}
	for i := range nb {
		if h := x.BlockHandle(i); h.Offset != blockOffsets[i] || h.End() != blockOffsets[i+1] {
			t.Fatalf("BlockHandle(%d) = %+v, block offsets %d, %d", i, h, blockOffsets[i], blockOffsets[i+1])
		}
	}
	for _, l := range locs {
		if !reaches(t, &x, l.hash, int(l.block), uint64(l.offset)) {
			t.Fatalf("entry with hash %#x at block %d offset %d not found", l.hash, l.block, l.offset)
		}
	}
	return x
}

// TestCompactHashIndexRoundTrip writes version 4 sections of random
// entries, in tables of up to 300 blocks, with entries up to 2^29 bytes
// into a block (slots of 4, 5 and 6 bytes), data ending below or past
// 4 GiB (block offsets of 4 or 8 bytes), with a whole filter or without,
// and checks each against the format: its layout and that every entry
// is found.
func TestCompactHashIndexRoundTrip(t *testing.T) {
	widths := map[string]bool{}
	rapid.Check(t, func(t *rapid.T) {
		nb := rapid.IntRange(1, 300).Draw(t, "blocks")
		maxOff := rapid.SampledFrom([]uint32{100, 4000, 1 << 20, 1 << 29}).Draw(t, "maxOffset")
		stride := uint64(maxOff) + 5 + rapid.Uint64Range(0, 100).Draw(t, "slack")
		if rapid.Bool().Draw(t, "past 4 GiB") {
			stride += (1<<32)/uint64(nb) + 1
		}
		offs := evenBlockOffsets(nb, stride)
		var locs []hloc
		for i := range rapid.IntRange(0, 200).Draw(t, "entries") {
			locs = append(locs, hloc{
				hash:   rapid.Uint64().Draw(t, fmt.Sprint("hash", i)),
				block:  uint32(rapid.IntRange(0, nb-1).Draw(t, fmt.Sprint("block", i))),
				offset: rapid.Uint32Range(0, maxOff).Draw(t, fmt.Sprint("offset", i)),
			})
		}
		filter := rapid.SliceOfN(rapid.Byte(), 0, 100).Draw(t, "filter")
		sectionOff := offs[nb]
		contents := writeCompact(locs, sectionOff, offs, filter)
		checkCompact(t, contents, sectionOff, offs, locs, filter)
		widths[fmt.Sprintf("width %d, %d-byte block offsets", contents[0], compactLayoutFor(locs, sectionOff, offs, filter).offWidth)] = true
	})
	for _, w := range []string{"width 4, 4-byte block offsets", "width 5, 4-byte block offsets", "width 4, 8-byte block offsets", "width 5, 8-byte block offsets"} {
		if !widths[w] {
			t.Errorf("no section drawn with %s; drawn: %v", w, widths)
		}
	}
}

// newCompactFixture is newHashIndexFixture for version 4: the same
// entries in a section with 4-byte block offsets and, if filter is not
// empty, the whole filter after them.
func newCompactFixture(t *testing.T, filter []byte) hashIndexFixture {
	t.Helper()
	blockOffsets := []uint64{0, 1000, 1005, 3000}
	var locs []hloc
	for i := range 10 {
		locs = append(locs, hloc{codec.KeyHash([]byte(fmt.Sprint("key", i))), uint32(i % 3), uint32(100 * i)})
	}
	f := hashIndexFixture{off: 1000, dataSize: 3000, numBlocks: 3}
	f.contents = writeCompact(locs, uint64(f.off), blockOffsets, filter)
	checkCompact(t, f.contents, uint64(f.off), blockOffsets, locs, filter)
	f.pad, f.width = 8, int(f.contents[0])
	f.numSlots = int(binary.LittleEndian.Uint64(f.contents[8:]))
	f.offsetsStart = codec.HashIndexHeaderLen + f.pad + f.numSlots*f.width
	for _, l := range locs {
		f.hashes = append(f.hashes, l.hash)
	}
	if f.width != 4 || f.numSlots != 12 || len(f.contents) != f.offsetsStart+16+len(filter) {
		t.Fatalf("fixture has width %d, %d slots, %d bytes", f.width, f.numSlots, len(f.contents))
	}
	return f
}

// TestDecodeCompactHashIndexErrors: hostile version 4 sections, each of
// which must be refused with a hash index corruption at the offset of
// the field that lies: 4-byte block offsets that do not tile the data,
// flags that misplace the tables (the narrow flag cleared or set wrongly,
// the filter flag cleared over a filter or set without one, either
// without the first-key flag), slot counts that move the block offsets
// and the filter, a filter cut away.
func TestDecodeCompactHashIndexErrors(t *testing.T) {
	filter := []byte("the whole filter: 25 byte")
	f := newCompactFixture(t, filter)
	plain := newCompactFixture(t, nil)
	le := binary.LittleEndian
	mut := func(f hashIndexFixture, fn func(c []byte) []byte) []byte { return fn(bytes.Clone(f.contents)) }
	setOffset := func(i int, v uint32) []byte {
		return mut(f, func(c []byte) []byte { le.PutUint32(c[f.offsetsStart+4*i:], v); return c })
	}
	offsetAt := func(i int) int64 { return f.off + int64(f.offsetsStart+4*i) }
	sizes := f.off + 8 // where a section whose tables do not fit is reported
	cases := []struct {
		name     string
		contents []byte
		errOff   int64
	}{
		{"first block offset 1", setOffset(0, 1), offsetAt(0)},
		{"decreasing block offsets", setOffset(2, 999), offsetAt(2)},
		{"block offset gap of 4", setOffset(2, 1004), offsetAt(2)},
		{"last offset below the data size", setOffset(3, 2999), offsetAt(3)},
		{"last offset 2^32-1", setOffset(3, math.MaxUint32), offsetAt(3)},
		{"narrow flag cleared", mut(f, func(c []byte) []byte { c[3] &^= flagNarrow; return c }), -1},
		{"narrow flag cleared without a filter", mut(plain, func(c []byte) []byte { c[3] &^= flagNarrow; return c }), sizes},
		{"narrow flag without the first-key flag", mut(plain, func(c []byte) []byte { c[3] = flagNarrow; return c }), f.off + 3},
		{"filter and narrow flags without the first-key flag", mut(f, func(c []byte) []byte { c[3] = flagNarrow | flagFilter; return c }), f.off + 3},
		{"filter flag cleared over a filter", mut(f, func(c []byte) []byte { c[3] &^= flagFilter; return c }), sizes},
		{"filter flag without a filter", mut(plain, func(c []byte) []byte { c[3] |= flagFilter; return c }), sizes},
		{"filter cut away, flag kept", f.contents[:len(f.contents)-len(filter)], sizes},
		{"filter and one block offset cut away", f.contents[:len(f.contents)-len(filter)-4], sizes},
		// A slot count that moves the block offsets into the slots or
		// the filter: the offsets read there do not tile the data.
		{"one slot more", mut(f, func(c []byte) []byte { le.PutUint64(c[8:], uint64(f.numSlots+1)); return c }), -1},
		{"one slot fewer", mut(f, func(c []byte) []byte { le.PutUint64(c[8:], uint64(f.numSlots-1)); return c }), -1},
		{"slots reaching the filter's last byte", mut(f, func(c []byte) []byte {
			le.PutUint64(c[8:], uint64(f.numSlots+(len(filter)-1)/4))
			return c
		}), -1},
		{"slots past the section", mut(f, func(c []byte) []byte { le.PutUint64(c[8:], uint64(f.numSlots+len(filter))); return c }), sizes},
		{"2^62 slots", mut(f, func(c []byte) []byte { le.PutUint64(c[8:], 1<<62); return c }), sizes},
		{"6 tag bits short: 33 bits of fields in 4 bytes", mut(f, func(c []byte) []byte { c[2] = byte(33 - c[1]); return c }), f.off + 1},
		{"33 offset bits", mut(f, func(c []byte) []byte { c[0], c[2] = 8, 33; return c }), f.off + 2},
	}
	for _, c := range cases {
		_, err := codec.DecodeHashIndex(c.contents, f.off, f.dataSize, f.numBlocks)
		mustCorrupt(t, err, format.SectionHashIndex, c.errOff, c.name)
	}
	// A filter of one byte is a filter.
	one := append(bytes.Clone(plain.contents), 7)
	one[3] |= flagFilter
	if x, err := codec.DecodeHashIndex(one, f.off, f.dataSize, f.numBlocks); err != nil || !bytes.Equal(x.Filter(), []byte{7}) {
		t.Fatalf("section with a 1-byte filter: %v, filter %x", err, x.Filter())
	}
}

// TestDecodeCompactHashIndexMutations is TestDecodeHashIndexMutations
// for version 4 sections, with and without the whole filter, and with
// 5-byte slots; decoded ones must also keep the filter inside the
// section, at its end.
func TestDecodeCompactHashIndexMutations(t *testing.T) {
	wide := func(t *testing.T) hashIndexFixture {
		// Entries up to 2^28 bytes into a block: 28 offset bits and
		// 2 block bits leave 2 tag bits in 4 bytes, so 5.
		blockOffsets := []uint64{0, 1 << 29, 1<<29 + 5, 1<<30 + 5}
		var locs []hloc
		for i := range 10 {
			locs = append(locs, hloc{codec.KeyHash([]byte(fmt.Sprint("key", i))), uint32(i % 3), uint32(i) << 25})
		}
		f := hashIndexFixture{off: 1<<30 + 5, dataSize: 1<<30 + 5, numBlocks: 3}
		f.contents = writeCompact(locs, uint64(f.off), blockOffsets, []byte("filter"))
		checkCompact(t, f.contents, uint64(f.off), blockOffsets, locs, []byte("filter"))
		if f.contents[0] != 5 {
			t.Fatalf("%d-byte slots, want 5", f.contents[0])
		}
		for _, l := range locs {
			f.hashes = append(f.hashes, l.hash)
		}
		return f
	}
	for name, f := range map[string]hashIndexFixture{
		"no filter":    newCompactFixture(t, nil),
		"filter":       newCompactFixture(t, []byte("the whole filter: 25 byte")),
		"5-byte slots": wide(t),
	} {
		t.Run(name, func(t *testing.T) {
			decodeHashIndexMutations(t, f)
			rapid.Check(t, func(t *rapid.T) {
				c := bytes.Clone(f.contents)
				for range rapid.IntRange(1, 4).Draw(t, "flips") {
					c[rapid.IntRange(0, len(c)-1).Draw(t, "pos")] = rapid.Byte().Draw(t, "byte")
				}
				x, err := codec.DecodeHashIndex(c, f.off, f.dataSize, f.numBlocks)
				if err != nil {
					return
				}
				fl := x.Filter()
				if fl != nil && (len(fl) == 0 || !x.FirstKeyShared() || unsafe.SliceData(fl) != &c[len(c)-len(fl)]) {
					t.Fatalf("Filter() of %d bytes is not the end of the %d-byte section", len(fl), len(c))
				}
				if x.FirstKeyShared() && (x.FileOffsets() || x.DecodedOffsets()) {
					t.Fatal("a version 4 index with file or decoded offsets")
				}
			})
		})
	}
}
