package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// hloc is one entry as a HashIndexWriter records it: the key's hash and
// the entry's location.
type hloc struct {
	hash   uint64
	block  uint32
	offset uint32
}

// evenBlockOffsets returns the file offsets of numBlocks data blocks of
// stride bytes each (trailer included), followed by the data size.
func evenBlockOffsets(numBlocks int, stride uint64) []uint64 {
	offs := make([]uint64, numBlocks+1)
	for i := range offs {
		offs[i] = uint64(i) * stride
	}
	return offs
}

func writeHashIndex(locs []hloc, sectionOff uint64, blockOffsets []uint64, fileOffsets bool) []byte {
	return writeHashIndexWith(codec.HashIndexWriter{FileOffsets: fileOffsets}, locs, sectionOff, blockOffsets)
}

// writeHashIndexDecoded writes a section whose writer has the decoded
// starts of a table with compressed blocks.
func writeHashIndexDecoded(locs []hloc, sectionOff uint64, blockOffsets, decodedStarts []uint64) []byte {
	return writeHashIndexWith(codec.HashIndexWriter{DecodedStarts: decodedStarts}, locs, sectionOff, blockOffsets)
}

// writeHashIndexWith records locs in w and returns the section Append
// writes. It panics if SectionLen did not foretell the section's length,
// if Append wrote past it into dst's spare capacity (a caller sizes its
// buffer by SectionLen), or if it touched the room left for a filter
// (FilterLen), which the caller may be filling meanwhile.
func writeHashIndexWith(w codec.HashIndexWriter, locs []hloc, sectionOff uint64, blockOffsets []uint64) []byte {
	for _, l := range locs {
		w.Add(l.hash, l.block, l.offset)
	}
	n := w.SectionLen(sectionOff, blockOffsets)
	dst := make([]byte, 3+n+16)
	for i := range dst {
		dst[i] = 0xee
	}
	out := w.Append(dst[:3], sectionOff, blockOffsets)
	if len(out) != 3+n || &out[0] != &dst[0] {
		panic(fmt.Sprintf("SectionLen %d, Append appended %d bytes (reallocated: %v)", n, len(out)-3, &out[0] != &dst[0]))
	}
	if !bytes.Equal(dst[3+n-w.FilterLen:], bytes.Repeat([]byte{0xee}, w.FilterLen+16)) {
		panic("Append wrote in the filter's room or past the section's end")
	}
	return out[3:]
}

// hashLayout is the geometry a writer must choose, from the format
// description: the block field holds block+1 (0 marks an empty slot), the
// offset field the largest offset (entry offset in the block; with file
// offsets the entry's file offset, below the data size; with decoded
// offsets its offset in the concatenated decoded blocks, below their
// total size), and the slot is the smallest of 4 to 8 bytes leaving at
// least 8 tag bits.
type hashLayout struct {
	width, blockBits, offsetBits int
	fileOffsets                  bool
	decodedStarts                []uint64 // with decoded offsets (flag 2): each block's decoded start, then the total
	pad                          int      // zero bytes after the header
}

// flags returns the header's flags byte.
func (l hashLayout) flags() byte {
	switch {
	case l.fileOffsets:
		return 1
	case l.decodedStarts != nil:
		return 2
	}
	return 0
}

// base returns what a slot's offset of an entry in block is relative to.
func (l hashLayout) base(blockOffsets []uint64, block uint32) uint64 {
	switch {
	case l.fileOffsets:
		return blockOffsets[block]
	case l.decodedStarts != nil:
		return l.decodedStarts[block]
	}
	return 0
}

// tables returns the size of the tables after the slots: the block
// offsets, and with decoded offsets the decoded starts.
func (l hashLayout) tables(numBlocks int) int {
	if l.decodedStarts != nil {
		return 16 * (numBlocks + 1)
	}
	return 8 * (numBlocks + 1)
}

func (l hashLayout) tagBits() int { return 8*l.width - l.blockBits - l.offsetBits }

func layoutFor(locs []hloc, sectionOff uint64, blockOffsets []uint64, fileOffsets bool) hashLayout {
	nb := len(blockOffsets) - 1
	var maxOff uint32
	for _, l := range locs {
		maxOff = max(maxOff, l.offset)
	}
	l := hashLayout{blockBits: bits.Len64(uint64(nb)), offsetBits: bits.Len32(maxOff)}
	if fileOffsets {
		l.fileOffsets = true
		l.offsetBits = bits.Len64(blockOffsets[nb])
	}
	l.width = max(4, (l.blockBits+l.offsetBits+8+7)/8)
	l.pad = int((64 - (sectionOff+16)%64) % 64)
	return l
}

// layoutForDecoded is layoutFor for slots holding decoded offsets, given
// the decoded starts.
func layoutForDecoded(locs []hloc, sectionOff uint64, blockOffsets, decodedStarts []uint64) hashLayout {
	l := layoutFor(locs, sectionOff, blockOffsets, false)
	l.decodedStarts = decodedStarts
	l.offsetBits = bits.Len64(decodedStarts[len(decodedStarts)-1])
	l.width = max(4, (l.blockBits+l.offsetBits+8+7)/8)
	return l
}

// mustCorrupt fails unless err is a *CorruptError wrapping ErrCorrupt for
// section at file offset off (any offset if off < 0).
func mustCorrupt(t rapid.TB, err error, section string, off int64, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("%s: %v does not wrap ErrCorrupt", what, err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: %v is not a *CorruptError", what, err)
	}
	if ce.Section != section || off >= 0 && ce.Offset != off {
		t.Fatalf("%s: error %q names %q at %d, want %q at %d", what, err, ce.Section, ce.Offset, section, off)
	}
}

// reaches reports whether the probe sequence of hash h yields (block,
// offset) before it ends. Every match on the way must be a valid block.
func reaches(t rapid.TB, x *codec.HashIndex, h uint64, block int, offset uint64) bool {
	t.Helper()
	p := x.Probe(h)
	for i := uint64(0); i <= x.NumSlots(); i++ {
		b, o, ok, err := p.Next()
		if err != nil {
			t.Fatalf("probe of %#x: %v", h, err)
		}
		if !ok {
			return false
		}
		if b < 0 || b >= x.NumBlocks() {
			t.Fatalf("probe of %#x yielded block %d of %d", h, b, x.NumBlocks())
		}
		if b == block && o == offset {
			return true
		}
	}
	t.Fatalf("probe of %#x yielded more than NumSlots = %d matches", h, x.NumSlots())
	return false
}

// checkHashIndex decodes a section written from locs and checks it
// against the format: header, padding, geometry, block offsets, the
// contents of every slot (checkSlots), and through the decoder the block
// handles and that every entry is reachable from its hash.
func checkHashIndex(t rapid.TB, contents []byte, sectionOff uint64, blockOffsets []uint64, locs []hloc, fileOffsets bool) codec.HashIndex {
	t.Helper()
	return checkHashIndexLayout(t, contents, sectionOff, blockOffsets, locs, layoutFor(locs, sectionOff, blockOffsets, fileOffsets))
}

// checkHashIndexDecoded is checkHashIndex for a section whose slots must
// hold decoded offsets, with the decoded starts given.
func checkHashIndexDecoded(t rapid.TB, contents []byte, sectionOff uint64, blockOffsets []uint64, locs []hloc, decodedStarts []uint64) codec.HashIndex {
	t.Helper()
	return checkHashIndexLayout(t, contents, sectionOff, blockOffsets, locs, layoutForDecoded(locs, sectionOff, blockOffsets, decodedStarts))
}

// checkHashIndexLayout is checkHashIndex for the layout lay.
func checkHashIndexLayout(t rapid.TB, contents []byte, sectionOff uint64, blockOffsets []uint64, locs []hloc, lay hashLayout) codec.HashIndex {
	t.Helper()
	nb := len(blockOffsets) - 1
	dataSize := blockOffsets[nb]
	x, err := codec.DecodeHashIndex(contents, int64(sectionOff), dataSize, uint64(nb))
	if err != nil {
		t.Fatalf("DecodeHashIndex of a written section: %v", err)
	}
	n := uint64(len(locs))
	fileOffsets, decoded := lay.fileOffsets, lay.decodedStarts != nil
	if got, want := contents[:4], []byte{byte(lay.width), byte(lay.blockBits), byte(lay.offsetBits), lay.flags()}; !bytes.Equal(got, want) {
		t.Fatalf("%d entries in %d blocks (file offsets %v, decoded offsets %v): header width, block bits, offset bits, flags = %v, want %v", n, nb, fileOffsets, decoded, got, want)
	}
	if x.SlotWidth() != lay.width || x.FileOffsets() != fileOffsets || x.DecodedOffsets() != decoded {
		t.Fatalf("SlotWidth() = %d, FileOffsets() = %v, DecodedOffsets() = %v; want %d, %v, %v", x.SlotWidth(), x.FileOffsets(), x.DecodedOffsets(), lay.width, fileOffsets, decoded)
	}
	if lay.tagBits() < 8 {
		t.Fatalf("%d-bit tags", lay.tagBits())
	}
	if got := binary.LittleEndian.Uint32(contents[4:]); got != uint32(nb) {
		t.Fatalf("header block count %d, want %d", got, nb)
	}
	numSlots := binary.LittleEndian.Uint64(contents[8:])
	if numSlots != codec.HashIndexSlots(n) || x.NumSlots() != numSlots {
		t.Fatalf("header slot count %d, NumSlots() %d; want HashIndexSlots(%d) = %d", numSlots, x.NumSlots(), n, codec.HashIndexSlots(n))
	}
	if want := 16 + lay.pad + int(numSlots)*lay.width + lay.tables(nb); len(contents) != want {
		t.Fatalf("section of %d bytes, want %d", len(contents), want)
	}
	if (sectionOff+16+uint64(lay.pad))%64 != 0 || !bytes.Equal(contents[16:16+lay.pad], make([]byte, lay.pad)) {
		t.Fatalf("padding %x at section offset %d", contents[16:16+lay.pad], sectionOff)
	}
	offsStart := 16 + lay.pad + int(numSlots)*lay.width
	for i, o := range blockOffsets {
		if got := binary.LittleEndian.Uint64(contents[offsStart+8*i:]); got != o {
			t.Fatalf("block offset %d stored as %d, want %d", i, got, o)
		}
	}
	// With decoded offsets, the decoded starts follow the block offsets.
	for i, d := range lay.decodedStarts {
		if got := binary.LittleEndian.Uint64(contents[offsStart+8*(nb+1+i):]); got != d {
			t.Fatalf("decoded start %d stored as %d, want %d", i, got, d)
		}
		if got := x.DecodedStart(i); got != d {
			t.Fatalf("DecodedStart(%d) = %d, want %d", i, got, d)
		}
	}
	checkSlots(t, contents[16+lay.pad:offsStart], lay, locs, blockOffsets)

	if x.NumBlocks() != nb {
		t.Fatalf("NumBlocks() = %d, want %d", x.NumBlocks(), nb)
	}
	for i := range nb {
		want := format.BlockHandle{Offset: blockOffsets[i], Length: blockOffsets[i+1] - blockOffsets[i] - format.BlockTrailerLen}
		if got := x.BlockHandle(i); got != want {
			t.Fatalf("BlockHandle(%d) = %+v, want %+v", i, got, want)
		}
	}
	if got := x.Occupied(); got != n {
		t.Fatalf("Occupied() = %d, want %d entries", got, n)
	}
	for _, l := range locs {
		off := uint64(l.offset)
		switch {
		case fileOffsets:
			off += blockOffsets[l.block]
		case decoded:
			// Through the decoder's own decoded start.
			off += x.DecodedStart(int(l.block))
		}
		if !reaches(t, &x, l.hash, int(l.block), off) {
			t.Fatalf("probe of hash %#x does not reach block %d offset %d", l.hash, l.block, off)
		}
	}
	return x
}

// splitMix64 is the SplitMix64 finaliser, from which the slot and tag of a
// KeyHash are derived.
func splitMix64(h uint64) uint64 {
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// checkSlots checks the slot array against the format, independently of
// the decoder: for a key of hash h, m = SplitMix64(h), its home slot is
// the high word of m·numSlots, and its slot holds m's low tagBits bits,
// then block+1, then the offset. The writer may place keys in any order,
// so check that the occupied slots hold exactly the entries' values, and
// that each entry's value lies between its home slot and the next empty
// slot (wrapping), where a linear-probing lookup finds it.
func checkSlots(t rapid.TB, slots []byte, lay hashLayout, locs []hloc, blockOffsets []uint64) {
	t.Helper()
	numSlots := uint64(len(slots) / lay.width)
	slot := func(i uint64) uint64 {
		var b [8]byte
		copy(b[:], slots[i*uint64(lay.width):(i+1)*uint64(lay.width)])
		return binary.LittleEndian.Uint64(b[:])
	}
	var got, want []uint64
	for i := range numSlots {
		if v := slot(i); v>>lay.offsetBits&(1<<lay.blockBits-1) != 0 {
			got = append(got, v)
		} else if v != 0 {
			t.Fatalf("empty slot %d holds %#x", i, v)
		}
	}
	for _, l := range locs {
		m := splitMix64(l.hash)
		home, _ := bits.Mul64(m, numSlots)
		off := uint64(l.offset) + lay.base(blockOffsets, l.block)
		v := (m&(1<<lay.tagBits()-1))<<(lay.blockBits+lay.offsetBits) | uint64(l.block+1)<<lay.offsetBits | off
		want = append(want, v)
		for pos := home; slot(pos) != v; pos = (pos + 1) % numSlots {
			if slot(pos) == 0 {
				t.Fatalf("entry %+v (slot value %#x) is not between its home slot %d and the empty slot %d", l, v, home, pos)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("occupied slots hold %d values, %d entries; the values differ", len(got), len(want))
	}
}

// falseMatchRate probes absent hashes and returns the fraction whose probe
// meets a slot with a matching tag before its empty slot.
func falseMatchRate(t rapid.TB, x *codec.HashIndex, absent []uint64) float64 {
	t.Helper()
	matched := 0
	for _, h := range absent {
		p := x.Probe(h)
		_, _, ok, err := p.Next()
		if err != nil {
			t.Fatalf("probe of absent hash %#x: %v", h, err)
		}
		if ok {
			matched++
		}
		// The probe ends.
		for i := uint64(0); ok; i++ {
			if i > x.NumSlots() {
				t.Fatalf("probe of absent hash %#x does not end", h)
			}
			_, _, ok, err = p.Next()
			if err != nil {
				t.Fatalf("probe of absent hash %#x: %v", h, err)
			}
		}
	}
	return float64(matched) / float64(len(absent))
}

func randomKey(rng *rand.Rand) string {
	b := make([]byte, 4+rng.IntN(20))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return string(b)
}

// TestHashIndexRoundTrip writes indexes over random keys at sizes and
// block counts that give every slot width from 4 to 8 bytes, with
// block-relative and with file offsets.
func TestHashIndexRoundTrip(t *testing.T) {
	cases := []struct {
		name        string
		n           int
		numBlocks   int
		maxOff      uint32 // the largest entry offset
		stride      uint64 // block size, trailer included
		sectionOff  uint64
		fileOffsets bool
		width       int
	}{
		{"empty", 0, 0, 0, 0, 0, false, 4},
		{"empty/file offsets", 0, 0, 0, 0, 5, true, 4},
		{"one", 1, 1, 0, 100, 7, false, 4},
		{"one/file offsets", 1, 1, 50, 100, 105, true, 4},
		{"small", 100, 10, 4000, 4101, 64, false, 4},                          // 4 + 12 bits
		{"small/file offsets", 100, 10, 4000, 4101, 41010, true, 4},           // 4 + 16 bits
		{"100k", 100_000, 2500, 4095, 4101, 1_000_003, false, 4},              // 12 + 12 bits: 8-bit tags
		{"100k/file offsets", 100_000, 2500, 4095, 4101, 10_252_500, true, 6}, // 12 + 24 bits
		{"width5", 3000, 1000, 1<<20 - 1, 1<<20 + 5, 63, false, 5},            // 10 + 20 bits
		{"width6", 3000, 5000, 1<<24 - 1, 1<<24 + 5, 1 << 33, false, 6},       // 13 + 24 bits
		{"width7", 3000, 60000, 1<<28 - 1, 1<<28 + 5, 1<<40 + 1, false, 7},
		{"width7/file offsets", 3000, 1000, 1<<20 - 1, 1<<28 + 5, 1 << 41, true, 7},    // 10 + 38 bits
		{"width8", 3000, 1 << 17, math.MaxUint32, 1<<32 + 5, 48, false, 8},             // 18 + 32 bits
		{"width8/file offsets", 3000, 1 << 17, 1<<20 - 1, 1<<20 + 5, 1 << 45, true, 8}, // 18 + 38 bits: 8-bit tags
	}
	widths := map[int]bool{}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 42))
			keys := map[string]bool{}
			used := map[[2]uint32]bool{}
			var locs []hloc
			for len(locs) < c.n {
				k := randomKey(rng)
				if keys[k] {
					continue
				}
				l := hloc{codec.KeyHash([]byte(k)), rng.Uint32N(uint32(c.numBlocks)), uint32(rng.Uint64N(uint64(c.maxOff) + 1))}
				switch len(locs) {
				case 0:
					l.offset = c.maxOff // the widest offset occurs
				case 1:
					l.block = uint32(c.numBlocks - 1)
				}
				if used[[2]uint32{l.block, l.offset}] {
					continue
				}
				keys[k] = true
				used[[2]uint32{l.block, l.offset}] = true
				locs = append(locs, l)
			}
			blockOffsets := evenBlockOffsets(c.numBlocks, c.stride)

			w := codec.HashIndexWriter{FileOffsets: c.fileOffsets}
			for _, l := range locs {
				w.Add(l.hash, l.block, l.offset)
			}
			if w.Len() != uint64(c.n) {
				t.Fatalf("Len() = %d, want %d", w.Len(), c.n)
			}
			prefix := []byte("prefix")
			contents := w.Append(bytes.Clone(prefix), c.sectionOff, blockOffsets)
			if !bytes.HasPrefix(contents, prefix) {
				t.Fatal("Append changed dst's contents")
			}
			contents = contents[len(prefix):]
			if !bytes.Equal(contents, writeHashIndex(locs, c.sectionOff, blockOffsets, c.fileOffsets)) {
				t.Fatal("Append output depends on dst")
			}

			x := checkHashIndex(t, contents, c.sectionOff, blockOffsets, locs, c.fileOffsets)
			if x.SlotWidth() != c.width {
				t.Fatalf("SlotWidth() = %d, want %d", x.SlotWidth(), c.width)
			}
			widths[x.SlotWidth()] = true

			// Absent keys: their probes mostly end at an empty slot
			// without meeting a matching tag. A probe passes about 4
			// occupied slots at load 2/3, each matching with probability
			// 2^-tagBits.
			var absent []uint64
			for len(absent) < 20000 {
				if k := randomKey(rng); !keys[k] {
					absent = append(absent, codec.KeyHash([]byte(k)))
				}
			}
			tagBits := layoutFor(locs, c.sectionOff, blockOffsets, c.fileOffsets).tagBits()
			limit := 0.01
			if tagBits < 16 {
				limit = 8 / math.Exp2(float64(tagBits))
			}
			if rate := falseMatchRate(t, &x, absent); rate >= limit {
				t.Fatalf("%.4f of absent keys meet a matching %d-bit tag, want < %.4f", rate, tagBits, limit)
			}
		})
	}
	if len(widths) != 5 {
		t.Fatalf("slot widths seen: %v; want 4 to 8", widths)
	}
}

// TestHashIndexRapid is TestHashIndexRoundTrip over drawn geometries,
// hashes (with repeats) and locations (with repeats).
func TestHashIndexRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nb := rapid.OneOf(rapid.IntRange(0, 3), rapid.IntRange(0, 300), rapid.IntRange(60000, 70000)).Draw(t, "numBlocks")
		offBits := rapid.IntRange(0, 32).Draw(t, "offsetBits")
		n := 0
		if nb > 0 {
			n = rapid.OneOf(rapid.IntRange(0, 5), rapid.IntRange(0, 400)).Draw(t, "n")
		}
		pool := rapid.SliceOfN(rapid.Uint64(), 1, 4).Draw(t, "hashPool")
		hash := rapid.OneOf(rapid.Uint64(), rapid.SampledFrom(pool),
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 8), codec.KeyHash))
		locs := make([]hloc, n)
		for i := range locs {
			locs[i] = hloc{
				hash.Draw(t, "hash"),
				uint32(rapid.IntRange(0, nb-1).Draw(t, "block")),
				uint32(rapid.Uint64Range(0, 1<<offBits-1).Draw(t, "offset")),
			}
		}
		sectionOff := rapid.OneOf(rapid.Uint64Range(0, 200), rapid.Uint64Range(0, 1<<50)).Draw(t, "sectionOffset")
		// Block sizes from the smallest (an empty block, just a trailer) up.
		gap := rapid.Uint64Range(format.BlockTrailerLen, 1<<20).Draw(t, "gap")
		blockOffsets := make([]uint64, nb+1)
		for i := 1; i <= nb; i++ {
			blockOffsets[i] = blockOffsets[i-1] + format.BlockTrailerLen + uint64(i)*gap%(gap+1)
		}
		switch rapid.SampledFrom([]string{"block", "file", "decoded"}).Draw(t, "offsets") {
		case "block":
			contents := writeHashIndex(locs, sectionOff, blockOffsets, false)
			checkHashIndex(t, contents, sectionOff, blockOffsets, locs, false)
		case "file":
			// Blocks are raw: an entry lies inside its block, so its file
			// offset is below the data size.
			for i, l := range locs {
				stored := blockOffsets[l.block+1] - blockOffsets[l.block] - format.BlockTrailerLen
				locs[i].offset = uint32(uint64(l.offset) % (stored + 1))
			}
			contents := writeHashIndex(locs, sectionOff, blockOffsets, true)
			checkHashIndex(t, contents, sectionOff, blockOffsets, locs, true)
		case "decoded":
			// Blocks are compressed: each decodes to at least its 4-byte
			// restart count, and an entry lies inside its decoded block.
			dgap := rapid.Uint64Range(0, 1<<20).Draw(t, "decodedGap")
			starts := make([]uint64, nb+1)
			for i := 1; i <= nb; i++ {
				starts[i] = starts[i-1] + 4 + uint64(i)*dgap%(dgap+1)
			}
			for i, l := range locs {
				locs[i].offset = uint32(uint64(l.offset) % (starts[l.block+1] - starts[l.block]))
			}
			contents := writeHashIndexDecoded(locs, sectionOff, blockOffsets, starts)
			checkHashIndexDecoded(t, contents, sectionOff, blockOffsets, locs, starts)
		}
	})
}

// decodedStartsOf returns the decoded starts of blocks of the given decoded
// sizes: 0, the running sums, and the total.
func decodedStartsOf(sizes []uint64) []uint64 {
	starts := make([]uint64, len(sizes)+1)
	for i, n := range sizes {
		starts[i+1] = starts[i] + n
	}
	return starts
}

// decodedLocs returns n entries with distinct random keys, each at a
// distinct offset inside its block's decoded contents (sizes[block]
// bytes, the last 4 of them the restart count); the first entry lies at
// the largest offset of the last block, so that the widest decoded offset
// occurs.
func decodedLocs(rng *rand.Rand, n int, sizes []uint64) (locs []hloc, keys map[string]bool) {
	keys = map[string]bool{}
	used := map[[2]uint32]bool{}
	for len(locs) < n {
		k := randomKey(rng)
		if keys[k] {
			continue
		}
		b := rng.Uint32N(uint32(len(sizes)))
		if len(locs) == 0 {
			b = uint32(len(sizes) - 1)
		}
		off := uint32(rng.Uint64N(sizes[b] - 3))
		if len(locs) == 0 {
			off = uint32(sizes[b] - 4)
		}
		if used[[2]uint32{b, off}] {
			continue
		}
		keys[k] = true
		used[[2]uint32{b, off}] = true
		locs = append(locs, hloc{codec.KeyHash([]byte(k)), b, off})
	}
	return locs, keys
}

// TestHashIndexDecodedRoundTrip writes indexes whose writer has decoded
// starts (a table with compressed blocks): the slots hold offsets in the
// concatenation of the decoded blocks, the section ends with the decoded
// starts, and every key's probe leads to DecodedStart(block) + its offset
// in the block, at every slot width.
func TestHashIndexDecodedRoundTrip(t *testing.T) {
	cases := []struct {
		name       string
		n          int
		sizes      func(i int) uint64 // decoded size of block i
		numBlocks  int
		sectionOff uint64
		width      int
	}{
		{"empty", 0, nil, 0, 5, 4},
		{"one", 1, func(int) uint64 { return 50 }, 1, 7, 4},
		{"tiny blocks", 200, func(int) uint64 { return 4 + 4 }, 300, 64, 4},                       // 9 + 12 bits
		{"small", 100, func(i int) uint64 { return 4000 + uint64(i)*37 }, 10, 4101, 4},            // 4 + 16 bits
		{"100k", 100_000, func(int) uint64 { return 4096 }, 2500, 1_000_003, 6},                   // 12 + 24 bits
		{"width5", 3000, func(int) uint64 { return 4000 }, 1000, 63, 5},                           // 10 + 22 bits
		{"width7", 3000, func(int) uint64 { return 1 << 28 }, 1000, 1 << 40, 7},                   // 10 + 38 bits
		{"width8", 3000, func(int) uint64 { return 1<<21 - 1 }, 1 << 17, 1<<45 + 3, 8},            // 18 + 38 bits: 8-bit tags
		{"varied", 5000, func(i int) uint64 { return 4 + uint64(i*i*7919)%20000 }, 700, 12345, 6}, // 10 + 23 bits
	}
	widths := map[int]bool{}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 77))
			sizes := make([]uint64, c.numBlocks)
			for i := range sizes {
				sizes[i] = c.sizes(i)
			}
			starts := decodedStartsOf(sizes)
			locs, keys := decodedLocs(rng, c.n, sizes)
			// Compressed blocks are smaller than their contents.
			blockOffsets := evenBlockOffsets(c.numBlocks, 1000)
			contents := writeHashIndexDecoded(locs, c.sectionOff, blockOffsets, starts)
			x := checkHashIndexDecoded(t, contents, c.sectionOff, blockOffsets, locs, starts)
			if x.SlotWidth() != c.width {
				t.Fatalf("SlotWidth() = %d, want %d", x.SlotWidth(), c.width)
			}
			widths[x.SlotWidth()] = true
			if !x.DecodedOffsets() || x.FileOffsets() {
				t.Fatalf("DecodedOffsets() = %v, FileOffsets() = %v", x.DecodedOffsets(), x.FileOffsets())
			}
			// Every key's first matching slot, or a later one, leads to
			// its block and DecodedStart(block) + its offset, inside the
			// block's decoded contents.
			for _, l := range locs {
				p := x.Probe(l.hash)
				for {
					b, off, ok, err := p.Next()
					if err != nil || !ok {
						t.Fatalf("probe of %#x ends (%v) before block %d offset %d", l.hash, err, l.block, l.offset)
					}
					if start, next := x.DecodedStart(b), x.DecodedStart(b+1); off < start || off >= next {
						t.Fatalf("probe of %#x: decoded offset %d outside block %d [%d, %d)", l.hash, off, b, start, next)
					}
					if b == int(l.block) && off == x.DecodedStart(b)+uint64(l.offset) {
						break
					}
				}
			}
			var absent []uint64
			for len(absent) < 5000 {
				if k := randomKey(rng); !keys[k] {
					absent = append(absent, codec.KeyHash([]byte(k)))
				}
			}
			tagBits := 8*x.SlotWidth() - bits.Len64(uint64(c.numBlocks)) - bits.Len64(starts[c.numBlocks])
			if rate := falseMatchRate(t, &x, absent); rate >= max(0.01, 8/math.Exp2(float64(tagBits))) {
				t.Fatalf("%.4f of absent keys meet a matching %d-bit tag", rate, tagBits)
			}
		})
	}
	if len(widths) != 5 {
		t.Fatalf("slot widths seen: %v; want 4 to 8", widths)
	}
}

func TestHashIndexSlots(t *testing.T) {
	for n, want := range map[uint64]uint64{0: 1, 1: 2, 2: 4, 3: 5, 100: 151, 1_000_000: 1_500_001} {
		if got := codec.HashIndexSlots(n); got != want {
			t.Errorf("HashIndexSlots(%d) = %d, want %d", n, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Uint64Range(0, 1<<60).Draw(t, "n")
		s := codec.HashIndexSlots(n)
		// At least one empty slot, and a load factor of at most 2/3.
		if s <= n || 3*n > 2*s {
			t.Fatalf("HashIndexSlots(%d) = %d", n, s)
		}
	})
	if codec.HashIndexHeaderLen != 16 || format.SectionHashIndex != "hash index" {
		t.Fatalf("HashIndexHeaderLen = %d, SectionHashIndex = %q", codec.HashIndexHeaderLen, format.SectionHashIndex)
	}
}

// TestKeyHash pins KeyHash to XXH64 with seed 0.
func TestKeyHash(t *testing.T) {
	for k, want := range map[string]uint64{
		"":    0xef46db3751d8e999,
		"a":   0xd24ec4f1a98c6e5b,
		"abc": 0x44bc2cf5ad770999,
	} {
		if got := codec.KeyHash([]byte(k)); got != want {
			t.Errorf("KeyHash(%q) = %#x, want %#x", k, got, want)
		}
	}
	for _, k := range []string{"key000001", strings.Repeat("long key ", 20)} {
		if got, want := codec.KeyHash([]byte(k)), xxhash.Sum64String(k); got != want {
			t.Errorf("KeyHash(%q) = %#x, xxhash.Sum64 %#x", k, got, want)
		}
	}
}

// hashIndexFixture is a valid section: 10 entries in 3 blocks, offsets
// below 1024, at file offset 1000 (8 bytes of padding).
type hashIndexFixture struct {
	contents     []byte
	off          int64
	dataSize     uint64
	numBlocks    uint64
	pad          int
	width        int
	numSlots     int
	offsetsStart int // position of the block offsets in contents
	hashes       []uint64
}

func newHashIndexFixture(t *testing.T) hashIndexFixture {
	t.Helper()
	blockOffsets := []uint64{0, 1000, 1005, 3000}
	var locs []hloc
	for i := range 10 {
		locs = append(locs, hloc{codec.KeyHash([]byte(fmt.Sprint("key", i))), uint32(i % 3), uint32(100 * i)})
	}
	f := hashIndexFixture{off: 1000, dataSize: 3000, numBlocks: 3}
	f.contents = writeHashIndex(locs, uint64(f.off), blockOffsets, false)
	f.pad, f.width = 8, int(f.contents[0])
	f.numSlots = int(binary.LittleEndian.Uint64(f.contents[8:]))
	f.offsetsStart = codec.HashIndexHeaderLen + f.pad + f.numSlots*f.width
	for _, l := range locs {
		f.hashes = append(f.hashes, l.hash)
	}
	if f.pad != 8 || f.width != 4 || f.numSlots != 16 {
		t.Fatalf("fixture has %d bytes of padding, width %d, %d slots", f.pad, f.width, f.numSlots)
	}
	checkHashIndex(t, f.contents, uint64(f.off), blockOffsets, locs, false)
	return f
}

// newDecodedHashIndexFixture is newHashIndexFixture for a table whose
// blocks are compressed: the same entries, slots holding decoded offsets,
// and decoded starts 0, 1000, 1800, 2700 after the block offsets.
func newDecodedHashIndexFixture(t *testing.T) hashIndexFixture {
	t.Helper()
	blockOffsets := []uint64{0, 1000, 1005, 3000}
	starts := []uint64{0, 1000, 1800, 2700}
	var locs []hloc
	for i := range 10 {
		locs = append(locs, hloc{codec.KeyHash([]byte(fmt.Sprint("key", i))), uint32(i % 3), uint32(100 * i)})
	}
	f := hashIndexFixture{off: 1000, dataSize: 3000, numBlocks: 3}
	f.contents = writeHashIndexDecoded(locs, uint64(f.off), blockOffsets, starts)
	f.pad, f.width = 8, int(f.contents[0])
	f.numSlots = int(binary.LittleEndian.Uint64(f.contents[8:]))
	f.offsetsStart = codec.HashIndexHeaderLen + f.pad + f.numSlots*f.width
	for _, l := range locs {
		f.hashes = append(f.hashes, l.hash)
	}
	if f.pad != 8 || f.width != 4 || f.numSlots != 16 || f.contents[3] != 2 || len(f.contents) != f.offsetsStart+64 {
		t.Fatalf("fixture has %d bytes of padding, width %d, %d slots, flags %#x, %d bytes", f.pad, f.width, f.numSlots, f.contents[3], len(f.contents))
	}
	checkHashIndexDecoded(t, f.contents, uint64(f.off), blockOffsets, locs, starts)
	return f
}

// TestDecodeHashIndexDecodedStartsErrors: the decoded starts of a section
// with decoded offsets (flag 2) must start at 0 and increase by at least
// 4 (a decoded block holds at least its restart count), and the section
// must hold them after the block offsets: exactly when the flag is set.
func TestDecodeHashIndexDecodedStartsErrors(t *testing.T) {
	f := newDecodedHashIndexFixture(t)
	plain := newHashIndexFixture(t)
	le := binary.LittleEndian
	mut := func(fn func(c []byte) []byte) []byte { return fn(bytes.Clone(f.contents)) }
	startAt := f.offsetsStart + 8*int(f.numBlocks+1) // position of decoded start 0
	setStart := func(i int, v uint64) []byte {
		return mut(func(c []byte) []byte { le.PutUint64(c[startAt+8*i:], v); return c })
	}
	errAt := func(i int) int64 { return f.off + int64(startAt+8*i) }
	cases := []struct {
		name     string
		contents []byte
		errOff   int64
	}{
		{"first decoded start 1", setStart(0, 1), errAt(0)},
		{"first decoded start 4", setStart(0, 4), errAt(0)},
		{"first decoded start 2^64-1", setStart(0, math.MaxUint64), errAt(0)},
		{"decreasing decoded starts", setStart(2, 999), errAt(2)},
		{"decreasing total", setStart(3, 1799), errAt(3)},
		{"repeated decoded start", setStart(2, 1000), errAt(2)},
		{"decoded gap of 3", setStart(2, 1003), errAt(2)},
		{"decoded gap of 1", setStart(1, 1), errAt(1)},
		{"total gap of 0", setStart(3, 1800), errAt(3)},
		{"huge decoded start", setStart(1, math.MaxUint64), errAt(2)},
		{"both offset flags", mut(func(c []byte) []byte { c[3] = 3; return c }), f.off + 3},
		{"decoded flag with an unknown one", mut(func(c []byte) []byte { c[3] = 2 | 8; return c }), f.off + 3},
		// The length must match the flag.
		{"one decoded start fewer", f.contents[:len(f.contents)-8], f.off + 8},
		{"one decoded start more", append(bytes.Clone(f.contents), make([]byte, 8)...), f.off + 8},
		{"no decoded starts", f.contents[:startAt], f.off + 8},
		{"decoded flag cleared", mut(func(c []byte) []byte { c[3] = 0; return c }), f.off + 8},
		{"file offsets flag instead", mut(func(c []byte) []byte { c[3] = 1; return c }), f.off + 8},
		{"decoded flag without decoded starts", func() []byte {
			c := bytes.Clone(plain.contents)
			c[3] = 2
			return c
		}(), f.off + 8},
		{"33 offset bits with the decoded offsets flag", mut(func(c []byte) []byte { c[0], c[2] = 8, 33; return c }), f.off + 8}, // past the header checks
		// The block offsets are still checked.
		{"block offsets decreasing", mut(func(c []byte) []byte { le.PutUint64(c[f.offsetsStart+16:], 999); return c }), f.off + int64(f.offsetsStart+16)},
	}
	for _, c := range cases {
		_, err := codec.DecodeHashIndex(c.contents, f.off, f.dataSize, f.numBlocks)
		mustCorrupt(t, err, format.SectionHashIndex, c.errOff, c.name)
	}

	// Not stricter than the format: a decoded block of exactly 4 bytes,
	// and any total past the last start; the decoded starts need not
	// match the stored blocks' sizes.
	for _, c := range []struct {
		name     string
		contents []byte
		want     []uint64
	}{
		{"decoded gap of 4", setStart(2, 1004), []uint64{0, 1000, 1004, 2700}},
		{"total of 2^64-1", setStart(3, math.MaxUint64), []uint64{0, 1000, 1800, math.MaxUint64}},
		{"total just past the last start", setStart(3, 1804), []uint64{0, 1000, 1800, 1804}},
	} {
		x, err := codec.DecodeHashIndex(c.contents, f.off, f.dataSize, f.numBlocks)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !x.DecodedOffsets() || x.FileOffsets() {
			t.Errorf("%s: DecodedOffsets() = %v, FileOffsets() = %v", c.name, x.DecodedOffsets(), x.FileOffsets())
		}
		for i, want := range c.want {
			if got := x.DecodedStart(i); got != want {
				t.Errorf("%s: DecodedStart(%d) = %d, want %d", c.name, i, got, want)
			}
		}
	}
	// A section without the flag has no decoded starts.
	x, err := codec.DecodeHashIndex(plain.contents, plain.off, plain.dataSize, plain.numBlocks)
	if err != nil || x.DecodedOffsets() {
		t.Fatalf("section without decoded offsets: DecodedOffsets() = %v, %v", x.DecodedOffsets(), err)
	}
}

func TestDecodeHashIndexErrors(t *testing.T) {
	f := newHashIndexFixture(t)
	le := binary.LittleEndian
	mut := func(fn func(c []byte) []byte) []byte { return fn(bytes.Clone(f.contents)) }
	setOffset := func(i int, v uint64) []byte {
		return mut(func(c []byte) []byte { le.PutUint64(c[f.offsetsStart+8*i:], v); return c })
	}
	slotsBytes := f.numSlots * f.width
	offsetAt := func(i int) int64 { return f.off + int64(f.offsetsStart+8*i) }
	cases := []struct {
		name      string
		contents  []byte
		off       int64
		dataSize  uint64
		numBlocks uint64
		errOff    int64
	}{
		{"empty", nil, f.off, f.dataSize, f.numBlocks, f.off},
		{"short header", f.contents[:15], f.off, f.dataSize, f.numBlocks, f.off},
		{"width 0", mut(func(c []byte) []byte { c[0] = 0; return c }), f.off, f.dataSize, f.numBlocks, f.off},
		{"width 3", mut(func(c []byte) []byte { c[0] = 3; return c }), f.off, f.dataSize, f.numBlocks, f.off},
		{"width 9", mut(func(c []byte) []byte { c[0] = 9; return c }), f.off, f.dataSize, f.numBlocks, f.off},
		{"width 255", mut(func(c []byte) []byte { c[0] = 255; return c }), f.off, f.dataSize, f.numBlocks, f.off},
		{"fields wider than the slot", mut(func(c []byte) []byte { c[1], c[2] = 20, 13; return c }), f.off, f.dataSize, f.numBlocks, f.off + 1},
		{"fields wider than an 8-byte slot", mut(func(c []byte) []byte { c[0], c[1], c[2] = 8, 255, 32; return c }), f.off, f.dataSize, f.numBlocks, f.off + 1},
		{"33 offset bits", mut(func(c []byte) []byte { c[0], c[2] = 8, 33; return c }), f.off, f.dataSize, f.numBlocks, f.off + 2},
		{"block count above the argument", f.contents, f.off, f.dataSize, f.numBlocks - 1, f.off + 4},
		{"block count below the argument", f.contents, f.off, f.dataSize, f.numBlocks + 1, f.off + 4},
		{"header block count changed", mut(func(c []byte) []byte { le.PutUint32(c[4:], 4); return c }), f.off, f.dataSize, f.numBlocks, f.off + 4},
		{"too few block bits", mut(func(c []byte) []byte { c[1] = 1; return c }), f.off, f.dataSize, f.numBlocks, f.off + 1},
		{"33 offset bits with the file offsets flag", mut(func(c []byte) []byte { c[0], c[2], c[3] = 8, 33, 1; return c }), f.off, f.dataSize, f.numBlocks, f.off + 8}, // past the header checks
		{"unknown flag 16", mut(func(c []byte) []byte { c[3] = 16; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"first-key flag with file offsets", mut(func(c []byte) []byte { c[3] = 4 | 1; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"first-key flag with decoded offsets", mut(func(c []byte) []byte { c[3] = 4 | 2; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"filter flag without the first-key flag", mut(func(c []byte) []byte { c[3] = 8; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"filter flag with nothing after the block offsets", mut(func(c []byte) []byte { c[3] = 4 | 8; return c }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"both offset flags", mut(func(c []byte) []byte { c[3] = 3; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"unknown flag 0x80", mut(func(c []byte) []byte { c[3] = 0x80; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		{"all flags", mut(func(c []byte) []byte { c[3] = 0xff; return c }), f.off, f.dataSize, f.numBlocks, f.off + 3},
		// The padding follows from the section offset: 7 bytes at offset
		// 1001, 0 at 1008, 16 at 992.
		{"section at offset + 1", f.contents, f.off + 1, f.dataSize, f.numBlocks, f.off + 1 + 8},
		{"section at offset + 8", f.contents, f.off + 8, f.dataSize, f.numBlocks, f.off + 8 + 8},
		{"section at offset - 8", f.contents, f.off - 8, f.dataSize, f.numBlocks, f.off - 8 + 8},
		{"64 more bytes of padding", mut(func(c []byte) []byte {
			return append(c[:16:16], append(make([]byte, 64), c[16:]...)...)
		}), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one byte less padding", mut(func(c []byte) []byte { return append(c[:16:16], c[17:]...) }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one more slot", mut(func(c []byte) []byte { le.PutUint64(c[8:], uint64(f.numSlots+1)); return c }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one slot fewer", mut(func(c []byte) []byte { le.PutUint64(c[8:], uint64(f.numSlots-1)); return c }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"2^62 slots", mut(func(c []byte) []byte { le.PutUint64(c[8:], 1<<62); return c }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"2^64-1 slots", mut(func(c []byte) []byte { le.PutUint64(c[8:], math.MaxUint64); return c }), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one byte more", append(bytes.Clone(f.contents), 0), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one byte fewer", f.contents[:len(f.contents)-1], f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"one block offset fewer", f.contents[:len(f.contents)-8], f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"header and padding only", f.contents[:16+f.pad], f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"shorter than the padding", f.contents[:16+f.pad-1], f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"no slots", mut(func(c []byte) []byte {
			le.PutUint64(c[8:], 0)
			return append(c[:16+f.pad], c[16+f.pad+slotsBytes:]...)
		}), f.off, f.dataSize, f.numBlocks, f.off + 8},
		{"first block offset 1", setOffset(0, 1), f.off, f.dataSize, f.numBlocks, offsetAt(0)},
		{"first block offset 2^64-1", setOffset(0, math.MaxUint64), f.off, f.dataSize, f.numBlocks, offsetAt(0)},
		{"decreasing block offsets", setOffset(2, 999), f.off, f.dataSize, f.numBlocks, offsetAt(2)},
		{"repeated block offset", setOffset(2, 1000), f.off, f.dataSize, f.numBlocks, offsetAt(2)},
		{"block offset gap of 4", setOffset(2, 1004), f.off, f.dataSize, f.numBlocks, offsetAt(2)},
		{"block offset gap of 1", setOffset(1, 1), f.off, f.dataSize, f.numBlocks, offsetAt(1)},
		{"huge block offset", setOffset(1, math.MaxUint64), f.off, f.dataSize, f.numBlocks, offsetAt(2)},
		{"last offset below the data size", setOffset(3, 2999), f.off, f.dataSize, f.numBlocks, offsetAt(3)},
		{"last offset above the data size", setOffset(3, 3001), f.off, f.dataSize, f.numBlocks, offsetAt(3)},
		{"data size argument larger", f.contents, f.off, f.dataSize + 1, f.numBlocks, offsetAt(3)},
		{"data size argument smaller", f.contents, f.off, f.dataSize - 1, f.numBlocks, offsetAt(3)},
	}
	for _, c := range cases {
		_, err := codec.DecodeHashIndex(c.contents, c.off, c.dataSize, c.numBlocks)
		mustCorrupt(t, err, format.SectionHashIndex, c.errOff, c.name)
	}

	// Each padding byte is checked.
	for i := range f.pad {
		c := bytes.Clone(f.contents)
		c[16+i] = 0x80
		_, err := codec.DecodeHashIndex(c, f.off, f.dataSize, f.numBlocks)
		mustCorrupt(t, err, format.SectionHashIndex, f.off+16+int64(i), fmt.Sprintf("padding byte %d set", i))
	}

	// The checks are not stricter than the format: the same bytes at an
	// offset 64 further are aligned too, and a block that is just a
	// trailer (a gap of 5) is allowed.
	for _, c := range []struct {
		name     string
		contents []byte
		off      int64
	}{
		{"offset + 64", f.contents, f.off + 64},
		{"offset - 64*15", f.contents, f.off - 64*15},
		{"gap of 5", setOffset(1, 5), f.off},
	} {
		if _, err := codec.DecodeHashIndex(c.contents, c.off, f.dataSize, f.numBlocks); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestHashIndexEmpty decodes the index of a table without entries, and an
// index without slots, which only a table without blocks may have.
func TestHashIndexEmpty(t *testing.T) {
	contents := writeHashIndex(nil, 100, []uint64{0}, false)
	x := checkHashIndex(t, contents, 100, []uint64{0}, nil, false)
	if x.NumSlots() != 1 || x.NumBlocks() != 0 || x.Occupied() != 0 {
		t.Fatalf("NumSlots %d, NumBlocks %d, Occupied %d", x.NumSlots(), x.NumBlocks(), x.Occupied())
	}
	if rate := falseMatchRate(t, &x, []uint64{0, 1, math.MaxUint64, codec.KeyHash(nil)}); rate != 0 {
		t.Fatalf("probes of an empty index matched")
	}
	// A data size other than 0 is wrong without blocks.
	_, err := codec.DecodeHashIndex(contents, 100, 5, 0)
	mustCorrupt(t, err, format.SectionHashIndex, 100+int64(len(contents))-8, "data size 5 without blocks")

	// Zero slots.
	pad := (64 - (100+16)%64) % 64
	noSlots := []byte{4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	noSlots = append(noSlots, make([]byte, pad+8)...)
	x, err = codec.DecodeHashIndex(noSlots, 100, 0, 0)
	if err != nil {
		t.Fatalf("index without slots or blocks: %v", err)
	}
	p := x.Probe(12345)
	if _, _, ok, err := p.Next(); ok || err != nil || x.Occupied() != 0 {
		t.Fatalf("probe of an index without slots: ok %v, err %v", ok, err)
	}
	// A zero HashProbe ends at once.
	var zero codec.HashProbe
	if _, _, ok, err := zero.Next(); ok || err != nil {
		t.Fatalf("zero HashProbe: ok %v, err %v", ok, err)
	}
}

// slotValue reads, and setSlotValue rewrites, slot i of a section whose
// slots start at start: its value as a little-endian integer of width
// bytes.
func slotValue(c []byte, start, width, i int) uint64 {
	var b [8]byte
	copy(b[:], c[start+i*width:start+(i+1)*width])
	return binary.LittleEndian.Uint64(b[:])
}

func setSlotValue(c []byte, start, width, i int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(c[start+i*width:start+(i+1)*width], b[:width])
}

// TestHashProbeBlockPastEnd rewrites the block field of a key's slot: a
// block number past the last is a corruption reported at the slot.
func TestHashProbeBlockPastEnd(t *testing.T) {
	const sectionOff = 0
	const nb = 5 // 3 block bits: the field can name blocks up to 6
	h := codec.KeyHash([]byte("the key"))
	contents := writeHashIndex([]hloc{{h, 2, 7}}, sectionOff, evenBlockOffsets(nb, 100), false)
	width, bb, ob := int(contents[0]), int(contents[1]), int(contents[2])
	start := codec.HashIndexHeaderLen + 48 // slots at file offset 64
	if width != 4 || bb != 3 || ob != 3 {
		t.Fatalf("width %d, %d block bits, %d offset bits; want 4, 3, 3", width, bb, ob)
	}
	slot := -1
	for i := range 2 {
		if v := slotValue(contents, start, width, i); v>>ob&(1<<bb-1) != 0 {
			slot = i
		}
	}
	if slot < 0 {
		t.Fatal("no occupied slot")
	}
	v := slotValue(contents, start, width, slot)
	if got := v >> ob & (1<<bb - 1); got != 3 || v&(1<<ob-1) != 7 {
		t.Fatalf("slot holds block field %d, offset %d; want 3 (block 2 + 1), 7", got, v&(1<<ob-1))
	}
	withBlockField := func(field uint64) codec.HashIndex {
		c := bytes.Clone(contents)
		setSlotValue(c, start, width, slot, v&^((1<<bb-1)<<ob)|field<<ob)
		x, err := codec.DecodeHashIndex(c, sectionOff, 500, nb)
		if err != nil {
			t.Fatalf("DecodeHashIndex: %v", err)
		}
		return x
	}

	// Field nb names the last block: fine.
	x := withBlockField(nb)
	p := x.Probe(h)
	if b, o, ok, err := p.Next(); b != nb-1 || o != 7 || !ok || err != nil {
		t.Fatalf("last block: Next() = %d, %d, %v, %v; want %d, 7, true, nil", b, o, ok, err, nb-1)
	}

	for _, field := range []uint64{nb + 1, 1<<bb - 1} {
		x := withBlockField(field)
		p := x.Probe(h)
		b, o, ok, err := p.Next()
		if ok || b != 0 || o != 0 {
			t.Fatalf("block field %d: Next() = %d, %d, %v, %v", field, b, o, ok, err)
		}
		mustCorrupt(t, err, format.SectionHashIndex, sectionOff+int64(start+slot*width), fmt.Sprintf("block field %d", field))
		// The probe is over.
		if _, _, ok, err := p.Next(); ok || err != nil {
			t.Fatalf("Next after a corruption: ok %v, err %v", ok, err)
		}
		// Occupied counts the slot all the same.
		if x.Occupied() != 1 {
			t.Fatalf("Occupied() = %d", x.Occupied())
		}
	}
}

// TestHashProbeFullIndex fills every slot of an index (which the writer
// never does): every probe still ends, after at most NumSlots slots.
func TestHashProbeFullIndex(t *testing.T) {
	f := newHashIndexFixture(t)
	c := bytes.Clone(f.contents)
	bb, ob := int(c[1]), int(c[2])
	start := codec.HashIndexHeaderLen + f.pad
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range f.numSlots {
		if slotValue(c, start, f.width, i)>>ob&(1<<bb-1) == 0 {
			tag := rng.Uint64() & (1<<(8*f.width-bb-ob) - 1)
			setSlotValue(c, start, f.width, i, tag<<(bb+ob)|1<<ob)
		}
	}
	x, err := codec.DecodeHashIndex(c, f.off, f.dataSize, f.numBlocks)
	if err != nil {
		t.Fatal(err)
	}
	if x.Occupied() != uint64(f.numSlots) {
		t.Fatalf("Occupied() = %d of %d slots", x.Occupied(), f.numSlots)
	}
	for _, h := range f.hashes {
		// Block -1 is never yielded: the probe must end by itself.
		if reaches(t, &x, h, -1, 0) {
			t.Fatalf("probe found a location it was not given")
		}
	}
	for i := range 1000 {
		p := x.Probe(rng.Uint64())
		n := 0
		for {
			_, _, ok, err := p.Next()
			if err != nil {
				t.Fatalf("probe %d: %v", i, err)
			}
			if !ok {
				break
			}
			if n++; n > f.numSlots {
				t.Fatalf("probe %d yields more than %d matches", i, f.numSlots)
			}
		}
	}
}

// TestDecodeHashIndexMutations flips bytes of a valid section: decoding
// either fails with a hash index corruption or gives an index whose
// methods neither panic nor name a block out of range.
func TestDecodeHashIndexMutations(t *testing.T) {
	t.Run("block offsets", func(t *testing.T) { decodeHashIndexMutations(t, newHashIndexFixture(t)) })
	t.Run("decoded offsets", func(t *testing.T) { decodeHashIndexMutations(t, newDecodedHashIndexFixture(t)) })
}

func decodeHashIndexMutations(t *testing.T, f hashIndexFixture) {
	rapid.Check(t, func(t *rapid.T) {
		c := bytes.Clone(f.contents)
		for range rapid.IntRange(1, 4).Draw(t, "flips") {
			i := rapid.IntRange(0, len(c)-1).Draw(t, "pos")
			c[i] = rapid.Byte().Draw(t, "byte")
		}
		if rapid.Bool().Draw(t, "truncate") {
			c = c[:rapid.IntRange(0, len(c)).Draw(t, "len")]
		}
		numBlocks := rapid.SampledFrom([]uint64{f.numBlocks, uint64(binary.LittleEndian.Uint32(append(c, make([]byte, 8)...)[4:]))}).Draw(t, "numBlocks")
		x, err := codec.DecodeHashIndex(c, f.off, f.dataSize, numBlocks)
		if err != nil {
			var ce *format.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, format.ErrCorrupt) || ce.Section != format.SectionHashIndex ||
				ce.Offset < f.off || ce.Offset >= f.off+int64(len(c))+8 {
				t.Fatalf("error %v", err)
			}
			return
		}
		for i := range x.NumBlocks() {
			h := x.BlockHandle(i)
			if h.Offset+h.Length+format.BlockTrailerLen > f.dataSize {
				t.Fatalf("BlockHandle(%d) = %+v past the data size %d", i, h, f.dataSize)
			}
		}
		if x.Occupied() > x.NumSlots() {
			t.Fatalf("Occupied() = %d of %d slots", x.Occupied(), x.NumSlots())
		}
		if x.DecodedOffsets() {
			if x.FileOffsets() || x.DecodedStart(0) != 0 {
				t.Fatalf("FileOffsets() = %v, DecodedStart(0) = %d", x.FileOffsets(), x.DecodedStart(0))
			}
			for i := range x.NumBlocks() {
				if a, b := x.DecodedStart(i), x.DecodedStart(i+1); b < a || b-a < 4 {
					t.Fatalf("DecodedStart(%d) = %d, DecodedStart(%d) = %d", i, a, i+1, b)
				}
			}
		}
		for _, h := range append(f.hashes, 1, 2, 3) {
			p := x.Probe(h)
			for n := uint64(0); ; n++ {
				b, _, ok, err := p.Next()
				if err != nil {
					var ce *format.CorruptError
					if !errors.As(err, &ce) || !errors.Is(err, format.ErrCorrupt) || ce.Section != format.SectionHashIndex {
						t.Fatalf("Next: %v", err)
					}
					break
				}
				if !ok {
					break
				}
				if b < 0 || b >= x.NumBlocks() || n > x.NumSlots() {
					t.Fatalf("Next() gave block %d of %d after %d matches", b, x.NumBlocks(), n)
				}
			}
		}
	})
}

// entriesOf walks the entries of a block independently of BlockIter and
// returns each entry's offset and shared length.
func entriesOf(t rapid.TB, block []byte) (offsets []int, shared []uint64) {
	t.Helper()
	n := len(block)
	end := n - 4 - 4*int(binary.LittleEndian.Uint32(block[n-4:]))
	for p := 0; p < end; {
		offsets = append(offsets, p)
		s, k1 := binary.Uvarint(block[p:end])
		u, k2 := binary.Uvarint(block[p+k1 : end])
		v, k3 := binary.Uvarint(block[p+k1+k2 : end])
		if k1 <= 0 || k2 <= 0 || k3 <= 0 {
			t.Fatalf("bad entry header at %d", p)
		}
		shared = append(shared, s)
		p += k1 + k2 + k3 + int(u) + int(v)
		if p > end {
			t.Fatalf("entry overruns the block")
		}
	}
	return offsets, shared
}

// TestBlockWriterWholeKeys checks that a WholeKeys block reads like a
// normal block, stores every key whole with restart points as usual, and
// that Add returns each entry's offset, where EntryAt decodes it.
func TestBlockWriterWholeKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := drawEntries(t)
		interval := rapid.IntRange(1, 20).Draw(t, "interval")
		normal := codec.BlockWriter{RestartInterval: interval}
		whole := codec.BlockWriter{RestartInterval: interval, WholeKeys: true}
		var normalOffs, wholeOffs []int
		for _, e := range entries {
			normalOffs = append(normalOffs, normal.Add([]byte(e.K), []byte(e.V)))
			wholeOffs = append(wholeOffs, whole.Add([]byte(e.K), []byte(e.V)))
		}
		if whole.Entries() != len(entries) {
			t.Fatalf("Entries() = %d, want %d", whole.Entries(), len(entries))
		}
		est := whole.EstimatedSize()
		wb := bytes.Clone(whole.Finish())
		nb := bytes.Clone(normal.Finish())
		if est != len(wb) {
			t.Fatalf("EstimatedSize() = %d, block is %d bytes", est, len(wb))
		}

		// Same entries, same seeks.
		wit, nit := initIter(t, wb), initIter(t, nb)
		if diff := cmp.Diff(entries, forward(t, wit), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("First/Next (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(reversed(entries), backward(t, wit), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Last/Prev (-want +got):\n%s", diff)
		}
		if wit.NumRestarts() != nit.NumRestarts() || wit.NumRestarts() != (len(entries)+interval-1)/interval {
			t.Fatalf("NumRestarts() = %d, normal block %d, for %d entries at interval %d", wit.NumRestarts(), nit.NumRestarts(), len(entries), interval)
		}
		for _, target := range seekTargets(entries) {
			wok, nok := wit.SeekGE([]byte(target)), nit.SeekGE([]byte(target))
			if wok != nok || wok && cur(wit) != cur(nit) {
				t.Fatalf("SeekGE(%q): whole keys %v %q, normal %v %q", target, wok, cur(wit), nok, cur(nit))
			}
		}

		// Offsets: Add's, the walk's and the iterator's agree.
		offs, shared := entriesOf(t, wb)
		if diff := cmp.Diff(wholeOffs, offs, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Add offsets vs entries (-add +walk):\n%s", diff)
		}
		nOffs, _ := entriesOf(t, nb)
		if diff := cmp.Diff(normalOffs, nOffs, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("normal block: Add offsets vs entries (-add +walk):\n%s", diff)
		}
		i := 0
		for ok := wit.First(); ok; ok = wit.Next() {
			if wit.Offset() != wholeOffs[i] {
				t.Fatalf("entry %d: Offset() = %d, Add returned %d", i, wit.Offset(), wholeOffs[i])
			}
			i++
		}
		for i, s := range shared {
			if s != 0 {
				t.Fatalf("entry %d shares %d bytes", i, s)
			}
		}
		// Restart points every interval entries.
		n := len(wb)
		nr := int(binary.LittleEndian.Uint32(wb[n-4:]))
		for j := range nr {
			if r := int(binary.LittleEndian.Uint32(wb[n-4-4*nr+4*j:])); r != wholeOffs[j*interval] {
				t.Fatalf("restart %d at %d, entry %d at %d", j, r, j*interval, wholeOffs[j*interval])
			}
		}

		// EntryAt decodes each entry from its offset.
		for i, e := range entries {
			k, v, err := codec.EntryAt(wb, 4096, uint32(wholeOffs[i]))
			if err != nil {
				t.Fatalf("EntryAt(%d): %v", wholeOffs[i], err)
			}
			if string(k) != e.K || string(v) != e.V || cap(k) != len(k) || cap(v) != len(v) {
				t.Fatalf("EntryAt(%d) = %q, %q (caps %d, %d); want %q, %q", wholeOffs[i], k, v, cap(k), cap(v), e.K, e.V)
			}
		}
		// In the normal block, exactly the entries that share bytes
		// are refused.
		_, nShared := entriesOf(t, nb)
		for i, e := range entries {
			k, v, err := codec.EntryAt(nb, 4096, uint32(normalOffs[i]))
			if nShared[i] > 0 {
				mustCorrupt(t, err, format.SectionDataBlock, 4096, "prefix-compressed entry")
			} else if err != nil || string(k) != e.K || string(v) != e.V {
				t.Fatalf("EntryAt(%d) of an entry sharing nothing = %q, %q, %v", normalOffs[i], k, v, err)
			}
		}

		// Reset then rewrite gives the same bytes.
		whole.Reset()
		for _, e := range entries {
			whole.Add([]byte(e.K), []byte(e.V))
		}
		if !bytes.Equal(whole.Finish(), wb) {
			t.Fatalf("block written after Reset differs from the first")
		}
	})
}

// TestBlockWriterWholeKeysEncoding pins the bytes of a WholeKeys block.
func TestBlockWriterWholeKeysEncoding(t *testing.T) {
	w := codec.BlockWriter{RestartInterval: 2, WholeKeys: true}
	var offs []int
	for _, e := range []kv{{"apple", "1"}, {"apply", "2"}, {"apt", ""}} {
		offs = append(offs, w.Add([]byte(e.K), []byte(e.V)))
	}
	want := []byte{
		0, 5, 1, 'a', 'p', 'p', 'l', 'e', '1', // offset 0, restart 0
		0, 5, 1, 'a', 'p', 'p', 'l', 'y', '2', // offset 9: whole, although it shares "appl"
		0, 3, 0, 'a', 'p', 't', // offset 18, restart 1
	}
	want = binary.LittleEndian.AppendUint32(want, 0)
	want = binary.LittleEndian.AppendUint32(want, 18)
	want = binary.LittleEndian.AppendUint32(want, 2)
	if diff := cmp.Diff(want, w.Finish()); diff != "" {
		t.Fatalf("block bytes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 9, 18}, offs); diff != "" {
		t.Fatalf("Add offsets (-want +got):\n%s", diff)
	}
}

// entryAt is codec.EntryAt, checked against EntryIn over the entries
// EntriesEnd finds.
func entryAt(t *testing.T, contents []byte, blockOff int64, off uint32) (key, value []byte, err error) {
	t.Helper()
	key, value, err = codec.EntryAt(contents, blockOff, off)
	end, endErr := codec.EntriesEnd(contents, blockOff)
	if endErr != nil {
		if err == nil || err.Error() != endErr.Error() {
			t.Fatalf("EntriesEnd: %v, but EntryAt: %v", endErr, err)
		}
		mustCorrupt(t, endErr, format.SectionDataBlock, blockOff, "EntriesEnd")
		return key, value, err
	}
	if n := len(contents); end < 0 || end > n-4 || (n-4-end)%4 != 0 || (n-4-end)/4 != int(binary.LittleEndian.Uint32(contents[n-4:])) {
		t.Fatalf("EntriesEnd = %d for a %d-byte block", end, n)
	}
	k2, v2, err2 := codec.EntryIn(contents[:end], blockOff, off)
	if !bytes.Equal(k2, key) || !bytes.Equal(v2, value) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
		t.Fatalf("EntryAt(%d) = %q, %q, %v; EntryIn = %q, %q, %v", off, key, value, err, k2, v2, err2)
	}
	return key, value, err
}

func TestEntryAt(t *testing.T) {
	const blockOff = 1 << 20
	long := strings.Repeat("k", 200)
	entries := []kv{
		{"", ""},
		{"a", "v"},
		{"b" + strings.Repeat("x", 126), strings.Repeat("v", 127)}, // 127-byte key and value: one-byte varints
		{"c" + strings.Repeat("x", 127), strings.Repeat("v", 128)}, // 128 bytes: two-byte varints
		{long, strings.Repeat("w", 300)},
		{long + "a", ""},
		{long + "b", strings.Repeat("z", 20000)}, // three-byte value length
		{"m", strings.Repeat("v", 200)},
	}
	for _, interval := range []int{1, 3, 16} {
		w := codec.BlockWriter{RestartInterval: interval, WholeKeys: true}
		var offs []int
		for _, e := range entries {
			offs = append(offs, w.Add([]byte(e.K), []byte(e.V)))
		}
		block := bytes.Clone(w.Finish())
		for i, e := range entries {
			k, v, err := entryAt(t, block, blockOff, uint32(offs[i]))
			if err != nil || string(k) != e.K || string(v) != e.V {
				t.Fatalf("interval %d: EntryAt(%d) = %d-byte key, %d-byte value, %v; want %d, %d", interval, offs[i], len(k), len(v), err, len(e.K), len(e.V))
			}
		}
		// Offsets at and past the end of the entries.
		end := len(block) - 4 - 4*int(binary.LittleEndian.Uint32(block[len(block)-4:]))
		for _, off := range []uint32{uint32(end), uint32(end + 1), uint32(len(block) - 1), uint32(len(block)), math.MaxUint32} {
			_, _, err := entryAt(t, block, blockOff, off)
			mustCorrupt(t, err, format.SectionDataBlock, blockOff, fmt.Sprintf("offset %d past the entries (%d bytes)", off, end))
		}
	}

	// Prefix-compressed entries, with one-byte and multi-byte shared
	// lengths, are refused.
	w := codec.BlockWriter{RestartInterval: 16}
	var offs []int
	for _, k := range []string{"apple", "apply", long, long + "a"} {
		offs = append(offs, w.Add([]byte(k), []byte("value")))
	}
	block := bytes.Clone(w.Finish())
	for _, i := range []int{1, 3} {
		_, _, err := entryAt(t, block, blockOff, uint32(offs[i]))
		mustCorrupt(t, err, format.SectionDataBlock, blockOff, fmt.Sprintf("prefix-compressed entry %d", i))
		if !strings.Contains(err.Error(), "shares") {
			t.Errorf("error %q does not say the entry shares key bytes", err)
		}
	}

	// Hand-made blocks: entries, then one restart at 0.
	mk := func(entries ...byte) []byte {
		b := append([]byte(nil), entries...)
		b = binary.LittleEndian.AppendUint32(b, 0)
		return binary.LittleEndian.AppendUint32(b, 1)
	}
	twoByte := []byte{0x80, 0x01} // 128
	good := []struct {
		name       string
		block      []byte
		key, value string
	}{
		{"empty entry ending the entries", mk(0, 0, 0), "", ""},
		{"value ending the entries", mk(0, 1, 2, 'k', 'v', 'w'), "k", "vw"},
		{"two-byte key length", mk(append(append([]byte{0}, twoByte...), append([]byte{0}, bytes.Repeat([]byte{'k'}, 128)...)...)...), strings.Repeat("k", 128), ""},
		{"two-byte value length", mk(append([]byte{0, 1, 0x80, 0x01, 'k'}, bytes.Repeat([]byte{'v'}, 128)...)...), "k", strings.Repeat("v", 128)},
		{"no restarts", []byte{0, 1, 0, 'k', 0, 0, 0, 0}, "k", ""},
	}
	for _, c := range good {
		k, v, err := entryAt(t, c.block, blockOff, 0)
		if err != nil || string(k) != c.key || string(v) != c.value {
			t.Errorf("%s: EntryAt = %q, %q, %v; want %q, %q", c.name, k, v, err, c.key, c.value)
		}
	}
	bad := []struct {
		name  string
		block []byte
		off   uint32
	}{
		{"empty block", nil, 0},
		{"3-byte block", []byte{0, 0, 0}, 0},
		{"no entries", []byte{0, 0, 0, 0}, 0},
		{"restart count too large", []byte{0, 1, 0, 'k', 0, 0, 0, 0, 3, 0, 0, 0}, 0},
		{"restart count 2^32-1", []byte{0, 1, 0, 'k', 0xff, 0xff, 0xff, 0xff}, 0},
		{"key overruns", mk(0, 5, 0, 'k', 'e', 'y'), 0},
		{"value overruns", mk(0, 1, 3, 'k', 'v', 'w'), 0},
		{"two-byte key length overruns", mk(0, 0x80, 0x01, 0, 'k'), 0},
		{"two-byte value length overruns", mk(0, 1, 0x80, 0x01, 'k', 'v'), 0},
		{"huge key length", mk(0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0), 0},
		{"huge value length", mk(0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'k'), 0},
		{"unterminated shared length", mk(0x80, 0x80), 0},
		{"unterminated key length", mk(0, 0x80), 0},
		{"unterminated value length", mk(0, 0, 0x80), 0},
		{"missing key length", mk(0), 0},
		{"missing value length", mk(0, 0), 0},
		{"overlong varint", mk(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0), 0},
		{"one-byte shared > 0", mk(3, 0, 0), 0},
		{"two-byte shared > 0", mk(0x80, 0x01, 0, 0), 0},
		{"offset inside a varint run", mk(0, 0, 0, 0x80), 3},
	}
	for _, c := range bad {
		_, _, err := entryAt(t, c.block, blockOff, c.off)
		mustCorrupt(t, err, format.SectionDataBlock, blockOff, c.name)
	}
}

// TestHashIndexFileOffsetsTooWide builds indexes whose file offsets do
// not fit a slot with the block number and an 8-bit tag: a raw table of
// 2^22 blocks of 4 KiB (16 GiB) would need 23 + 35 + 8 bits. The writer
// must still produce a section the decoder accepts and that locates every
// entry, by storing block-relative offsets instead.
func TestHashIndexFileOffsetsTooWide(t *testing.T) {
	for _, c := range []struct {
		numBlocks int
		stride    uint64
	}{
		{1 << 17, 1<<24 + 5}, // 18 block bits, 42 file offset bits
		{1000, 1 << 50},      // 10 block bits, 60 file offset bits
		{1, 1<<63 + 5},       // 1 block bit, 64 file offset bits
	} {
		blockOffsets := evenBlockOffsets(c.numBlocks, c.stride)
		rng := rand.New(rand.NewPCG(uint64(c.numBlocks), 9))
		var locs []hloc
		for i := range 2000 {
			locs = append(locs, hloc{rng.Uint64(), uint32(i % c.numBlocks), rng.Uint32N(4096)})
		}
		locs = append(locs, hloc{rng.Uint64(), uint32(c.numBlocks - 1), 4096})
		contents := writeHashIndex(locs, 0, blockOffsets, true)
		x := checkHashIndex(t, contents, 0, blockOffsets, locs, false)
		if x.FileOffsets() {
			t.Fatalf("%d blocks of %d bytes: file offsets in the slots", c.numBlocks, c.stride)
		}
	}
}

// TestHashIndexDecodedStartsFallback: the writer stores decoded offsets
// only when DecodedStarts has one start per block plus the total and the
// total fits a slot with the block number and an 8-bit tag; otherwise the
// slots hold block-relative offsets and the section has no decoded
// starts. File offsets, when asked for and they fit, take precedence.
func TestHashIndexDecodedStartsFallback(t *testing.T) {
	type mode int
	const (
		blockRelative mode = iota
		fileOffsets
		decodedOffsets
	)
	even := func(nb int, size uint64) []uint64 {
		sizes := make([]uint64, nb)
		for i := range sizes {
			sizes[i] = size
		}
		return decodedStartsOf(sizes)
	}
	cases := []struct {
		name        string
		numBlocks   int
		stride      uint64 // stored block size, trailer included
		starts      []uint64
		fileOffsets bool
		want        mode
	}{
		// 18 block bits + 38 offset bits + 8 tag bits: the widest that fits.
		{"total 2^38-1 with 2^17 blocks", 1 << 17, 1000, append(even(1<<17-1, 1<<21), 1<<38-1), false, decodedOffsets},
		// One more bit does not.
		{"total 2^38 with 2^17 blocks", 1 << 17, 1000, even(1<<17, 1<<21), false, blockRelative},
		{"total 2^47 with 2^17 blocks", 1 << 17, 1000, even(1<<17, 1<<30), false, blockRelative},
		{"total 2^64-1 in one block", 1, 1000, []uint64{0, math.MaxUint64}, false, blockRelative},
		{"starts without the total", 10, 1000, even(10, 5000)[:10], false, blockRelative},
		{"starts with an extra total", 10, 1000, append(even(10, 5000), 60000), false, blockRelative},
		{"file offsets fit and win", 10, 1000, even(10, 5000), true, fileOffsets},
		{"file offsets too wide, decoded offsets fit", 1000, 1 << 50, even(1000, 5000), true, decodedOffsets},
		{"neither fits", 1000, 1 << 50, even(1000, 1<<50), true, blockRelative},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			blockOffsets := evenBlockOffsets(c.numBlocks, c.stride)
			rng := rand.New(rand.NewPCG(uint64(ci), 3))
			var locs []hloc
			for i := range 2000 {
				locs = append(locs, hloc{rng.Uint64(), uint32(i % c.numBlocks), rng.Uint32N(900)})
			}
			w := codec.HashIndexWriter{FileOffsets: c.fileOffsets, DecodedStarts: c.starts}
			contents := writeHashIndexWith(w, locs, 0, blockOffsets)
			var x codec.HashIndex
			switch c.want {
			case blockRelative:
				x = checkHashIndex(t, contents, 0, blockOffsets, locs, false)
			case fileOffsets:
				x = checkHashIndex(t, contents, 0, blockOffsets, locs, true)
			case decodedOffsets:
				x = checkHashIndexDecoded(t, contents, 0, blockOffsets, locs, c.starts)
			}
			if x.DecodedOffsets() != (c.want == decodedOffsets) || x.FileOffsets() != (c.want == fileOffsets) {
				t.Fatalf("DecodedOffsets() = %v, FileOffsets() = %v; want mode %d", x.DecodedOffsets(), x.FileOffsets(), c.want)
			}
		})
	}
}
