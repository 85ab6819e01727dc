package fuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"
	"unsafe"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Slot offsets a hash index section is written with: in the decoded
// block, in the file (every block raw), or in the concatenation of the
// decoded blocks (compressed blocks).
const (
	slotBlockOffsets = iota
	slotFileOffsets
	slotDecodedOffsets
	slotFirstKey       // version 4: offsets in the block, 0.9 load, block offsets of 4 bytes below 4 GiB
	slotFirstKeyFilter // and the whole filter after the block offsets
)

// hashIndexSeed builds a hash index section with codec.HashIndexWriter:
// n entries spread over the blocks whose file offsets (and the data size,
// last) are blockOffsets, written at file offset off, with slot offsets
// of the given kind. With decoded offsets, each block decodes to twice
// its stored size plus 4 bytes.
func hashIndexSeed(n int, offs []uint64, off uint64, kind int) []byte {
	w := codec.HashIndexWriter{FileOffsets: kind == slotFileOffsets, FirstKeyShared: kind >= slotFirstKey}
	var filter []byte
	if kind == slotFirstKeyFilter {
		filter = []byte("\x01\x02whole filter")
		w.FilterLen = len(filter)
	}
	nb := len(offs) - 1
	if kind == slotDecodedOffsets {
		w.DecodedStarts = make([]uint64, nb+1)
		for i := range nb {
			w.DecodedStarts[i+1] = w.DecodedStarts[i] + 2*(offs[i+1]-offs[i]-format.BlockTrailerLen) + 4
		}
	}
	for i := range n {
		b := i * nb / max(n, 1)
		span := offs[b+1] - offs[b] - format.BlockTrailerLen
		w.Add(codec.KeyHash(fmt.Appendf(nil, "key%d", i)), uint32(b), uint32(uint64(i*11)%max(span, 1)))
	}
	section := w.Append(nil, off, offs)
	copy(section[len(section)-len(filter):], filter) // the room Append leaves
	return section
}

// FuzzHashIndex decodes arbitrary bytes as a hash index section with
// codec.DecodeHashIndex: at the file offset, data size and block count
// given, and at those the header and block offsets themselves claim, so
// that mutated slots get past the header checks. Whatever decodes must
// keep its promises: every BlockHandle lies inside the data section and
// the handles tile it; decoded starts (flag 2) start at 0 and grow by at
// least 4; Probe, Prefetch and Next never panic, name only blocks below
// NumBlocks, wrap ErrCorrupt, and end within NumSlots slots; Occupied
// counts at most NumSlots. The bytes also drive a round trip through
// codec.HashIndexWriter with each kind of slot offset (every added entry
// must be found from its hash) and, as data block contents,
// codec.EntryAt, which must agree with codec.BlockIter on every entry
// stored whole.
func FuzzHashIndex(f *testing.F) {
	sections := 0
	for _, st := range seedTables(f) {
		p, ok := splitTable(st.file)
		if ok && p.hashIndex != nil {
			// The tables built here must decode; golden files need not.
			if _, err := codec.DecodeHashIndex(p.hashIndex, int64(p.hashIndexOff), p.dataSize, p.numDataBlocks); err == nil {
				sections++
			} else if !strings.HasPrefix(st.name, "golden/") {
				f.Fatalf("seed table %s: hash index does not decode: %v", st.name, err)
			}
			f.Add(p.hashIndex, int64(p.hashIndexOff), p.dataSize, p.numDataBlocks, uint64(0x9e3779b97f4a7c15))
			for i, b := range p.dataBlocks {
				if i < 2 {
					f.Add(b, int64(0), uint64(len(b)), uint64(1), uint64(i))
				}
			}
		}
	}
	if sections < 4 {
		f.Fatalf("%d seed tables have a hash index, want at least 4", sections)
	}
	for _, kind := range []int{slotBlockOffsets, slotFileOffsets, slotDecodedOffsets, slotFirstKey, slotFirstKeyFilter} {
		offs := []uint64{0, 100, 250, 1000}
		f.Add(hashIndexSeed(40, offs, 1000, kind), int64(1000), uint64(1000), uint64(3), uint64(7+kind))
		f.Add(hashIndexSeed(1, []uint64{0, 30}, 30, kind), int64(30), uint64(30), uint64(1), uint64(1+kind))
	}
	// Version 4 with block offsets of 8 bytes (data past 4 GiB), and
	// with 5-byte slots (an entry 2^27 bytes into a block: 28 offset bits).
	big := []uint64{0, 4096, 1<<32 + 4096}
	f.Add(hashIndexSeed(40, big, big[2], slotFirstKey), int64(big[2]), big[2], uint64(2), uint64(5))
	f.Add(hashIndexSeed(40, big, big[2], slotFirstKeyFilter), int64(big[2]), big[2], uint64(2), uint64(13))
	w := codec.HashIndexWriter{FirstKeyShared: true}
	for i := range 20 {
		w.Add(codec.KeyHash(fmt.Appendf(nil, "key%d", i)), uint32(i%2), uint32(i)<<23)
	}
	offs := []uint64{0, 1<<28 + 5, 1<<29 + 10}
	wide := w.Append(nil, offs[2], offs)
	if wide[0] != 5 {
		f.Fatalf("a version 4 index with 28 offset bits has %d-byte slots, want 5", wide[0])
	}
	f.Add(wide, int64(offs[2]), offs[2], uint64(2), uint64(21))
	f.Add(hashIndexSeed(0, []uint64{0}, 0, slotBlockOffsets), int64(0), uint64(0), uint64(0), uint64(0))
	f.Add(hashIndexSeed(0, []uint64{0}, 0, slotDecodedOffsets), int64(0), uint64(0), uint64(0), uint64(2))
	f.Add([]byte{}, int64(0), uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, contents []byte, off int64, dataSize, numBlocks, h uint64) {
		checkHashIndex(t, contents, off, dataSize, numBlocks, h)
		if len(contents) >= codec.HashIndexHeaderLen+8 {
			claimedBlocks := uint64(binary.LittleEndian.Uint32(contents[4:]))
			claimedSize := binary.LittleEndian.Uint64(contents[len(contents)-8:])
			checkHashIndex(t, contents, off, claimedSize, claimedBlocks, h)
		}
		checkHashIndexWriter(t, contents, h)
		checkEntryAt(t, contents)
	})
}

// checkHashIndex decodes contents and checks what it decodes to.
func checkHashIndex(t *testing.T, contents []byte, off int64, dataSize, numBlocks, h uint64) {
	x, err := codec.DecodeHashIndex(contents, off, dataSize, numBlocks)
	if err != nil {
		wantErr(t, "DecodeHashIndex", err, format.ErrCorrupt)
		return
	}
	if uint64(x.NumBlocks()) != numBlocks {
		t.Fatalf("decoded %d blocks, want %d", x.NumBlocks(), numBlocks)
	}
	if w := x.SlotWidth(); w < 4 || w > 8 {
		t.Fatalf("slot width %d", w)
	}
	if x.NumSlots() > uint64(len(contents)) {
		t.Fatalf("%d slots in %d bytes", x.NumSlots(), len(contents))
	}
	next := uint64(0)
	for i := range x.NumBlocks() {
		bh := x.BlockHandle(i)
		if bh.Offset != next || bh.End() < bh.Offset || bh.End() > dataSize {
			t.Fatalf("block %d of %d: handle %+v (end %d), previous block ends at %d, data size %d", i, x.NumBlocks(), bh, bh.End(), next, dataSize)
		}
		next = bh.End()
	}
	if next != dataSize {
		t.Fatalf("blocks end at %d, data size %d", next, dataSize)
	}
	if x.DecodedOffsets() {
		if x.FileOffsets() {
			t.Fatal("slots hold both file and decoded offsets")
		}
		if d := x.DecodedStart(0); d != 0 {
			t.Fatalf("decoded start 0 is %d", d)
		}
		for i := range x.NumBlocks() {
			if a, b := x.DecodedStart(i), x.DecodedStart(i+1); b < a || b-a < 4 {
				t.Fatalf("decoded starts %d, %d of blocks %d, %d", a, b, i, i+1)
			}
		}
	}
	// A version 4 section's whole filter: only there, at least a byte,
	// and the section's last bytes.
	if fl := x.Filter(); fl != nil {
		if !x.FirstKeyShared() || len(fl) == 0 || !within(contents, fl) || &fl[len(fl)-1] != &contents[len(contents)-1] {
			t.Fatalf("whole filter of %d bytes (first key shared %v) is not the end of the %d-byte section", len(fl), x.FirstKeyShared(), len(contents))
		}
		filterblock.BloomMayContain(fl, contents)
	}
	if x.FirstKeyShared() && (x.FileOffsets() || x.DecodedOffsets()) {
		t.Fatal("a version 4 index claims file or decoded offsets")
	}
	occupied := x.Occupied()
	if occupied > x.NumSlots() {
		t.Fatalf("%d of %d slots occupied", occupied, x.NumSlots())
	}
	for _, hh := range []uint64{h, ^h, h * 0x9e3779b97f4a7c15, codec.KeyHash(contents), 0} {
		p := x.Probe(hh)
		p.Prefetch()
		found := uint64(0)
		for calls := uint64(0); ; calls++ {
			if calls > x.NumSlots() {
				t.Fatalf("probe of %#x: %d calls to Next without an end (%d slots)", hh, calls, x.NumSlots())
			}
			b, o, ok, err := p.Next()
			if err != nil {
				wantErr(t, "HashProbe.Next", err, format.ErrCorrupt)
				if ok {
					t.Fatal("Next returned ok with an error")
				}
			}
			if !ok {
				// The probe stays ended.
				if _, _, ok, err := p.Next(); ok || err != nil {
					t.Fatalf("Next after the end: ok %v, err %v", ok, err)
				}
				break
			}
			if b < 0 || b >= x.NumBlocks() {
				t.Fatalf("probe of %#x named block %d of %d", hh, b, x.NumBlocks())
			}
			if !x.FileOffsets() && !x.DecodedOffsets() && uint64(o) >= 1<<32 {
				t.Fatalf("probe of %#x: offset %d in a block", hh, o)
			}
			found++
		}
		if found > occupied {
			t.Fatalf("probe of %#x found %d slots, %d are occupied", hh, found, occupied)
		}
	}
}

// checkHashIndexWriter builds a hash index over entries drawn from data and
// checks that decoding it finds every one from its hash. h's low two bits
// choose the slot offsets: in the block, in the file, in the decoded
// blocks, or both of the last two asked for (file offsets win).
func checkHashIndexWriter(t *testing.T, data []byte, h uint64) {
	n := min(len(data)/8, 40)
	nb := int(h%7) + 1
	blockLen := 16 + h>>8%4000 // stored bytes per block, trailer excluded
	compact := h&4 != 0        // version 4: offsets in the block, 0.9 load, maybe a filter
	if compact && h&16 != 0 {
		blockLen += 1 << 28 // entries up to 2^28 bytes into a block: 5-byte slots
	}
	if compact && h&32 != 0 {
		blockLen += 1 << 32 // data past 4 GiB: block offsets of 8 bytes
	}
	offs := make([]uint64, nb+1)
	for i := range offs {
		offs[i] = uint64(i) * (blockLen + format.BlockTrailerLen)
	}
	sectionOff := offs[nb]
	w := codec.HashIndexWriter{FileOffsets: h&1 != 0}
	var filter []byte
	if compact {
		w = codec.HashIndexWriter{FirstKeyShared: true}
		if h&8 != 0 {
			filter = data[:min(len(data), 1+int(h>>4%64))]
			w.FilterLen = len(filter)
		}
	} else if h&2 != 0 {
		// Compressed blocks: each decodes to at least the stored bytes'
		// span of offsets, and sizes vary from block to block.
		w.DecodedStarts = make([]uint64, nb+1)
		for i := range nb {
			w.DecodedStarts[i+1] = w.DecodedStarts[i] + blockLen + 4 + (h>>20+uint64(i)*7919)%5000
		}
	}
	decoded := !w.FileOffsets && w.DecodedStarts != nil
	type loc struct {
		block int
		off   uint64
	}
	want := map[uint64][]loc{} // by hash: duplicates are allowed
	var maxOff uint32
	for i := range n {
		kh := binary.LittleEndian.Uint64(data[8*i:])
		b := int(kh>>40) % nb
		o := uint32(kh >> 8 % min(blockLen, 1<<31))
		maxOff = max(maxOff, o)
		w.Add(kh, uint32(b), o)
		l := loc{b, uint64(o)}
		switch {
		case compact:
		case w.FileOffsets:
			l.off += offs[b]
		case decoded:
			l.off += w.DecodedStarts[b]
		}
		want[kh] = append(want[kh], l)
	}
	if w.Len() != uint64(n) {
		t.Fatalf("HashIndexWriter.Len() = %d after %d adds", w.Len(), n)
	}
	section := w.Append(nil, sectionOff, offs)
	copy(section[len(section)-len(filter):], filter) // the room Append leaves
	x, err := codec.DecodeHashIndex(section, int64(sectionOff), offs[nb], uint64(nb))
	if err != nil {
		t.Fatalf("DecodeHashIndex of a written section: %v", err)
	}
	wantSlots := codec.HashIndexSlots(uint64(n))
	if compact {
		wantSlots = codec.CompactHashIndexSlots(uint64(n))
		// The layout of format's doc: the narrowest slots leaving a 5-bit
		// tag, 4-byte block offsets while the data ends below 4 GiB.
		fieldBits := bits.Len64(uint64(nb)) + bits.Len32(maxOff)
		width := max(4, (fieldBits+5+7)/8)
		offWidth := 4
		if offs[nb] > math.MaxUint32 {
			offWidth = 8
		}
		pad := (64 - (sectionOff+codec.HashIndexHeaderLen)%64) % 64
		size := codec.HashIndexHeaderLen + int(pad) + int(wantSlots)*width + offWidth*(nb+1) + len(filter)
		if x.SlotWidth() != width || len(section) != size || section[1] != byte(bits.Len64(uint64(nb))) || section[2] != byte(bits.Len32(maxOff)) {
			t.Fatalf("version 4 hash index of %d entries in %d blocks, largest offset %d, data size %d: %d-byte slots (want %d), %d bytes (want %d), block bits %d, offset bits %d",
				n, nb, maxOff, offs[nb], x.SlotWidth(), width, len(section), size, section[1], section[2])
		}
		if x.FileOffsets() || x.DecodedOffsets() || !x.FirstKeyShared() || !bytes.Equal(x.Filter(), filter) || (x.Filter() == nil) != (len(filter) == 0) {
			t.Fatalf("version 4 hash index: file offsets %v, decoded offsets %v, first key shared %v, filter %x (want %x)", x.FileOffsets(), x.DecodedOffsets(), x.FirstKeyShared(), x.Filter(), filter)
		}
	} else if x.FirstKeyShared() || x.Filter() != nil {
		t.Fatalf("older hash index decodes as version 4's")
	}
	if x.NumSlots() != wantSlots || x.Occupied() != uint64(n) || x.FileOffsets() != (w.FileOffsets && !compact) || x.DecodedOffsets() != decoded {
		t.Fatalf("%d entries: %d slots (want %d), %d occupied, file offsets %v (want %v), decoded offsets %v (want %v)",
			n, x.NumSlots(), wantSlots, x.Occupied(), x.FileOffsets(), w.FileOffsets, x.DecodedOffsets(), decoded)
	}
	for i := range nb {
		if bh := x.BlockHandle(i); bh.Offset != offs[i] || bh.Length != blockLen {
			t.Fatalf("block %d: handle %+v, want offset %d length %d", i, bh, offs[i], blockLen)
		}
	}
	if decoded {
		for i, d := range w.DecodedStarts {
			if got := x.DecodedStart(i); got != d {
				t.Fatalf("DecodedStart(%d) = %d, want %d", i, got, d)
			}
		}
	}
	for kh, locs := range want {
		p := x.Probe(kh)
		var got []loc
		for {
			b, o, ok, err := p.Next()
			if err != nil {
				t.Fatalf("probe of %#x: %v", kh, err)
			}
			if !ok {
				break
			}
			got = append(got, loc{b, uint64(o)})
		}
		for _, l := range locs {
			found := false
			for _, g := range got {
				found = found || g == l
			}
			if !found {
				t.Fatalf("entry with hash %#x at block %d offset %d not found; the probe gave %v", kh, l.block, l.off, got)
			}
		}
	}
}

// checkEntryAt reads contents as data block contents with codec.EntryAt
// and codec.EntryParts at every offset codec.BlockIter reaches (and a few
// others). An entry EntryAt decodes must be the iterator's, and it must
// refuse entries that share key bytes with their predecessor. EntryParts,
// version 4's decoder, reads an entry's shared bytes from the block's
// first key, not from the previous entry as the iterator does: it must
// give the iterator's value and key suffix, and the first key's shared
// bytes as the head, so that it agrees with the iterator exactly where
// the block is what a version 4 writer makes (the entry's shared bytes
// are the first key's), which is what Verify checks; and it may fail only
// where the iterator's entry shares more bytes than the first key has. It
// returns the number of entries on which EntryParts and the iterator
// agree.
func checkEntryAt(t *testing.T, contents []byte) (agreed int) {
	// Arbitrary offsets: errors only, never a panic or slices out of the
	// entries.
	end, endErr := codec.EntriesEnd(contents, 0)
	if endErr != nil {
		wantErr(t, "EntriesEnd", endErr, format.ErrCorrupt)
	} else if end < 0 || end > len(contents)-4 {
		t.Fatalf("EntriesEnd = %d for %d bytes", end, len(contents))
	}
	for _, off := range []uint32{0, 1, 2, 3, uint32(len(contents) / 2), uint32(len(contents)), 1 << 31} {
		if endErr == nil {
			head, tail, v, err := codec.EntryParts(contents[:end], 0, off)
			if err != nil {
				wantErr(t, "EntryParts", err, format.ErrCorrupt)
			} else if !within(contents[:end], head) || !within(contents[:end], tail) || !within(contents[:end], v) {
				t.Fatalf("EntryParts(%d) = %q, %q, %q outside the %d bytes of entries", off, head, tail, v, end)
			}
		}
		k, v, err := codec.EntryAt(contents, 0, off)
		if err != nil {
			wantErr(t, "EntryAt", err, format.ErrCorrupt)
			continue
		}
		if endErr != nil || int(off) >= end || !within(contents[:end], k) || !within(contents[:end], v) {
			t.Fatalf("EntryAt(%d) = %q, %q outside the %d bytes of entries", off, k, v, end)
		}
	}
	var it codec.BlockIter
	if it.Init(format.SectionDataBlock, 0, contents) != nil {
		return 0
	}
	if endErr != nil {
		t.Fatalf("BlockIter.Init accepts a block whose restart count EntriesEnd refuses: %v", endErr)
	}
	entries := contents[:end]
	var first []byte // the block's first key, as the iterator decodes it
	n := 0
	for ok := it.First(); ok && n < len(contents); ok = it.Next() {
		off := it.Offset()
		if off < 0 || off >= end {
			t.Fatalf("BlockIter at offset %d of %d bytes of entries", off, end)
		}
		key, value := it.Key(), it.Value()
		if n == 0 {
			first = bytes.Clone(key)
		}
		n++
		// The iterator decoded the entry's header, so its shared length
		// is a well-formed uvarint no longer than the previous key.
		shared, _ := binary.Uvarint(entries[off:])
		head, tail, v, err := codec.EntryParts(entries, 0, uint32(off))
		switch {
		case err != nil:
			wantErr(t, "EntryParts", err, format.ErrCorrupt)
			if shared <= uint64(len(first)) {
				t.Fatalf("EntryParts(%d) fails on an entry BlockIter decodes as %q=%q, sharing %d bytes of a %d-byte first key: %v", off, key, value, shared, len(first), err)
			}
		case shared > uint64(len(first)):
			t.Fatalf("EntryParts(%d) accepts an entry sharing %d bytes of a %d-byte first key", off, shared, len(first))
		case !bytes.Equal(v, value) || !bytes.Equal(tail, key[shared:]) || !bytes.Equal(head, first[:shared]):
			t.Fatalf("entry at offset %d sharing %d bytes: EntryParts gives %q+%q=%q, BlockIter %q=%q (first key %q)", off, shared, head, tail, v, key, value, first)
		case bytes.Equal(first[:shared], key[:shared]):
			agreed++ // head+tail is the iterator's key
		}

		k, v, err := codec.EntryAt(contents, 0, uint32(off))
		if err != nil {
			// A prefix-compressed entry, which a version 2 hash index
			// cannot name; one with shared = 0 is whole.
			wantErr(t, "EntryAt", err, format.ErrCorrupt)
			if shared == 0 {
				t.Fatalf("EntryAt(%d) of a whole entry BlockIter decodes as %q=%q: %v", off, key, value, err)
			}
			continue
		}
		if !bytes.Equal(k, key) || !bytes.Equal(v, value) {
			t.Fatalf("entry at offset %d: EntryAt gives %q=%q, BlockIter %q=%q", off, k, v, key, value)
		}
	}
	return agreed
}

// within reports whether b is empty or lies inside s.
func within(s, b []byte) bool {
	if len(b) == 0 {
		return true
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p-lo <= uintptr(len(s)) && uintptr(len(b)) <= uintptr(len(s))-(p-lo)
}
