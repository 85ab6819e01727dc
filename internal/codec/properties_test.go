package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// record is one properties record as found in an encoding.
type record struct {
	tag        uint64
	start, end int // byte range of the whole record
	val        []byte
}

// parseRecords splits a well-formed properties encoding into records,
// independently of DecodeProperties.
func parseRecords(t rapid.TB, src []byte) []record {
	t.Helper()
	var recs []record
	for pos := 0; pos < len(src); {
		start := pos
		tag, n := binary.Uvarint(src[pos:])
		if n <= 0 {
			t.Fatalf("bad tag at %d", pos)
		}
		pos += n
		length, n := binary.Uvarint(src[pos:])
		if n <= 0 || length > uint64(len(src)-pos-n) {
			t.Fatalf("bad length at %d", pos)
		}
		pos += n
		recs = append(recs, record{tag, start, pos + int(length), src[pos : pos+int(length)]})
		pos += int(length)
	}
	return recs
}

func rec(tag uint64, val []byte) []byte {
	b := binary.AppendUvarint(nil, tag)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

func num(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func drawProperties(t *rapid.T) format.Properties {
	u64 := rapid.OneOf(rapid.Uint64Range(0, 200), rapid.Uint64(), rapid.Just(uint64(math.MaxUint64)))
	// Mostly short keys; sometimes one at or past the longest the
	// properties hold, which AppendProperties leaves out.
	key := rapid.OneOf(rapid.SliceOfN(rapid.Byte(), 0, 40), rapid.SliceOfN(rapid.Byte(), format.MaxPropertiesKeyLen, format.MaxPropertiesKeyLen+3))
	p := format.Properties{
		FormatVersion:   rapid.OneOf(rapid.SampledFrom([]uint32{format.Version1, format.Version2}), rapid.Uint32()).Draw(t, "version"),
		NumEntries:      rapid.OneOf(rapid.Just(uint64(0)), u64).Draw(t, "entries"),
		NumDataBlocks:   u64.Draw(t, "blocks"),
		RawKeyBytes:     u64.Draw(t, "rawKeyBytes"),
		RawValueBytes:   u64.Draw(t, "rawValueBytes"),
		DataSize:        u64.Draw(t, "dataSize"),
		IndexSize:       u64.Draw(t, "indexSize"),
		FilterSize:      u64.Draw(t, "filterSize"),
		Compression:     rapid.SampledFrom([]format.Compression{format.DefaultCompression, format.NoCompression, format.SnappyCompression, format.ZstdCompression}).Draw(t, "compression"),
		BlockSize:       u64.Draw(t, "blockSize"),
		RestartInterval: u64.Draw(t, "restartInterval"),
		MaxBlockSize:    u64.Draw(t, "maxBlockSize"),
		HashIndexSize:   rapid.OneOf(rapid.Just(uint64(0)), u64).Draw(t, "hashIndexSize"),
	}
	if p.NumEntries > 0 {
		// Non-nil even when empty: the empty key is a valid smallest key.
		p.SmallestKey = append([]byte{}, key.Draw(t, "smallest")...)
		p.LargestKey = append([]byte{}, key.Draw(t, "largest")...)
	}
	if rapid.Bool().Draw(t, "hasFilter") {
		p.FilterPolicy = rapid.StringN(1, 40, 120).Draw(t, "policy")
	}
	if p.FilterPolicy != "" || rapid.Bool().Draw(t, "bitsWithoutPolicy") {
		// Stored in 1/1000 bits, up to 2^32-1 thousandths.
		p.FilterBitsPerKey = float64(rapid.OneOf(rapid.Uint64Range(0, 30000), rapid.Uint64Range(0, math.MaxUint32)).Draw(t, "milliBits")) / 1000
	}
	return p
}

func TestPropertiesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawProperties(t)
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 5).Draw(t, "prefix")
		off := int64(rapid.IntRange(0, 1<<40).Draw(t, "offset"))

		enc := codec.AppendProperties(bytes.Clone(prefix), &p)
		if !bytes.Equal(enc[:len(prefix)], prefix) {
			t.Fatalf("AppendProperties changed dst's prefix")
		}
		enc = enc[len(prefix):]
		got, err := codec.DecodeProperties(enc, off)
		if err != nil {
			t.Fatalf("DecodeProperties: %v", err)
		}
		// A key longer than MaxPropertiesKeyLen comes back nil, with its
		// length; encoding that again gives the same bytes.
		want := decodedForm(p)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		if again := codec.AppendProperties(nil, &got); !bytes.Equal(again, enc) {
			t.Fatalf("encoding the decoded properties gives other bytes")
		}
		// Records are in strictly increasing tag order.
		recs := parseRecords(t, enc)
		for i := 1; i < len(recs); i++ {
			if recs[i].tag <= recs[i-1].tag {
				t.Fatalf("record %d has tag %d after tag %d", i, recs[i].tag, recs[i-1].tag)
			}
		}
		// Decoded keys are copies, not aliases of src.
		if p.NumEntries > 0 {
			for i := range enc {
				enc[i] ^= 0xff
			}
			if !bytes.Equal(got.SmallestKey, want.SmallestKey) || !bytes.Equal(got.LargestKey, want.LargestKey) {
				t.Fatalf("decoded keys alias the encoding")
			}
		}
	})
}

// TestPropertiesTags pins the tag numbers and value encodings listed in the
// package documentation.
func TestPropertiesTags(t *testing.T) {
	p := format.Properties{
		FormatVersion: 1, NumEntries: 2, NumDataBlocks: 3,
		SmallestKey: []byte("aaa"), LargestKey: []byte("zzz"),
		RawKeyBytes: 6, RawValueBytes: 7, DataSize: 8, IndexSize: 9, FilterSize: 300,
		Compression: format.SnappyCompression, FilterPolicy: "policy", FilterBitsPerKey: 9.5,
		BlockSize: 4096, RestartInterval: 16, MaxBlockSize: 1 << 40, HashIndexSize: 1 << 20,
	}
	want := map[uint64][]byte{
		1: num(1), 2: num(2), 3: num(3), 4: []byte("aaa"), 5: []byte("zzz"),
		6: num(6), 7: num(7), 8: num(8), 9: num(9), 10: num(300),
		11: num(2), 12: []byte("policy"), 13: num(9500),
		14: num(4096), 15: num(16), 16: num(1 << 40), 17: num(1 << 20),
	}
	got := map[uint64][]byte{}
	for _, r := range parseRecords(t, codec.AppendProperties(nil, &p)) {
		got[r.tag] = r.val
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("records by tag (-want +got):\n%s", diff)
	}

	// Without entries, filter or hash index, tags 4, 5, 12, 13 and 17 are
	// absent.
	p = format.Properties{FormatVersion: format.Version1, Compression: format.NoCompression}
	var tags []uint64
	for _, r := range parseRecords(t, codec.AppendProperties(nil, &p)) {
		tags = append(tags, r.tag)
	}
	if diff := cmp.Diff([]uint64{1, 2, 3, 6, 7, 8, 9, 10, 11, 14, 15, 16}, tags); diff != "" {
		t.Fatalf("tags without keys or filter (-want +got):\n%s", diff)
	}

	// A version 2 property set: the hash index size is tag 17, the last.
	p = format.Properties{FormatVersion: format.Version2, Compression: format.NoCompression, HashIndexSize: 300}
	recs := parseRecords(t, codec.AppendProperties(nil, &p))
	if r := recs[len(recs)-1]; r.tag != 17 || !bytes.Equal(r.val, num(300)) {
		t.Fatalf("last record is tag %d value %x, want tag 17 value %x", r.tag, r.val, num(300))
	}
	if recs[0].tag != 1 || !bytes.Equal(recs[0].val, num(2)) {
		t.Fatalf("first record is tag %d value %x, want the format version 2", recs[0].tag, recs[0].val)
	}
}

func TestPropertiesBitsPerKeyRounding(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{10, 10}, {9.9996, 10}, {7.0004, 7}, {0.0015, 0.002}, {12.345, 12.345},
	} {
		p := format.Properties{FormatVersion: 1, Compression: format.NoCompression, FilterPolicy: "x", FilterBitsPerKey: c.in}
		got, err := codec.DecodeProperties(codec.AppendProperties(nil, &p), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.FilterBitsPerKey != c.want {
			t.Errorf("bits per key %v decoded as %v, want %v", c.in, got.FilterBitsPerKey, c.want)
		}
	}
}

func TestPropertiesUnknownTagsSkipped(t *testing.T) {
	p := format.Properties{
		FormatVersion: 1, NumEntries: 1, SmallestKey: []byte("k"), LargestKey: []byte("k"),
		Compression: format.NoCompression, MaxBlockSize: 100,
	}
	enc := codec.AppendProperties(nil, &p)
	enc = append(enc, rec(100, []byte("not an integer \xff\xff\xff"))...)
	enc = append(enc, rec(101, nil)...)
	enc = append(enc, rec(1<<40, bytes.Repeat([]byte{0x80}, 300))...)
	got, err := codec.DecodeProperties(enc, 0)
	if err != nil {
		t.Fatalf("DecodeProperties with unknown tags: %v", err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// checkPropsErr checks that err is a properties corruption at offset off.
func checkPropsErr(t rapid.TB, err error, off int64, what string) {
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
	if ce.Section != "properties" || ce.Offset != off {
		t.Fatalf("%s: error %q names %q at %d, want \"properties\" at %d", what, err, ce.Section, ce.Offset, off)
	}
}

func TestPropertiesBadRecords(t *testing.T) {
	const off = 5000
	join := func(recs ...[]byte) []byte { return bytes.Join(recs, nil) }
	v1 := rec(1, num(1))    // 3 bytes
	ent0 := rec(2, num(0))  // 3 bytes
	comp := rec(11, num(1)) // none
	cases := []struct {
		name   string
		src    []byte
		errOff int64
		msg    string
	}{
		{"decreasing tags", join(v1, rec(3, num(1)), rec(2, num(0))), off + 6, "tags must increase"},
		{"repeated tag", join(v1, v1), off + 3, "tags must increase"},
		{"tag zero", rec(0, nil), off, "tags must increase"},
		{"unknown tag then known", join(v1, rec(100, nil), comp), off + 5, "tags must increase"},
		{"integer with trailing byte", join(v1, rec(2, []byte{1, 0})), off + 3, "bad integer"},
		{"empty integer", join(v1, rec(2, nil)), off + 3, "bad integer"},
		{"unterminated integer", join(v1, rec(2, []byte{0x80})), off + 3, "bad integer"},
		{"overlong integer", join(v1, rec(2, bytes.Repeat([]byte{0xff}, 11))), off + 3, "bad integer"},
		{"format version above 32 bits", rec(1, num(1<<32)), off, "format version"},
		{"compression 0 (default)", join(v1, ent0, rec(11, num(0))), off + 6, "compression"},
		{"compression 5", join(v1, ent0, rec(11, num(5))), off + 6, "compression"},
		{"length past the end", join(v1, []byte{2, 5, 1}), off + 3, "claims"},
		{"unterminated tag", join(v1, []byte{0x80}), off + 3, "tag varint"},
		{"missing length", join(v1, []byte{2}), off + 3, "length varint"},
		{"keys without entries", join(v1, ent0, rec(4, []byte("a")), rec(5, []byte("b"))), off, "entries"},
		{"entries without keys", join(v1, rec(2, num(5))), off, "entries"},
		{"smallest key without entries", join(v1, ent0, rec(4, []byte("a"))), off, "entries"},
		{"bits per key above 32 bits", join(v1, rec(13, num(1<<32))), off + 3, "bits per key"},
		{"entries with only the smallest key", join(v1, rec(2, num(5)), rec(4, []byte("a"))), off, "entries"},
		{"hash index size with trailing byte", join(v1, rec(17, []byte{1, 0})), off + 3, "bad integer"},
		{"empty hash index size", join(v1, rec(17, nil)), off + 3, "bad integer"},
		{"hash index size not an integer", join(v1, rec(17, []byte("\xff\xff"))), off + 3, "bad integer"},
		{"unknown tag then hash index size", join(v1, rec(100, nil), rec(17, num(5))), off + 5, "tags must increase"},
		{"partitioned record of 0", join(v1, rec(22, num(0))), off + 3, "partitioned record"},
		{"partitioned record of 2", join(v1, rec(22, num(2))), off + 3, "partitioned record"},
		{"partitioned record not an integer", join(v1, rec(22, []byte("\xff"))), off + 3, "bad integer"},
		{"left-out smallest key of 1024 bytes", join(v1, rec(2, num(1)), rec(5, []byte("z")), rec(18, num(1024))), off + 9, "left-out key"},
		{"left-out largest key of 0 bytes", join(v1, rec(2, num(1)), rec(4, []byte("a")), rec(19, num(0))), off + 9, "left-out key"},
		{"left-out key length not an integer", join(v1, rec(2, num(1)), rec(4, []byte("a")), rec(19, nil)), off + 9, "bad integer"},
		{"smallest key stored and left out", join(v1, rec(2, num(1)), rec(4, []byte("a")), rec(5, []byte("z")), rec(18, num(2000))), off, "both stored and left out"},
		{"left-out keys without entries", join(v1, ent0, rec(18, num(2000)), rec(19, num(2000))), off, "entries"},
		{"entries with only a left-out smallest key", join(v1, rec(2, num(1)), rec(18, num(2000))), off, "entries"},
	}
	for _, c := range cases {
		_, err := codec.DecodeProperties(c.src, off)
		checkPropsErr(t, err, c.errOff, c.name)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.msg)
		}
	}
}

// propsBefore returns p with every field whose record has tag >= tag zeroed:
// what a decoder sees when the encoding ends before that record.
// decodedForm returns p as DecodeProperties returns its encoding: a key
// longer than MaxPropertiesKeyLen left out, its length kept.
func decodedForm(p format.Properties) format.Properties {
	if len(p.SmallestKey) > format.MaxPropertiesKeyLen {
		p.SmallestKey, p.SmallestKeyOmitted = nil, uint64(len(p.SmallestKey))
	}
	if len(p.LargestKey) > format.MaxPropertiesKeyLen {
		p.LargestKey, p.LargestKeyOmitted = nil, uint64(len(p.LargestKey))
	}
	return p
}

func propsBefore(p format.Properties, tag uint64) format.Properties {
	fields := []func(*format.Properties){
		1:  func(p *format.Properties) { p.FormatVersion = 0 },
		2:  func(p *format.Properties) { p.NumEntries = 0 },
		3:  func(p *format.Properties) { p.NumDataBlocks = 0 },
		4:  func(p *format.Properties) { p.SmallestKey = nil },
		5:  func(p *format.Properties) { p.LargestKey = nil },
		6:  func(p *format.Properties) { p.RawKeyBytes = 0 },
		7:  func(p *format.Properties) { p.RawValueBytes = 0 },
		8:  func(p *format.Properties) { p.DataSize = 0 },
		9:  func(p *format.Properties) { p.IndexSize = 0 },
		10: func(p *format.Properties) { p.FilterSize = 0 },
		11: func(p *format.Properties) { p.Compression = 0 },
		12: func(p *format.Properties) { p.FilterPolicy = "" },
		13: func(p *format.Properties) { p.FilterBitsPerKey = 0 },
		14: func(p *format.Properties) { p.BlockSize = 0 },
		15: func(p *format.Properties) { p.RestartInterval = 0 },
		16: func(p *format.Properties) { p.MaxBlockSize = 0 },
		17: func(p *format.Properties) { p.HashIndexSize = 0 },
		18: func(p *format.Properties) { p.SmallestKeyOmitted = 0 },
		19: func(p *format.Properties) { p.LargestKeyOmitted = 0 },
	}
	for t := tag; t < uint64(len(fields)); t++ {
		fields[t](&p)
	}
	return p
}

// TestPropertiesTruncated cuts an encoding at every byte. A cut inside a
// record must be reported at that record's offset. A cut between records
// leaves a shorter, well-formed record list (the block checksum, not the
// record syntax, guards against that); it must then decode to exactly the
// fields before the cut, or fail the key-presence rule at the block start.
func TestPropertiesTruncated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := decodedForm(drawProperties(t))
		const off = 1 << 20
		enc := codec.AppendProperties(nil, &p)
		recs := parseRecords(t, enc)
		for _, r := range recs {
			for cut := r.start; cut < r.end; cut++ {
				got, err := codec.DecodeProperties(enc[:cut:cut], off)
				if cut > r.start {
					checkPropsErr(t, err, off+int64(r.start), "cut inside record")
					continue
				}
				want := propsBefore(p, r.tag)
				if want.NumEntries > 0 && (want.SmallestKey == nil && want.SmallestKeyOmitted == 0 || want.LargestKey == nil && want.LargestKeyOmitted == 0) {
					checkPropsErr(t, err, off, "cut before the key records")
					continue
				}
				if err != nil {
					t.Fatalf("cut at record boundary %d: %v", cut, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("cut at record boundary %d before tag %d (-want +got):\n%s", cut, r.tag, diff)
				}
			}
		}
	})
}

func TestPropertiesEmpty(t *testing.T) {
	got, err := codec.DecodeProperties(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(format.Properties{}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestPropertiesString(t *testing.T) {
	p := format.Properties{FormatVersion: 2, NumEntries: 3, SmallestKey: []byte("a"), LargestKey: []byte("c"),
		Compression: format.SnappyCompression, FilterPolicy: "bloom", FilterBitsPerKey: 10, MaxBlockSize: 4242, HashIndexSize: 777}
	s := p.String()
	for _, want := range []string{"format version:     2\n", "entries:            3\n", `smallest key:       "a"`, "compression:        snappy\n", "filter policy:      bloom\n", "max block size:     4242\n", "hash index size:    777\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func TestCompressionString(t *testing.T) {
	for c, want := range map[format.Compression]string{
		format.DefaultCompression: "default",
		format.NoCompression:      "none",
		format.SnappyCompression:  "snappy",
		format.ZstdCompression:    "zstd",
		7:                         "Compression(7)",
		-1:                        "Compression(-1)",
	} {
		if got := c.String(); got != want {
			t.Errorf("Compression(%d).String() = %q, want %q", int(c), got, want)
		}
	}
	// The documented property values: 1 none, 2 snappy, 3 zstd.
	if format.NoCompression != 1 || format.SnappyCompression != 2 || format.ZstdCompression != 3 {
		t.Errorf("NoCompression = %d, SnappyCompression = %d, ZstdCompression = %d; documented 1, 2 and 3", format.NoCompression, format.SnappyCompression, format.ZstdCompression)
	}
}

// TestPropertiesLongKeysLeftOut pins tags 18 and 19: a smallest or largest
// key longer than MaxPropertiesKeyLen is not stored, only its length, so
// that a table stores a key of any size once (in its data block); a key of
// MaxPropertiesKeyLen bytes is stored as before.
func TestPropertiesLongKeysLeftOut(t *testing.T) {
	long := bytes.Repeat([]byte{'k'}, 10<<20)
	edge := long[:format.MaxPropertiesKeyLen]
	p := format.Properties{FormatVersion: 1, NumEntries: 2, SmallestKey: edge, LargestKey: long, Compression: format.NoCompression}
	enc := codec.AppendProperties(nil, &p)
	if len(enc) > format.MaxPropertiesKeyLen+100 {
		t.Fatalf("properties of a 10 MiB largest key take %d bytes", len(enc))
	}
	got := map[uint64][]byte{}
	for _, r := range parseRecords(t, enc) {
		got[r.tag] = r.val
	}
	if !bytes.Equal(got[4], edge) || got[5] != nil || got[18] != nil || !bytes.Equal(got[19], num(10<<20)) {
		t.Fatalf("tags 4, 5, 18, 19: %d bytes, %v, %x, %x; want the 1024-byte key, none, none, uvarint 10 MiB", len(got[4]), got[5] != nil, got[18], got[19])
	}
	dec, err := codec.DecodeProperties(enc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec.SmallestKey, edge) || dec.SmallestKeyOmitted != 0 || dec.LargestKey != nil || dec.LargestKeyOmitted != 10<<20 {
		t.Fatalf("decoded: smallest %d bytes (omitted %d), largest %v (omitted %d)", len(dec.SmallestKey), dec.SmallestKeyOmitted, dec.LargestKey != nil, dec.LargestKeyOmitted)
	}
}
