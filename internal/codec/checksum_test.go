package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"runtime"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/google/go-cmp/cmp"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// mask and unmask are LevelDB's crc32c::Mask/Unmask, written independently.
func mask(c uint32) uint32   { return bits.RotateLeft32(c, 17) + 0xa282ead8 }
func unmask(c uint32) uint32 { return bits.RotateLeft32(c-0xa282ead8, 15) }

func TestMaskCRC(t *testing.T) {
	for _, c := range []uint32{0, 1, 0xe3069283, 0xffffffff, 0x80000000, 0x12345678} {
		m := codec.MaskCRC(c)
		if m != mask(c) {
			t.Errorf("MaskCRC(%#08x) = %#08x, want %#08x", c, m, mask(c))
		}
		if unmask(m) != c {
			t.Errorf("unmask(MaskCRC(%#08x)) = %#08x", c, unmask(m))
		}
		if m == c || codec.MaskCRC(m) == c {
			t.Errorf("MaskCRC(%#08x) = %#08x does not disturb the value", c, m)
		}
	}
}

// TestBlockChecksumVectors checks that the checksum is the masked CRC-32C
// of the stored bytes followed by the type byte, using published CRC-32C
// values (RFC 3720 B.4 and LevelDB's crc32c_test).
func TestBlockChecksumVectors(t *testing.T) {
	ascending := make([]byte, 32)
	descending := make([]byte, 32)
	for i := range ascending {
		ascending[i] = byte(i)
		descending[i] = byte(31 - i)
	}
	cases := []struct {
		data []byte
		crc  uint32
	}{
		{[]byte("123456789"), 0xe3069283},
		{make([]byte, 32), 0x8a9136aa},
		{bytes.Repeat([]byte{0xff}, 32), 0x62a8ab43},
		{ascending, 0x46dd794e},
		{descending, 0x113fdb5c},
	}
	for _, c := range cases {
		n := len(c.data) - 1
		if got, want := codec.BlockChecksum(c.data[:n], c.data[n]), mask(c.crc); got != want {
			t.Errorf("BlockChecksum(%x, %#02x) = %#08x, want masked CRC-32C %#08x", c.data[:n], c.data[n], got, want)
		}
	}
}

func TestAppendTrailer(t *testing.T) {
	stored := []byte("some stored block bytes")
	for _, typ := range []byte{format.BlockTypeRaw, format.BlockTypeSnappy, format.BlockTypeZstd} {
		got := codec.AppendTrailer([]byte("prefix"), stored, typ)
		want := binary.LittleEndian.AppendUint32([]byte{'p', 'r', 'e', 'f', 'i', 'x', typ}, codec.BlockChecksum(stored, typ))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AppendTrailer type %d (-want +got):\n%s", typ, diff)
		}
	}
	if format.BlockTypeRaw != 0 || format.BlockTypeSnappy != 1 || format.BlockTypeZstd != 2 {
		t.Errorf("block types raw=%d snappy=%d zstd=%d, documented 0, 1 and 2", format.BlockTypeRaw, format.BlockTypeSnappy, format.BlockTypeZstd)
	}
}

func checkedBlock(stored []byte, typ byte) []byte {
	return codec.AppendTrailer(bytes.Clone(stored), stored, typ)
}

func TestCheckBlockOK(t *testing.T) {
	for _, stored := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc"), 100)} {
		for _, typ := range []byte{format.BlockTypeRaw, format.BlockTypeSnappy, format.BlockTypeZstd} {
			buf := checkedBlock(stored, typ)
			got, gotTyp, err := codec.CheckBlock(format.SectionDataBlock, 100, buf)
			if err != nil {
				t.Fatalf("CheckBlock of a valid %d-byte block, type %d: %v", len(stored), typ, err)
			}
			if !bytes.Equal(got, stored) || gotTyp != typ {
				t.Fatalf("CheckBlock = %q, %d; want %q, %d", got, gotTyp, stored, typ)
			}
			if len(got) > 0 && &got[0] != &buf[0] {
				t.Fatalf("CheckBlock copied the stored bytes instead of aliasing buf")
			}
		}
	}
}

func TestCheckBlockErrors(t *testing.T) {
	const off = 4096
	stored := []byte("block contents")
	cases := []struct {
		name    string
		buf     []byte
		wantOff int64
		msg     string
	}{
		{"empty", nil, off, "shorter than"},
		{"4 bytes", []byte{0, 1, 2, 3}, off, "shorter than"},
		{"unknown type", checkedBlock(stored, 5), off + int64(len(stored)), "compression type"},
		{"unknown type 0xff", checkedBlock(stored, 0xff), off + int64(len(stored)), "compression type"},
		{"bad crc", append(bytes.Clone(stored), 0, 1, 2, 3, 4), off, "checksum"},
		{"trailer only, bad crc", []byte{0, 0, 0, 0, 0}, off, "checksum"},
	}
	for _, c := range cases {
		_, _, err := codec.CheckBlock(format.SectionIndex, off, c.buf)
		if err == nil {
			t.Errorf("%s: CheckBlock succeeded", c.name)
			continue
		}
		checkCorruptErr(t, err, format.SectionIndex, c.wantOff)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.msg)
		}
	}
}

// TestCheckBlockDetectsBitFlips flips every bit of a small block and its
// trailer; each flip must be reported as a corruption at the block's offset.
func TestCheckBlockDetectsBitFlips(t *testing.T) {
	const off = 777
	for _, typ := range []byte{format.BlockTypeRaw, format.BlockTypeSnappy, format.BlockTypeZstd} {
		buf := checkedBlock([]byte("a small block: 0123456789abcdef"), typ)
		for i := range buf {
			for b := 0; b < 8; b++ {
				bad := bytes.Clone(buf)
				bad[i] ^= 1 << b
				_, _, err := codec.CheckBlock(format.SectionDataBlock, off, bad)
				if err == nil {
					t.Fatalf("type %d: flip of bit %d of byte %d not detected", typ, b, i)
				}
				checkCorruptErr(t, err, format.SectionDataBlock, off)
			}
		}
	}
}

func TestDecodeBlockRaw(t *testing.T) {
	stored := []byte("raw contents")
	got, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeRaw, 1, make([]byte, 0, 100))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, stored) || &got[0] != &stored[0] {
		t.Fatalf("raw DecodeBlock = %q, want stored itself", got)
	}
}

func TestDecodeBlockSnappy(t *testing.T) {
	contents := bytes.Repeat([]byte("snappy block contents "), 50)
	stored := snappy.Encode(nil, contents)

	got, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeSnappy, len(contents), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, contents) {
		t.Fatalf("DecodeBlock did not reproduce the contents")
	}

	// Enough spare capacity in dst is used in place.
	dst := make([]byte, 3, 2*len(contents))
	got, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeSnappy, len(contents), dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, contents) || &got[0] != &dst[0] {
		t.Fatalf("DecodeBlock did not decode into dst")
	}

	// An empty block.
	got, err = codec.DecodeBlock(format.SectionDataBlock, 0, snappy.Encode(nil, nil), format.BlockTypeSnappy, 0, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty snappy block: %q, %v", got, err)
	}

	// One byte more than maxLen is refused.
	_, err = codec.DecodeBlock(format.SectionDataBlock, 55, stored, format.BlockTypeSnappy, len(contents)-1, nil)
	if err == nil {
		t.Fatalf("DecodeBlock accepted a block larger than maxLen")
	}
	checkCorruptErr(t, err, format.SectionDataBlock, 55)
}

// TestDecodeBlockMaxExpansion checks that the expansion bound does not
// refuse legitimate, highly compressible blocks.
func TestDecodeBlockMaxExpansion(t *testing.T) {
	for _, contents := range [][]byte{
		make([]byte, 1<<20),
		bytes.Repeat([]byte{'a'}, 100),
		bytes.Repeat([]byte{'a'}, 70),
		bytes.Repeat([]byte("ab"), 1<<16),
	} {
		stored := snappy.Encode(nil, contents)
		got, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeSnappy, len(contents), nil)
		if err != nil {
			t.Fatalf("%d bytes compressed to %d: %v", len(contents), len(stored), err)
		}
		if !bytes.Equal(got, contents) {
			t.Fatalf("%d bytes compressed to %d: wrong contents", len(contents), len(stored))
		}
	}
}

// TestDecodeBlockLyingLength feeds snappy blocks whose length header
// claims far more than their body can produce. They must be refused as
// corrupt before anything of the claimed size is allocated, even when
// maxLen would allow it.
func TestDecodeBlockLyingLength(t *testing.T) {
	const claimed = 1 << 30
	stored := binary.AppendUvarint(nil, claimed)
	stored = append(stored, 0x00, 'a', 0xfe, 0x01, 0x00) // a literal, then a copy
	decode := func() error {
		_, err := codec.DecodeBlock(format.SectionDataBlock, 321, stored, format.BlockTypeSnappy, 2*claimed, nil)
		return err
	}
	err := decode()
	if err == nil {
		t.Fatalf("DecodeBlock accepted a block claiming %d bytes from %d", claimed, len(stored))
	}
	checkCorruptErr(t, err, format.SectionDataBlock, 321)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		_ = decode()
	}
	runtime.ReadMemStats(&after)
	if perCall := (after.TotalAlloc - before.TotalAlloc) / 10; perCall > 64<<10 {
		t.Fatalf("DecodeBlock allocated %d bytes per call on a lying length header", perCall)
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = decode() }); allocs > 8 {
		t.Fatalf("DecodeBlock made %v allocations per call on a lying length header", allocs)
	}
}

func TestDecodeBlockCorrupt(t *testing.T) {
	good := snappy.Encode(nil, bytes.Repeat([]byte("abcdefgh"), 20))
	cases := []struct {
		name   string
		stored []byte
		typ    byte
	}{
		{"empty snappy", nil, format.BlockTypeSnappy},
		{"overlong length varint", bytes.Repeat([]byte{0xff}, 11), format.BlockTypeSnappy},
		{"length above 4 GiB", binary.AppendUvarint(nil, 1<<33), format.BlockTypeSnappy},
		{"truncated body", good[:len(good)-3], format.BlockTypeSnappy},
		{"body longer than header says", append(bytes.Clone(good), 0x00, 'x'), format.BlockTypeSnappy},
		{"copy before start", []byte{10, 0x01 | 4<<2, 0x05}, format.BlockTypeSnappy},
		{"unknown type", good, 3},
	}
	for _, c := range cases {
		got, err := codec.DecodeBlock(format.SectionDataBlock, 99, c.stored, c.typ, 1<<20, nil)
		if err == nil {
			t.Errorf("%s: DecodeBlock = %q, want an error", c.name, got)
			continue
		}
		if !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: %v does not wrap ErrCorrupt", c.name, err)
		}
		checkCorruptErr(t, err, format.SectionDataBlock, 99)
	}
}
