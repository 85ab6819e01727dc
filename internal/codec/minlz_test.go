package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

func TestMinLZBlocks(t *testing.T) {
	src := bytes.Repeat([]byte("minlz block contents, "), 100)
	for _, l := range []format.CompressionLevel{format.LevelDefault, format.LevelFastest, format.LevelBetter, format.LevelBest} {
		enc, ok := codec.AppendMinLZ(nil, src, l)
		if !ok || len(enc) >= len(src)/4 {
			t.Fatalf("%v: AppendMinLZ gave %d bytes of %d (%v)", l, len(enc), len(src), ok)
		}
		if n, err := codec.DecodedLen(enc, format.BlockTypeMinLZ); err != nil || n != len(src) {
			t.Fatalf("%v: DecodedLen %d, %v", l, n, err)
		}
		dst := make([]byte, 0, len(src))
		out, err := codec.DecodeBlock(format.SectionDataBlock, 0, enc, format.BlockTypeMinLZ, len(src), dst)
		if err != nil || !bytes.Equal(out, src) || &out[0] != &dst[:1][0] {
			t.Fatalf("%v: decode: %v", l, err)
		}
		if _, err := codec.DecodeBlock(format.SectionDataBlock, 7, enc, format.BlockTypeMinLZ, len(src)-1, nil); !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("%v: a block over the limit: %v", l, err)
		}
	}
	// A snappy block is not a MinLZ block, although minlz's decoder
	// would decode it.
	sn := snappy.Encode(nil, src)
	if _, err := codec.DecodeBlock(format.SectionDataBlock, 0, sn, format.BlockTypeMinLZ, 1<<20, nil); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("snappy bytes as a MinLZ block: %v", err)
	}
	if _, err := codec.DecodedLen(sn, format.BlockTypeMinLZ); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("DecodedLen of snappy bytes as MinLZ: %v", err)
	}
	// A literal-only block decodes to its literals.
	lit := []byte{0, 0, 'a', 'b', 'c'}
	if out, err := codec.DecodeBlock(format.SectionDataBlock, 0, lit, format.BlockTypeMinLZ, 3, nil); err != nil || string(out) != "abc" {
		t.Fatalf("literal block: %q, %v", out, err)
	}
	// More than 8 MiB is not one MinLZ block.
	if _, ok := codec.AppendMinLZ(nil, make([]byte, 8<<20+1), format.LevelDefault); ok {
		t.Fatal("AppendMinLZ encoded more than 8 MiB")
	}
}

func dictSamples() [][]byte {
	var s [][]byte
	for i := range 300 {
		s = append(s, []byte(fmt.Sprintf("Package: pkg%d\nVersion: 1.%d\nArchitecture: amd64\nDescription: a package of the dictionary test, number %d\n", i, i%17, i)))
	}
	return s
}

func TestZstdDictionary(t *testing.T) {
	samples := dictSamples()
	raw, err := codec.TrainZstdDict(samples, 2048, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := codec.TrainZstdDict(samples, 2048, format.LevelDefault)
	if !bytes.Equal(raw, again) {
		t.Fatal("training the same samples twice gave different dictionaries")
	}
	d, err := codec.NewZstdDict(format.SectionProperties, 0, raw)
	if err != nil || d.ID() != codec.ZstdDictID {
		t.Fatalf("NewZstdDict: %v, ID %d", err, d.ID())
	}
	enc, err := codec.NewZstdDictEncoder(raw, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	src := bytes.Join(samples[:5], nil)
	frame := enc.Append(nil, src)
	plain := codec.AppendZstd(nil, src, format.LevelDefault)
	if len(frame) >= len(plain) {
		t.Errorf("with the dictionary %d bytes, without %d", len(frame), len(plain))
	}
	out, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, len(src), nil, d)
	if err != nil || !bytes.Equal(out, src) {
		t.Fatalf("decode: %v", err)
	}
	if _, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, len(src)-1, nil, d); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("over the limit: %v", err)
	}
	// Without the dictionary, with another one, as a plain frame.
	if _, err := codec.DecodeBlock(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, 1<<20, nil); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("no dictionary: %v", err)
	}
	other := bytes.Clone(raw)
	binary.LittleEndian.PutUint32(other[4:], 99999)
	od, err := codec.NewZstdDict(format.SectionProperties, 0, other)
	if err != nil {
		t.Fatal(err)
	}
	defer od.Close()
	if _, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, 1<<20, nil, od); !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "dictionary") {
		t.Fatalf("another dictionary: %v", err)
	}
	if _, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, plain, format.BlockTypeZstdDict, 1<<20, nil, d); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("a frame naming no dictionary: %v", err)
	}
	// Headers that are not a dictionary's.
	for _, bad := range [][]byte{nil, raw[:7], append([]byte{1}, raw[1:]...), append(bytes.Clone(raw[:4]), 0, 0, 0, 0)} {
		if _, err := codec.NewZstdDict(format.SectionProperties, 3, bad); !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("NewZstdDict(% x): %v", bad[:min(len(bad), 8)], err)
		}
	}
	// A dictionary whose tables do not parse fails on first use.
	broken := append(bytes.Clone(raw[:8]), bytes.Repeat([]byte{0xff}, 64)...)
	bd, err := codec.NewZstdDict(format.SectionProperties, 0, broken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, 1<<20, nil, bd); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("broken dictionary: %v", err)
	}
	bd.Close()
	// Closed: decoding is an error.
	d.Close()
	if _, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, 1<<20, nil, d); err == nil {
		t.Fatal("decoding after Close succeeded")
	}
}

// TestZstdDictionaryLargeSamples: samples and blocks over zstd's 128 KiB
// block size train a dictionary and round-trip through it.
func TestZstdDictionaryLargeSamples(t *testing.T) {
	var samples [][]byte
	for i := range 6 {
		samples = append(samples, bytes.Repeat([]byte(fmt.Sprintf("large sample %d with some text, ", i)), 10000+i*3000))
	}
	raw, err := codec.TrainZstdDict(samples, 64<<10, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	d, err := codec.NewZstdDict(format.SectionProperties, 0, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	enc, err := codec.NewZstdDictEncoder(raw, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for _, s := range samples {
		out, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, enc.Append(nil, s), format.BlockTypeZstdDict, len(s), nil, d)
		if err != nil || !bytes.Equal(out, s) {
			t.Fatalf("round trip of %d bytes: %v", len(s), err)
		}
	}
}
