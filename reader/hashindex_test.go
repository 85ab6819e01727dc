package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// matrixEntries returns sorted entries with keys that share long prefixes,
// an empty key, keys with 0x00 and 0xff bytes, and values from empty to
// larger than a block, so that blocks hold from one entry to dozens.
func matrixEntries() []entry {
	m := map[string]string{"": "the empty key", "\x00": "", "\xff\xff": "top"}
	for i := range 300 {
		k := fmt.Sprintf("tenant/%04d/object/%d", i%37, i)
		v := fmt.Sprintf("value-%d-%s", i, strings.Repeat("v", (i*13)%70))
		switch i % 50 {
		case 7:
			v = strings.Repeat(fmt.Sprint(i%10), 3000) // larger than the block size
		case 11:
			v = ""
		}
		m[k] = v
		if i%29 == 0 {
			m[k+"\x00"] = "zero-suffixed " + k
		}
	}
	var es []entry
	for k, v := range m {
		es = append(es, entry{k, v})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Key < es[j].Key })
	return es
}

// matrixAbsent returns keys that are not in es: neighbours of present keys
// and keys unlike any of them.
func matrixAbsent(es []entry) []string {
	present := map[string]bool{}
	for _, e := range es {
		present[e.Key] = true
	}
	var out []string
	add := func(k string) {
		if !present[k] {
			out = append(out, k)
		}
	}
	for i, e := range es {
		if i%3 == 0 {
			add(e.Key + "\x01")
			add(successor(e.Key))
			if len(e.Key) > 0 {
				add(e.Key[:len(e.Key)-1])
			}
		}
	}
	for i := range 200 {
		add(fmt.Sprintf("absent/%d", i))
	}
	add("\xff\xff\xff")
	add("\x00\x00")
	return out
}

// TestHashIndexMatrix checks every lookup of a table built both ways,
// format version 1 and version 2 (hash index), across every combination
// of compression, filter policy (built-in Bloom, LevelDBBloom, a policy
// registered with the reader, a policy unknown to it), block cache budget
// (default, disabled, too small for any block) and source (reader.New over
// a bytes.Reader, reader.Open of a memory-mapped file). Get, GetAppend and
// MayContain must agree with the entries for every key and a few hundred
// absent ones, twice over (the second pass meets checked and cached
// blocks), and both versions must give MayContain the same answers: they
// hold the same filter.
func TestHashIndexMatrix(t *testing.T) {
	es := matrixEntries()
	absent := matrixAbsent(es)
	policies := []struct {
		name   string
		policy func() filterblock.Policy
		known  bool
		reg    bool // register the policy with the reader
	}{
		{"bloom", func() filterblock.Policy { return filterblock.Bloom(10) }, true, false},
		{"leveldb", func() filterblock.Policy { return filterblock.LevelDBBloom(10) }, true, false},
		{"registered", func() filterblock.Policy { return &bitmapPolicy{} }, true, true},
		{"unknown", func() filterblock.Policy { return &bitmapPolicy{} }, false, false},
	}
	caches := []struct {
		name string
		size int64
	}{{"cache", 1 << 20}, {"nocache", 0}, {"tinycache", 1}}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		for _, pol := range policies {
			t.Run(c.String()+"/"+pol.name, func(t *testing.T) {
				// mayContain[v] holds each version's MayContain answers
				// for the absent keys, from the first reader opened.
				mayContain := map[string][]bool{}
				for _, v := range tableVersions {
					policy := pol.policy()
					data, props := build(t, es, &builder.Options{BlockSize: 512, RestartInterval: 4, Compression: c, Filter: policy, HashIndex: v.hash, FormatVersion: v.fv})
					if props.FormatVersion != v.version || (props.HashIndexSize != 0) != v.hasHashIndex() {
						t.Fatalf("%s: built format version %d with a %d-byte hash index", v.name, props.FormatVersion, props.HashIndexSize)
					}
					if props.NumDataBlocks < 10 {
						t.Fatalf("%s: %d data blocks, want at least 10", v.name, props.NumDataBlocks)
					}
					for _, cc := range caches {
						opts := cacheOpts(t, cc.size)
						if pol.reg {
							opts.Filters = []filterblock.Policy{policy}
						}
						t.Run(v.name+"/"+cc.name, func(t *testing.T) {
							sources(t, data, opts, func(t *testing.T, r *reader.Reader) {
								got := checkMatrixReader(t, r, es, absent, v.version, pol.known)
								if prev, ok := mayContain[v.name]; ok && !slices.Equal(prev, got) {
									t.Fatalf("MayContain answers for absent keys differ between readers of the same table")
								}
								mayContain[v.name] = got
							})
						})
					}
				}
				for _, v := range tableVersions[1:] {
					if !slices.Equal(mayContain[tableVersions[0].name], mayContain[v.name]) {
						t.Fatalf("MayContain answers for absent keys differ between format versions 1 and %d", v.version)
					}
				}
			})
		}
	}
}

// checkMatrixReader checks r against es and absent keys and returns the
// MayContain answers for the absent keys.
func checkMatrixReader(t *testing.T, r *reader.Reader, es []entry, absent []string, version uint32, known bool) []bool {
	t.Helper()
	p := r.Properties()
	if p.FormatVersion != version || r.Footer().Version != version {
		t.Fatalf("format version %d, footer %d; want %d", p.FormatVersion, r.Footer().Version, version)
	}
	if r.FilterKnown() != known {
		t.Fatalf("FilterKnown() = %v, want %v", r.FilterKnown(), known)
	}
	var may []bool
	for pass := range 2 {
		for i := range es {
			e := es[i]
			if pass == 1 {
				e = es[len(es)-1-i] // the other way round
			}
			if !r.MayContain([]byte(e.Key)) {
				t.Fatalf("MayContain(%q) = false for a present key", e.Key)
			}
			v, err := r.Get([]byte(e.Key))
			if err != nil || v == nil || string(v) != e.Value {
				t.Fatalf("pass %d: Get(%q) = %q (nil %v), %v; want %q", pass, e.Key, shorten(v), v == nil, err, shorten([]byte(e.Value)))
			}
			dst := []byte("dst:")
			v, err = r.GetAppend(dst, []byte(e.Key))
			if err != nil || string(v) != "dst:"+e.Value {
				t.Fatalf("pass %d: GetAppend(dst, %q) = %q, %v", pass, e.Key, shorten(v), err)
			}
		}
		for _, k := range absent {
			mc := r.MayContain([]byte(k))
			if pass == 0 {
				may = append(may, mc)
			}
			if !known && !mc {
				t.Fatalf("MayContain(%q) = false with an unknown filter policy", k)
			}
			if v, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) || v != nil {
				t.Fatalf("pass %d: Get(%q) of an absent key = %q, %v; want nil, ErrNotFound", pass, k, shorten(v), err)
			}
			dst := []byte("dst:")
			if v, err := r.GetAppend(dst, []byte(k)); !errors.Is(err, reader.ErrNotFound) || !bytes.Equal(v, dst) {
				t.Fatalf("pass %d: GetAppend(dst, %q) of an absent key = %q, %v; want dst unchanged and ErrNotFound", pass, k, shorten(v), err)
			}
		}
	}
	if err := r.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	got, err := scan(r)
	if err != nil || !slices.Equal(got, es) {
		t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
	}
	return may
}

// shorten abbreviates long values in failure messages.
func shorten(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// hashSection is the hash index section of a version 2 table, located and
// parsed by the test itself (from the layout in package format's doc), so
// that tests can rewrite slots and reseal the section's checksum.
type hashSection struct {
	data                  []byte // the whole table; edits go here
	off, length           uint64 // section contents: file offset and length (trailer excluded)
	width                 uint64 // slot width in bytes
	blockBits, offsetBits uint
	numBlocks             int
	numSlots              uint64
	slots                 uint64   // file offset of slot 0
	offsets               uint64   // file offset of the block offsets
	decoded               uint64   // file offset of the decoded starts, if decodedOffsets
	fileOffsets           bool     // slots hold entries' file offsets, not offsets in the block (flag bit 0)
	decodedOffsets        bool     // slots hold entries' offsets in the concatenated decoded blocks (flag bit 1)
	starts                []uint64 // each block's decoded start, then the total: from the blocks, not the section
	blocks                []blockInfo
	loc                   map[string][2]uint64 // key -> (block field, offset field) of its slot
}

// parseHashSection parses the hash index of data, a table with one
// (version 2, or 3 partitioned), and works out which slot locates each
// key.
func parseHashSection(t *testing.T, data []byte) *hashSection {
	t.Helper()
	r := openMem(t, data, nil)
	p := r.Properties()
	r.Close()
	if p.FormatVersion != format.Version2 && p.FormatVersion != format.Version3 || p.HashIndexSize < codec.HashIndexHeaderLen+format.BlockTrailerLen {
		t.Fatalf("not a table with a hash index: version %d, hash index size %d", p.FormatVersion, p.HashIndexSize)
	}
	h := &hashSection{data: data, off: p.DataSize, length: p.HashIndexSize - format.BlockTrailerLen}
	c := data[h.off : h.off+h.length]
	h.width, h.blockBits, h.offsetBits = uint64(c[0]), uint(c[1]), uint(c[2])
	switch flags := c[3]; flags {
	case 0:
	case 1:
		h.fileOffsets = true
	case 2:
		h.decodedOffsets = true
	default:
		t.Fatalf("hash index flags %#02x", flags)
	}
	h.numBlocks = int(binary.LittleEndian.Uint32(c[4:]))
	h.numSlots = binary.LittleEndian.Uint64(c[8:])
	// The slots start at the first multiple of 64 after the header; the
	// block offsets follow them, then, with decoded offsets, the decoded
	// starts.
	h.slots = (h.off + codec.HashIndexHeaderLen + 63) / 64 * 64
	h.offsets = h.slots + h.numSlots*h.width
	end := h.offsets + 8*uint64(h.numBlocks+1)
	if h.decodedOffsets {
		h.decoded = end
		end += 8 * uint64(h.numBlocks+1)
	}
	if end != h.off+h.length || uint64(h.numBlocks) != p.NumDataBlocks {
		t.Fatalf("hash index layout: %d slots of %d bytes at %d, %d blocks, flags %#02x; section [%d, %d)", h.numSlots, h.width, h.slots, h.numBlocks, c[3], h.off, h.off+h.length)
	}
	h.blocks = dataBlocks(t, data)
	allRaw := true
	for i, b := range h.blocks {
		if got := binary.LittleEndian.Uint64(data[h.offsets+8*uint64(i):]); got != b.Handle.Offset {
			t.Fatalf("hash index block offset %d is %d, the index block says %d", i, got, b.Handle.Offset)
		}
		h.starts = append(h.starts, 0)
		if i > 0 {
			h.starts[i] = h.starts[i-1] + uint64(len(h.blocks[i-1].Contents))
		}
		allRaw = allRaw && b.Type == format.BlockTypeRaw
	}
	if n := len(h.blocks); n > 0 {
		h.starts = append(h.starts, h.starts[n-1]+uint64(len(h.blocks[n-1].Contents)))
	} else {
		h.starts = append(h.starts, 0)
	}
	// The builder writes file offsets when every block is raw, decoded
	// offsets otherwise.
	if h.fileOffsets != allRaw || h.decodedOffsets != !allRaw {
		t.Fatalf("hash index flags %#02x; every data block raw: %v", c[3], allRaw)
	}
	if h.decodedOffsets {
		for i, want := range h.starts {
			if got := h.decodedStart(i); got != want {
				t.Fatalf("hash index decoded start %d is %d, the blocks say %d", i, got, want)
			}
		}
	}
	// Every occupied slot names an entry.
	byLoc := map[[2]uint64]string{}
	for i, b := range h.blocks {
		for j, k := range b.Keys {
			byLoc[h.location(i, b.Offsets[j])] = k
		}
	}
	h.loc = map[string][2]uint64{}
	for s := range h.numSlots {
		_, blk, off := h.fields(h.slot(s))
		if blk == 0 {
			continue
		}
		if k, ok := byLoc[[2]uint64{blk, off}]; ok {
			h.loc[k] = [2]uint64{blk, off}
		}
	}
	if uint64(len(h.loc)) != p.NumEntries || h.occupied() != p.NumEntries {
		t.Fatalf("the hash index's slots do not locate the table's %d entries", p.NumEntries)
	}
	return h
}

// location returns the slot fields (block+1, offset) for the entry at byte
// offset off of block i's decoded contents: off made a file offset or an
// offset in the concatenated decoded blocks as the section's flags say.
func (h *hashSection) location(i, off int) [2]uint64 {
	o := uint64(off)
	switch {
	case h.fileOffsets:
		o += h.blocks[i].Handle.Offset
	case h.decodedOffsets:
		o += h.starts[i]
	}
	return [2]uint64{uint64(i + 1), o}
}

// decodedStart returns decoded start i as stored in the section.
func (h *hashSection) decodedStart(i int) uint64 {
	return binary.LittleEndian.Uint64(h.data[h.decoded+8*uint64(i):])
}

// setDecodedStart rewrites decoded start i in the section.
func (h *hashSection) setDecodedStart(i int, v uint64) {
	binary.LittleEndian.PutUint64(h.data[h.decoded+8*uint64(i):], v)
}

func (h *hashSection) slot(s uint64) uint64 {
	var b [8]byte
	copy(b[:], h.data[h.slots+s*h.width:h.slots+(s+1)*h.width])
	return binary.LittleEndian.Uint64(b[:])
}

func (h *hashSection) setSlot(s, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(h.data[h.slots+s*h.width:h.slots+(s+1)*h.width], b[:h.width])
}

func (h *hashSection) fields(v uint64) (tag, block, off uint64) {
	return v >> (h.blockBits + h.offsetBits), v >> h.offsetBits & (1<<h.blockBits - 1), v & (1<<h.offsetBits - 1)
}

func (h *hashSection) value(tag, block, off uint64) uint64 {
	if block >= 1<<h.blockBits || off >= 1<<h.offsetBits {
		panic(fmt.Sprintf("block %d or offset %d does not fit %d and %d bits", block, off, h.blockBits, h.offsetBits))
	}
	return tag<<(h.blockBits+h.offsetBits) | block<<h.offsetBits | off
}

// slotOf returns the slot locating key.
func (h *hashSection) slotOf(t *testing.T, key string) uint64 {
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

// retarget points key's slot (keeping its tag) at loc.
func (h *hashSection) retarget(t *testing.T, key string, loc [2]uint64) {
	t.Helper()
	s := h.slotOf(t, key)
	tag, _, _ := h.fields(h.slot(s))
	h.setSlot(s, h.value(tag, loc[0], loc[1]))
}

func (h *hashSection) occupied() uint64 {
	var n uint64
	for s := range h.numSlots {
		if _, b, _ := h.fields(h.slot(s)); b != 0 {
			n++
		}
	}
	return n
}

// reseal recomputes the section's trailer checksum.
func (h *hashSection) reseal() {
	stored := h.data[h.off : h.off+h.length]
	typ := h.data[h.off+h.length]
	binary.LittleEndian.PutUint32(h.data[h.off+h.length+1:], codec.BlockChecksum(stored, typ))
}

// keyAt returns the block number and entry offset of key.
func (h *hashSection) keyAt(t *testing.T, key string) (int, int) {
	t.Helper()
	for i, b := range h.blocks {
		if j := slices.Index(b.Keys, key); j >= 0 {
			return i, b.Offsets[j]
		}
	}
	t.Fatalf("key %q is in no block", key)
	return 0, 0
}

// craftedReaders opens data every way a lookup can meet a hash index slot:
// reader.New with the default block cache, with none and with one smaller
// than the decoded blocks (so that a compressed table's blocks cannot go
// in the cache), and reader.Open (memory-mapped), fresh or after a full scan
// has checked (and cached) every block through the index block, or with
// the small cache. Verify runs first or last. f gets each reader, with
// verifyFirst; the reader is closed afterwards.
func craftedReaders(t *testing.T, data []byte, f func(t *testing.T, r *reader.Reader, verifyFirst bool)) {
	t.Helper()
	path := writeFile(t, t.TempDir(), data)
	small := cacheOpts(t, smallCacheSize)
	for _, how := range []string{"New", "New-nocache", "New-smallcache", "Open", "Open-scanned", "Open-smallcache"} {
		for _, verifyFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/verifyFirst=%v", how, verifyFirst), func(t *testing.T) {
				var r *reader.Reader
				var err error
				switch how {
				case "New":
					r, err = reader.New(bytes.NewReader(data), int64(len(data)), nil)
				case "New-nocache":
					r, err = reader.New(bytes.NewReader(data), int64(len(data)), cacheOpts(t, 0))
				case "New-smallcache":
					r, err = reader.New(bytes.NewReader(data), int64(len(data)), small)
				case "Open-smallcache":
					r, err = reader.Open(path, small)
				default:
					r, err = reader.Open(path, nil)
				}
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				defer r.Close()
				if how == "Open-scanned" {
					if _, err := scan(r); err != nil {
						t.Fatalf("scan: %v", err)
					}
				}
				f(t, r, verifyFirst)
			})
		}
	}
}

// smallCacheSize is a cache capacity that holds a few blocks of the
// crafted tables (512-byte blocks) but not all of their decoded blocks,
// so that blocks are evicted and read again.
const smallCacheSize = 2048

// TestHashIndexCrafted rewrites slots of a version 2 table's hash index,
// resealing its checksum, so that the damage passes every CRC: a slot
// pointing at another entry, two slots swapped, slots pointing inside an
// entry, at the restart array or past the block, a slot naming a block
// past the last or the wrong block, a slot emptied, an extra slot, and
// block offsets that disagree with the index block. Get must never return
// a wrong value: the damaged key gives an error (ErrNotFound or
// ErrCorrupt) and, where the damage cannot touch them, every other key
// still reads back. Verify must report ErrCorrupt in the hash index (or,
// for a slot leading into an entry, the data block).
func TestHashIndexCrafted(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		t.Run(c.String(), func(t *testing.T) { hashIndexCrafted(t, c) })
	}
}

func hashIndexCrafted(t *testing.T, c format.Compression) {
	es := numbered(300, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("x", i%40)) })
	orig, _ := build(t, es, &builder.Options{BlockSize: 512, RestartInterval: 4, Compression: c, HashIndex: true})
	base := parseHashSection(t, slices.Clone(orig))
	if len(base.blocks) < 4 {
		t.Fatalf("%d data blocks, want at least 4", len(base.blocks))
	}
	// a and b lie in different blocks, a2 in a's block; a is neither the
	// first nor the last entry of its block.
	b1, b2 := base.blocks[1], base.blocks[2]
	a, a2, b := b1.Keys[1], b1.Keys[2], b2.Keys[1]
	ai, aoff := base.keyAt(t, a)
	entriesEnd := func(i int) int { // offset of block i's restart array
		cont := base.blocks[i].Contents
		n := int(binary.LittleEndian.Uint32(cont[len(cont)-4:]))
		return len(cont) - 4 - 4*n
	}

	type crafted struct {
		name string
		edit func(t *testing.T, h *hashSection)
		// affected keys may give ErrNotFound or ErrCorrupt (never a
		// wrong value); every other key must read back, unless
		// anyKey.
		affected []string
		anyKey   bool
		sections []string // Verify's error must name one of these
		want     string   // in Verify's error
	}
	cases := []crafted{
		{"slot to another entry", func(t *testing.T, h *hashSection) { h.retarget(t, a, h.loc[b]) },
			[]string{a}, false, []string{format.SectionHashIndex}, a},
		{"slot to another entry in the same block", func(t *testing.T, h *hashSection) { h.retarget(t, a, h.loc[a2]) },
			[]string{a}, false, []string{format.SectionHashIndex}, a},
		{"two slots swapped", func(t *testing.T, h *hashSection) {
			la, lb := h.loc[a], h.loc[b]
			h.retarget(t, a, lb)
			h.retarget(t, b, la)
		}, []string{a, b}, false, []string{format.SectionHashIndex}, ""},
		{"slot emptied", func(t *testing.T, h *hashSection) { h.setSlot(h.slotOf(t, a), 0) },
			// Keys placed after a's slot in its cluster become
			// unreachable too.
			[]string{a}, true, []string{format.SectionHashIndex}, ""},
		{"extra slot", func(t *testing.T, h *hashSection) {
			v := h.slot(h.slotOf(t, a))
			for s := range h.numSlots {
				if _, blk, _ := h.fields(h.slot(s)); blk == 0 {
					h.setSlot(s, v)
					return
				}
			}
			t.Fatal("no empty slot")
		}, nil, false, []string{format.SectionHashIndex}, "occupied"},
		{"slot names a block past the last", func(t *testing.T, h *hashSection) {
			if uint64(h.numBlocks+1) >= 1<<h.blockBits {
				t.Skipf("%d blocks fill the %d block bits", h.numBlocks, h.blockBits)
			}
			loc := h.loc[a]
			h.retarget(t, a, [2]uint64{uint64(h.numBlocks + 1), loc[1]})
		}, []string{a}, false, []string{format.SectionHashIndex}, ""},
		{"slot names the wrong block", func(t *testing.T, h *hashSection) {
			h.retarget(t, a, h.location(ai+2, aoff))
		}, []string{a}, false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""},
	}
	// A slot leading inside a's entry (its header, key and value), to the
	// restart array, past the block's contents, or to the largest offset
	// the field holds.
	for _, d := range []int{1, 2, 3, 5, 12} {
		cases = append(cases, crafted{fmt.Sprintf("slot to entry offset +%d", d), func(t *testing.T, h *hashSection) {
			h.retarget(t, a, h.location(ai, aoff+d))
		}, []string{a}, false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""})
	}
	// decodedOnly names the cases that rewrite decoded starts, which only
	// tables with compressed blocks have. Lookups subtract a block's
	// decoded start from a slot's offset, so a wrong start sends them to
	// the wrong place in the cached block.
	decodedOnly := map[string]bool{}
	decodedCase := func(c crafted) crafted {
		decodedOnly[c.name] = true
		return c
	}
	// retargetFirstFit points a's slot at offset(i) of the first block i
	// for which the offset field can hold it.
	retargetFirstFit := func(t *testing.T, h *hashSection, offset func(i int) int) {
		for i := range h.blocks {
			if loc := h.location(i, offset(i)); loc[1] < 1<<h.offsetBits {
				h.retarget(t, a, loc)
				return
			}
		}
		t.Skipf("no block's offset fits %d offset bits", h.offsetBits)
	}
	cases = append(cases,
		crafted{"slot to the restart array", func(t *testing.T, h *hashSection) {
			retargetFirstFit(t, h, entriesEnd)
		}, []string{a}, false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""},
		crafted{"slot past the block", func(t *testing.T, h *hashSection) {
			retargetFirstFit(t, h, func(i int) int { return len(h.blocks[i].Contents) + 7 })
		}, []string{a}, false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""},
		crafted{"slot to the largest offset", func(t *testing.T, h *hashSection) {
			h.retarget(t, a, [2]uint64{uint64(ai + 1), 1<<h.offsetBits - 1})
		}, []string{a}, false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""},
		// Decoded starts (compressed tables only) that disagree with
		// the blocks' decoded sizes: lookups of the keys in the blocks
		// concerned miss their entries, and Verify compares every size.
		decodedCase(crafted{"decoded start moved forward", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(2, h.decodedStart(2)+1)
		}, append(slices.Clone(b1.Keys), b2.Keys...), false, []string{format.SectionHashIndex}, "the hash index says"}),
		decodedCase(crafted{"decoded start moved back", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(2, h.decodedStart(2)-5)
		}, append(slices.Clone(b1.Keys), b2.Keys...), false, []string{format.SectionHashIndex}, "the hash index says"}),
		decodedCase(crafted{"decoded size grown", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(h.numBlocks, h.decodedStart(h.numBlocks)+64)
		}, h0LastKeys(base), false, []string{format.SectionHashIndex}, "the hash index says"}),
		decodedCase(crafted{"decoded size shrunk", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(h.numBlocks, h.decodedStart(h.numBlocks)-1)
		}, h0LastKeys(base), false, []string{format.SectionHashIndex}, "the hash index says"}),
		// Past every block: every Get still finds its entry (only the
		// last start moved), and only Verify can tell.
		decodedCase(crafted{"decoded size 2^40", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(h.numBlocks, 1<<40)
		}, nil, false, []string{format.SectionHashIndex}, "the hash index says"}),
		// Rejected when the section is decoded, so no key reads back.
		decodedCase(crafted{"decoded starts decrease", func(t *testing.T, h *hashSection) {
			d1, d2 := h.decodedStart(1), h.decodedStart(2)
			h.setDecodedStart(1, d2)
			h.setDecodedStart(2, d1)
		}, nil, true, []string{format.SectionHashIndex}, "decoded start"}),
		decodedCase(crafted{"decoded block below 4 bytes", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(2, h.decodedStart(1)+3)
		}, nil, true, []string{format.SectionHashIndex}, "decoded start"}),
		decodedCase(crafted{"decoded starts not from 0", func(t *testing.T, h *hashSection) {
			h.setDecodedStart(0, 1)
		}, nil, true, []string{format.SectionHashIndex}, "decoded start"}),
		crafted{"block offsets disagree with the index block", func(t *testing.T, h *hashSection) {
			// Block 2 starts a byte early: block 1 loses its last
			// trailer byte, block 2 gains it.
			p := h.offsets + 8*2
			binary.LittleEndian.PutUint64(h.data[p:], binary.LittleEndian.Uint64(h.data[p:])-1)
		}, append(slices.Clone(b1.Keys), b2.Keys...), false, []string{format.SectionHashIndex, format.SectionDataBlock}, ""},
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := parseHashSection(t, slices.Clone(orig))
			if decodedOnly[tc.name] && !h.decodedOffsets {
				t.Skip("the slots hold file offsets: no decoded starts")
			}
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
						t.Fatalf("Get(%q) = %q, want %q or an error", e.Key, shorten(v), e.Value)
					case err == nil:
					case !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, reader.ErrNotFound):
						t.Fatalf("Get(%q): %v, want a value, ErrNotFound or ErrCorrupt", e.Key, err)
					case !affected[e.Key] && !tc.anyKey:
						t.Fatalf("Get(%q) of a key the damage does not touch: %v", e.Key, err)
					}
				}
				for _, k := range matrixAbsent(es) {
					if v, err := r.Get([]byte(k)); err == nil {
						t.Fatalf("Get(%q) of an absent key = %q", k, shorten(v))
					} else if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("Get(%q) of an absent key: %v", k, err)
					}
				}
				if !verifyFirst {
					verify()
				}
				// The index block is intact: scans read every entry, or
				// a prefix of them and then report the corruption.
				got, err := scan(r)
				switch {
				case err == nil && slices.Equal(got, es):
				case err != nil && decodedOnly[tc.name] && errors.Is(err, format.ErrCorrupt) && slices.Equal(got, es[:len(got)]):
					t.Logf("scan: %d of %d entries, %v", len(got), len(es), err)
				default:
					t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
				}
			})
		})
	}
}

// h0LastKeys returns the keys of h's last data block.
func h0LastKeys(h *hashSection) []string {
	return slices.Clone(h.blocks[len(h.blocks)-1].Keys)
}

// TestHashIndexForgedEntry points a slot, with a resealed checksum, at
// bytes inside another entry's value that themselves encode a whole entry
// for the slot's key with a different value. Get trusts a slot's offset
// (it cannot tell an entry boundary from bytes inside a value without
// scanning the block), so it may return the forged value: only Verify,
// which requires every slot to name a distinct real entry, can tell. The
// test pins that Verify reports it, and logs what Get returned.
func TestHashIndexForgedEntry(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		t.Run(c.String(), func(t *testing.T) {
			const victim, forged = "key000050", "FORGED"
			carrier := "key000040"
			embedded := append([]byte{0, byte(len(victim)), byte(len(forged))}, victim+forged...)
			es := numbered(100, func(i int) string { return fmt.Sprintf("value %d", i) })
			for i := range es {
				if es[i].Key == carrier {
					es[i].Value = "<" + string(embedded) + ">"
				}
			}
			orig, _ := build(t, es, &builder.Options{BlockSize: 256, Compression: c, HashIndex: true})
			h := parseHashSection(t, slices.Clone(orig))
			ci, coff := h.keyAt(t, carrier)
			// The carrier's entry: 3 one-byte varints, the key, then the
			// value, whose byte 1 starts the embedded entry.
			h.retarget(t, victim, h.location(ci, coff+3+len(carrier)+1))
			h.reseal()
			craftedReaders(t, h.data, func(t *testing.T, r *reader.Reader, _ bool) {
				ce := wantCorrupt(t, r.Verify(), len(h.data))
				if ce.Section != format.SectionHashIndex {
					t.Fatalf("Verify: %v, want an error in the hash index", ce)
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

// TestHashIndexLyingSizes rewrites a version 2 table, with valid
// checksums, so that its properties, footer or hash index header disagree
// about the hash index: its size, the format version, the slot count.
// Open (or else Verify) must report corruption naming what is wrong, no
// read may panic or give a wrong answer, and nothing may allocate the
// claimed sizes.
func TestHashIndexLyingSizes(t *testing.T) {
	const huge = 1 << 30
	es := numbered(200, func(i int) string { return fmt.Sprintf("v%d%s", i, strings.Repeat("-", i%9)) })
	orig, props := build(t, es, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression, HashIndex: true})
	g := newGoldenTable(t, "v2", orig)
	f, err := footer.Decode(orig[len(orig)-footer.Size:], int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	filter := slices.Clone(orig[f.Filter.Offset : f.Filter.Offset+f.Filter.Length])
	index := slices.Clone(orig[f.Index.Offset : f.Index.Offset+f.Index.Length])
	withProps := func(edit func(p *format.Properties)) []byte {
		p := props
		edit(&p)
		return relayout(orig, filter, index, p)
	}
	withFooterVersion := func(data []byte, v uint32) []byte {
		out := slices.Clone(data)
		ft, err := footer.Decode(out[len(out)-footer.Size:], int64(len(out)))
		if err != nil {
			t.Fatal(err)
		}
		ft.Version = v
		return ft.Append(out[:len(out)-footer.Size])
	}
	// withHeader rewrites the hash index header and reseals it.
	withHeader := func(edit func(hdr []byte)) []byte {
		h := parseHashSection(t, slices.Clone(orig))
		edit(h.data[h.off : h.off+codec.HashIndexHeaderLen])
		h.reseal()
		return h.data
	}
	if control := relayout(orig, filter, index, props); !bytes.Equal(control, orig) {
		t.Fatal("relayout of the unchanged parts differs from the table")
	}
	if h := parseHashSection(t, slices.Clone(orig)); !h.decodedOffsets {
		t.Fatal("the snappy table's slots do not hold decoded offsets")
	}

	tests := []lyingTable{
		{"control", orig, ""},
		{"properties: no hash index size", withProps(func(p *format.Properties) { p.HashIndexSize = 0 }), "hash index"},
		{"properties: hash index smaller than its header", withProps(func(p *format.Properties) { p.HashIndexSize = 20 }), "hash index of 20 bytes"},
		{"properties: hash index size 1 GiB", withProps(func(p *format.Properties) { p.HashIndexSize = huge }), "hash index size"},
		{"properties: hash index size max", withProps(func(p *format.Properties) { p.HashIndexSize = ^uint64(0) }), "hash index size"},
		{"properties: data and hash index split moved", withProps(func(p *format.Properties) { p.DataSize += 64; p.HashIndexSize -= 64 }), ""},
		{"properties: version 1", withProps(func(p *format.Properties) { p.FormatVersion = format.Version1 }), "disagrees with the footer"},
		{"footer: version 1", withFooterVersion(orig, format.Version1), "disagrees with the footer"},
		{"properties and footer: version 1 with a hash index", withFooterVersion(withProps(func(p *format.Properties) { p.FormatVersion = format.Version1 }), format.Version1), "version 1 table with a"},
		{"properties: unknown version", withFooterVersion(withProps(func(p *format.Properties) { p.FormatVersion = format.Version + 1 }), format.Version+1), "unsupported format version"},
		{"hash index: 2^40 slots", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], 1<<40) }), "slots"},
		{"hash index: no slots", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], 0) }), "slots"},
		{"hash index: block count", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint32(hdr[4:], uint32(props.NumDataBlocks+1)) }), "data blocks"},
		{"hash index: slot width 9", withHeader(func(hdr []byte) { hdr[0] = 9 }), "slot width"},
		{"hash index: slot width 3", withHeader(func(hdr []byte) { hdr[0] = 3 }), "slot width"},
		{"hash index: 64 offset bits", withHeader(func(hdr []byte) { hdr[2] = 64 }), ""},
		{"hash index: no block bits", withHeader(func(hdr []byte) { hdr[1] = 0 }), "block bits"},
		// The table's blocks are compressed, so its slots hold decoded
		// offsets (flags 2) and the decoded starts follow the block
		// offsets: other flags mislay that table.
		{"hash index: both offset flags", withHeader(func(hdr []byte) { hdr[3] = 3 }), "unknown flags"},
		{"hash index: unknown flag", withHeader(func(hdr []byte) { hdr[3] |= 4 }), "unknown flags"},
		{"hash index: decoded offsets flag cleared", withHeader(func(hdr []byte) { hdr[3] = 0 }), "do not fill"},
		{"hash index: file offsets instead of decoded", withHeader(func(hdr []byte) { hdr[3] = 1 }), "do not fill"},
	}
	checkLyingTables(t, g, tests)
}
