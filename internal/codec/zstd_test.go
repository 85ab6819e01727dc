package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// blockLike returns n bytes shaped like a data block of text keys and
// values: compressible, but not trivially.
func blockLike(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "key%08d=value-%d-%s;", r.IntN(1e8), i, strings.Repeat("x", r.IntN(20)))
	}
	return b[:n]
}

func TestZstdRoundTrip(t *testing.T) {
	for _, l := range []format.CompressionLevel{format.LevelFastest, format.LevelDefault, format.LevelBetter, format.LevelBest} {
		for _, contents := range [][]byte{
			{},
			[]byte("x"),
			blockLike(4096, 1),
			blockLike(100_000, 2),
			make([]byte, 1<<20),
		} {
			stored := codec.AppendZstd([]byte("prefix"), contents, l)
			if !bytes.HasPrefix(stored, []byte("prefix")) {
				t.Fatalf("AppendZstd did not append")
			}
			stored = stored[len("prefix"):]
			n, err := codec.DecodedLen(stored, format.BlockTypeZstd)
			if len(contents) == 0 {
				// klauspost encodes empty input as no frame at all; a
				// builder never stores an empty block (it has at least
				// its restart count).
				if err == nil && n != 0 {
					t.Fatalf("empty input: DecodedLen = %d", n)
				}
				continue
			}
			if err != nil || n != len(contents) {
				t.Fatalf("level %v, %d bytes: DecodedLen = %d, %v", l, len(contents), n, err)
			}
			got, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstd, len(contents), nil)
			if err != nil {
				t.Fatalf("level %v, %d bytes: %v", l, len(contents), err)
			}
			if !bytes.Equal(got, contents) {
				t.Fatalf("level %v, %d bytes: wrong contents", l, len(contents))
			}
			// One byte less than the claim is refused before decoding.
			_, err = codec.DecodeBlock(format.SectionDataBlock, 7, stored, format.BlockTypeZstd, len(contents)-1, nil)
			checkCorruptErr(t, err, format.SectionDataBlock, 7)
		}
	}
}

// TestZstdSmaller checks the point of zstd: on block-like text it stores
// fewer bytes than snappy, and the levels order as named.
func TestZstdSmaller(t *testing.T) {
	contents := blockLike(64<<10, 3)
	sn := len(snappy.Encode(nil, contents))
	size := map[format.CompressionLevel]int{}
	for _, l := range []format.CompressionLevel{format.LevelFastest, format.LevelDefault, format.LevelBetter, format.LevelBest} {
		size[l] = len(codec.AppendZstd(nil, contents, l))
		if size[l] >= sn {
			t.Errorf("level %v: zstd %d bytes, snappy %d", l, size[l], sn)
		}
	}
	if size[format.LevelBest] >= size[format.LevelFastest] {
		t.Errorf("best level %d bytes, fastest %d", size[format.LevelBest], size[format.LevelFastest])
	}
}

func TestDecodeZstdInPlaceNoAlloc(t *testing.T) {
	contents := blockLike(4096, 4)
	stored := codec.AppendZstd(nil, contents, format.LevelDefault)
	dst := make([]byte, 0, len(contents))
	var got []byte
	var err error
	decode := func() {
		got, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstd, 1<<20, dst)
	}
	decode() // warm the decoder pool
	if err != nil || !bytes.Equal(got, contents) {
		t.Fatalf("DecodeBlock: %v", err)
	}
	if &got[0] != &dst[:1][0] {
		t.Fatalf("DecodeBlock did not decode into dst's capacity")
	}
	if a := testing.AllocsPerRun(100, decode); a != 0 && !raceEnabled {
		t.Fatalf("DecodeBlock into a large enough dst made %v allocations per call", a)
	}
	// Too small a dst: a new buffer of exactly the decoded size.
	got, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstd, 1<<20, make([]byte, 0, 10))
	if err != nil || !bytes.Equal(got, contents) || cap(got) != len(contents) {
		t.Fatalf("DecodeBlock into a small dst: cap %d, %v", cap(got), err)
	}
	enc := func() { dst = codec.AppendZstd(dst[:0], contents, format.LevelDefault) }
	dst = make([]byte, 0, 2*len(contents))
	enc()
	if a := testing.AllocsPerRun(100, enc); a != 0 {
		t.Fatalf("AppendZstd into a large enough dst made %v allocations per call", a)
	}
}

// zstdFrame builds a single-segment zstd frame header claiming fcs decoded
// bytes (8-byte content size field), followed by body.
func zstdFrame(fcs uint64, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	b = append(b, 3<<6|1<<5) // FCS field 8 bytes, single segment
	b = binary.LittleEndian.AppendUint64(b, fcs)
	return append(b, body...)
}

// rleBlock is a last zstd block of RLE type repeating byte c n times.
func rleBlock(n int, c byte) []byte {
	h := uint32(n)<<3 | 1<<1 | 1 // size, RLE, last
	return []byte{byte(h), byte(h >> 8), byte(h >> 16), c}
}

// TestZstdBomb feeds frames whose header claims far more than the table
// allows, or lies about what the body produces. Each must be refused as
// corrupt, without allocating the claimed size.
func TestZstdBomb(t *testing.T) {
	huge := zstdFrame(1<<40, rleBlock(100, 'a'))
	big := zstdFrame(1<<30, rleBlock(100, 'a'))
	lies := zstdFrame(10, rleBlock(100_000, 'a')) // claims 10, produces 100000
	short := zstdFrame(1000, rleBlock(10, 'a'))   // claims 1000, produces 10
	// Two frames: the first claims 10 bytes, the second expands an RLE
	// block with no content size.
	noFCS := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50}, rleBlock(100_000, 'b')...) // window descriptor, no FCS
	twoFrames := append(zstdFrame(10, rleBlock(10, 'a')), noFCS...)
	cases := []struct {
		name   string
		stored []byte
		maxLen int
		msg    string
	}{
		{"content size 2^40", huge, 1 << 31, "claims"},
		{"content size over maxLen", big, 4096, "limit 4096"},
		{"body produces more than claimed", lies, 1 << 20, "zstd"},
		{"body produces less than claimed", short, 1 << 20, "zstd"},
		{"no content size", noFCS, 1 << 20, "no content size"},
		{"second frame", twoFrames, 1 << 20, "zstd"},
		{"empty", nil, 1 << 20, "zstd"},
		{"bad magic", []byte{1, 2, 3, 4, 5, 6, 7, 8}, 1 << 20, "zstd"},
		{"skippable frame", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0x184D2A50), 0), 1 << 20, "zstd"},
		{"header only", zstdFrame(100, nil), 1 << 20, "zstd"},
	}
	for _, c := range cases {
		var err error
		decode := func() {
			_, err = codec.DecodeBlock(format.SectionDataBlock, 1234, c.stored, format.BlockTypeZstd, c.maxLen, nil)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		decode()
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: DecodeBlock accepted it", c.name)
			continue
		}
		checkCorruptErr(t, err, format.SectionDataBlock, 1234)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.msg)
		}
		// The decoder's state is made once; beyond it, at most the
		// bounded buffer (maxLen) and one 128 KiB zstd block.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(min(c.maxLen, 1<<20))+(1<<20) {
			t.Errorf("%s: DecodeBlock allocated %d bytes", c.name, grew)
		}
		if _, lenErr := codec.DecodedLen(c.stored, format.BlockTypeZstd); lenErr != nil && !errors.Is(lenErr, format.ErrCorrupt) {
			t.Errorf("%s: DecodedLen error %v does not wrap ErrCorrupt", c.name, lenErr)
		}
	}
}

func TestDecodedLen(t *testing.T) {
	contents := blockLike(5000, 5)
	for _, c := range []struct {
		typ    byte
		stored []byte
	}{
		{format.BlockTypeRaw, contents},
		{format.BlockTypeSnappy, snappy.Encode(nil, contents)},
		{format.BlockTypeZstd, codec.AppendZstd(nil, contents, format.LevelFastest)},
	} {
		n, err := codec.DecodedLen(c.stored, c.typ)
		if err != nil || n != len(contents) {
			t.Errorf("type %d: DecodedLen = %d, %v; want %d", c.typ, n, err, len(contents))
		}
	}
	for _, c := range []struct {
		typ    byte
		stored []byte
	}{
		{format.BlockTypeSnappy, nil},
		{format.BlockTypeZstd, nil},
		{format.BlockTypeZstd, zstdFrame(1<<40, nil)},
		{3, contents},
	} {
		if n, err := codec.DecodedLen(c.stored, c.typ); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("type %d, %d bytes: DecodedLen = %d, %v; want ErrCorrupt", c.typ, len(c.stored), n, err)
		}
	}
}

// TestZstdFrameBuilder checks the hand-made frames of TestZstdBomb against
// the library: a truthful one must decode.
func TestZstdFrameBuilder(t *testing.T) {
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.DecodeAll(zstdFrame(100, rleBlock(100, 'q')), nil)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'q'}, 100)) {
		t.Fatalf("hand-made frame: %q, %v", got, err)
	}
	got, err = codec.DecodeBlock(format.SectionDataBlock, 0, zstdFrame(100, rleBlock(100, 'q')), format.BlockTypeZstd, 100, nil)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{'q'}, 100)) {
		t.Fatalf("hand-made frame through DecodeBlock: %q, %v", got, err)
	}
}

func TestParseCompressionLevel(t *testing.T) {
	for _, l := range []format.CompressionLevel{format.LevelFastest, format.LevelDefault, format.LevelBetter, format.LevelBest} {
		got, err := format.ParseCompressionLevel(l.String())
		if err != nil || got != l {
			t.Errorf("ParseCompressionLevel(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := format.ParseCompressionLevel("max"); err == nil {
		t.Errorf("ParseCompressionLevel accepted %q", "max")
	}
	if s := format.CompressionLevel(9).String(); s != "CompressionLevel(9)" {
		t.Errorf("String of an unknown level = %q", s)
	}
}
