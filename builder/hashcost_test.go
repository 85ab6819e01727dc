package builder_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestHashIndexCost measures what a hash index costs for random 16-byte
// keys with random 100-byte values, and checks the size against the
// formula of the format documentation: a 16-byte header, padding to 64
// bytes, 1.5 slots per entry (codec.HashIndexSlots) of the smallest width
// from 4 to 8 bytes that holds the block number, the offset and an 8-bit
// tag, 8 bytes per data block boundary (16 with decoded offsets) and the
// 5-byte trailer. It uses 100,000 entries (20,000 with -short); with
// SSTABLE_LONG_TESTS=1, as in CI, 1,000,000, and then it also checks the
// figures for 1M entries in docs/library.md and in Options.HashIndex's doc.
func TestHashIndexCost(t *testing.T) {
	n := 100_000
	long := os.Getenv("SSTABLE_LONG_TESTS") != ""
	switch {
	case long:
		n = 1_000_000
	case testing.Short():
		n = 20_000
	}
	rng := rand.New(rand.NewPCG(13, 16))
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, rng.Uint64()), rng.Uint64())
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal) // collisions are improbable
	value := make([]byte, 100)

	build := func(hashIndex bool, fv uint32) ([]byte, format.Properties) {
		var buf bytes.Buffer
		b := builder.New(&buf, &builder.Options{HashIndex: hashIndex, FormatVersion: fv})
		r := rand.New(rand.NewPCG(7, 100)) // the same values in both tables
		for _, k := range keys {
			for j := 0; j < len(value); j += 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], r.Uint64())
				copy(value[j:], w[:])
			}
			if err := b.Add(k, value); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), b.Properties()
	}
	v1, _ := build(false, format.Version1)
	v2, p := build(true, 0)
	entries := float64(len(keys))
	checkV4HashIndexCost(t, keys, build)

	sec := v2[p.DataSize : p.DataSize+p.HashIndexSize]
	width, blockBits, offsetBits, flags := uint64(sec[0]), int(sec[1]), int(sec[2]), sec[3]
	numBlocks := uint64(binary.LittleEndian.Uint32(sec[4:]))
	numSlots := binary.LittleEndian.Uint64(sec[8:])
	if numSlots != codec.HashIndexSlots(uint64(len(keys))) || numBlocks != p.NumDataBlocks {
		t.Fatalf("%d slots for %d entries, %d blocks for %d data blocks", numSlots, len(keys), numBlocks, p.NumDataBlocks)
	}
	if blockBits != bits.Len64(numBlocks) {
		t.Errorf("%d block bits for %d blocks", blockBits, numBlocks)
	}
	need := uint64(blockBits + offsetBits + 8) // bits of a slot with an 8-bit tag
	if wantWidth := min(8, max(4, (need+7)/8)); width != wantWidth {
		t.Errorf("slot width %d for %d block bits and %d offset bits; want %d", width, blockBits, offsetBits, wantWidth)
	}
	pad := (64 - (p.DataSize+codec.HashIndexHeaderLen)%64) % 64
	perBlock := uint64(8)
	if flags&2 != 0 {
		perBlock = 16
	}
	want := codec.HashIndexHeaderLen + pad + numSlots*width + perBlock*(numBlocks+1) + format.BlockTrailerLen
	if p.HashIndexSize != want {
		t.Errorf("hash index of %d bytes; the formula gives %d", p.HashIndexSize, want)
	}
	perEntry := float64(p.HashIndexSize) / entries
	growth := float64(len(v2)-len(v1)) / entries
	growthPct := 100 * float64(len(v2)-len(v1)) / float64(len(v1))
	t.Logf("%d entries, %d data blocks, %d-byte slots (%d block + %d offset + %d tag bits), flags %d: hash index %d bytes = %.2f bytes/entry; file %d -> %d bytes, +%.2f bytes/entry (+%.1f%%)",
		len(keys), numBlocks, width, blockBits, offsetBits, 8*width-need+8, flags, p.HashIndexSize, perEntry, len(v1), len(v2), growth, growthPct)
	if !long {
		return
	}

	// The figures for 1M entries in docs/library.md and in the doc comment
	// of Options.HashIndex, to the digits they give.
	for _, doc := range []struct{ file, re string }{
		{"../docs/library.md", `\((\d)-byte slots\) that is ([0-9.]+) bytes per entry of hash index and ([0-9.]+) bytes per entry, ([0-9.]+)%, more file`},
		{"options.go", `(\d)-byte slots, ([0-9.]+) bytes per entry of hash index and ([0-9.]+) bytes per entry \(([0-9.]+)%\) more file`},
	} {
		src, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", " ")), " ")
		m := regexp.MustCompile(doc.re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s lacks the hash index cost sentence this test checks", doc.file)
		}
		for i, got := range []float64{float64(width), perEntry, growth, growthPct} {
			val, _ := strconv.ParseFloat(m[1+i], 64)
			digits := 0
			if j := strings.IndexByte(m[1+i], '.'); j >= 0 {
				digits = len(m[1+i]) - j - 1
			}
			if math.Abs(got-val) > 0.5*math.Pow(10, -float64(digits))+1e-9 {
				t.Errorf("%s says %s; measured %.3f", doc.file, m[1+i], got)
			}
		}
	}
}

// checkV4HashIndexCost checks the hash index of a version 4 table of keys
// (one-level, so that no whole filter is added) against its formula: the
// header, padding to 64 bytes, CompactHashIndexSlots slots of the
// narrowest width leaving a 5-bit tag, 4 bytes per block boundary and the
// trailer; and that with 4-byte slots it costs 4.0 to 4.8 bytes per entry.
func checkV4HashIndexCost(t *testing.T, keys [][]byte, build func(bool, uint32) ([]byte, format.Properties)) {
	t.Helper()
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{PartitionThreshold: -1})
	value := make([]byte, 100)
	for _, k := range keys {
		if err := b.Add(k, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	p := b.Properties()
	data := buf.Bytes()
	if p.FormatVersion != format.Version4 || p.Partitioned {
		t.Fatalf("default build with threshold -1: version %d, partitioned %v", p.FormatVersion, p.Partitioned)
	}
	sec := data[p.DataSize : p.DataSize+p.HashIndexSize]
	width, blockBits, offsetBits, flags := uint64(sec[0]), int(sec[1]), int(sec[2]), sec[3]
	numBlocks := uint64(binary.LittleEndian.Uint32(sec[4:]))
	numSlots := binary.LittleEndian.Uint64(sec[8:])
	if numSlots != codec.CompactHashIndexSlots(uint64(len(keys))) || numBlocks != p.NumDataBlocks || flags != 4|16 {
		t.Fatalf("version 4: %d slots for %d entries, %d blocks for %d data blocks, flags %#x", numSlots, len(keys), numBlocks, p.NumDataBlocks, flags)
	}
	if wantWidth := min(8, max(4, (uint64(blockBits+offsetBits+5)+7)/8)); width != wantWidth || blockBits != bits.Len64(numBlocks) {
		t.Errorf("version 4: slot width %d for %d block bits and %d offset bits; want %d", width, blockBits, offsetBits, wantWidth)
	}
	pad := (64 - (p.DataSize+codec.HashIndexHeaderLen)%64) % 64
	want := codec.HashIndexHeaderLen + pad + numSlots*width + 4*(numBlocks+1) + format.BlockTrailerLen
	if p.HashIndexSize != want {
		t.Errorf("version 4: hash index of %d bytes; the formula gives %d", p.HashIndexSize, want)
	}
	perEntry := float64(p.HashIndexSize) / float64(len(keys))
	t.Logf("version 4: %d entries, %d-byte slots (%d block + %d offset + %d tag bits): hash index %d bytes = %.2f bytes/entry",
		len(keys), width, blockBits, offsetBits, 8*int(width)-blockBits-offsetBits, p.HashIndexSize, perEntry)
	if width == 4 && (perEntry < 4.0 || perEntry > 4.8) {
		t.Errorf("version 4: %.2f bytes per entry with 4-byte slots, want 4.0 to 4.8 (4/0.9 and the block offsets)", perEntry)
	}
}
