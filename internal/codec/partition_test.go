package codec_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// partitionLimit is the bound DecodePartitionHandle puts on the offset and
// both lengths (exclusive): three of them and two trailers stay below
// 2^64, so End and Index cannot wrap.
const partitionLimit = 1 << 62

// TestPartitionHandleRoundTrip checks, on random handles, that
// AppendPartitionHandle writes four uvarints (offset, filter length,
// index length, first block) after dst, that DecodePartitionHandle
// returns the handle from exactly those bytes, and that it refuses every
// truncation and any trailing byte.
func TestPartitionHandleRoundTrip(t *testing.T) {
	field := rapid.OneOf(rapid.Uint64Range(0, 300), rapid.Uint64Range(0, partitionLimit-1), rapid.Just(uint64(partitionLimit-1)))
	rapid.Check(t, func(t *rapid.T) {
		p := codec.PartitionHandle{
			Offset:     field.Draw(t, "offset"),
			FilterLen:  field.Draw(t, "filterLen"),
			IndexLen:   field.Draw(t, "indexLen"),
			FirstBlock: rapid.OneOf(rapid.Uint64Range(0, 300), rapid.Uint64()).Draw(t, "firstBlock"),
		}
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "prefix")
		enc := codec.AppendPartitionHandle(bytes.Clone(prefix), p)
		if !bytes.Equal(enc[:len(prefix)], prefix) {
			t.Fatal("AppendPartitionHandle changed dst's prefix")
		}
		body := enc[len(prefix):]
		var want []byte
		for _, v := range []uint64{p.Offset, p.FilterLen, p.IndexLen, p.FirstBlock} {
			want = binary.AppendUvarint(want, v)
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("AppendPartitionHandle(%+v) = %x, want four uvarints %x", p, body, want)
		}
		got, ok := codec.DecodePartitionHandle(body)
		if !ok || got != p {
			t.Fatalf("DecodePartitionHandle(%x) = %+v, %v; want %+v", body, got, ok, p)
		}
		// The derived handles tile the partition, with no wrap-around.
		f, ix := got.Filter(), got.Index()
		if f.Offset != p.Offset || f.Length != p.FilterLen || ix.Offset != f.End() || ix.Length != p.IndexLen ||
			ix.End() != got.End() || got.End()-got.Offset != got.Len() || got.End() < got.Offset {
			t.Fatalf("%+v: filter %+v, index %+v, end %d, len %d", got, f, ix, got.End(), got.Len())
		}
		for i := range body {
			if got, ok := codec.DecodePartitionHandle(body[:i]); ok || got != (codec.PartitionHandle{}) {
				t.Fatalf("DecodePartitionHandle of a %d-byte truncation = %+v, %v", i, got, ok)
			}
		}
		extra := rapid.Byte().Draw(t, "extra")
		if got, ok := codec.DecodePartitionHandle(append(bytes.Clone(body), extra)); ok || got != (codec.PartitionHandle{}) {
			t.Fatalf("DecodePartitionHandle with a trailing byte = %+v, %v", got, ok)
		}
	})
}

// TestDecodePartitionHandleMalformed checks inputs a damaged top-level
// index can hold: each must be refused with the zero handle, or, at the
// limits, accepted with an end that does not wrap.
func TestDecodePartitionHandleMalformed(t *testing.T) {
	enc := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	tooLong := bytes.Repeat([]byte{0x80}, 10) // no final byte within 10
	tooLong = append(tooLong, 0)
	overflow := append(bytes.Repeat([]byte{0xff}, 9), 0x02) // 2^64 and more
	for _, c := range []struct {
		name string
		src  []byte
	}{
		{"empty", nil},
		{"three fields", enc(1, 2, 3)},
		{"five fields", enc(1, 2, 3, 4, 5)},
		{"last field cut", enc(1, 2, 3, 300)[:4]},
		{"unterminated varint", []byte{0x80, 0x80}},
		{"varint of 11 bytes", append(enc(1, 2, 3), tooLong...)},
		{"varint past 2^64", append(overflow, enc(1, 2, 3)...)},
		{"offset 2^62", enc(partitionLimit, 1, 1, 0)},
		{"filter length 2^62", enc(0, partitionLimit, 1, 0)},
		{"index length 2^62", enc(0, 1, partitionLimit, 0)},
		{"offset max", enc(math.MaxUint64, 0, 0, 0)},
		// Offset plus lengths past 2^64 if the fields were not bounded.
		{"lengths max", enc(1<<63, math.MaxUint64-(1<<63), math.MaxUint64, 0)},
	} {
		if got, ok := codec.DecodePartitionHandle(c.src); ok || got != (codec.PartitionHandle{}) {
			t.Errorf("%s (%x): DecodePartitionHandle = %+v, %v; want refused", c.name, c.src, got, ok)
		}
	}
	// The largest fields accepted: End is below 2^64 and above Offset.
	lim := uint64(partitionLimit - 1)
	got, ok := codec.DecodePartitionHandle(enc(lim, lim, lim, math.MaxUint64))
	if !ok {
		t.Fatal("largest partition handle refused")
	}
	if want := 3*lim + 2*format.BlockTrailerLen; got.End() != want || got.End() <= got.Offset || got.Index().End() != want {
		t.Fatalf("largest partition handle: end %d, index end %d, want %d", got.End(), got.Index().End(), want)
	}
	// A non-minimal varint is the value it spells, as binary.Uvarint reads
	// it: the writer never produces one, and the reader's bounds checks do
	// not depend on the encoding.
	if got, ok := codec.DecodePartitionHandle([]byte{0x81, 0x00, 2, 3, 4}); !ok || got != (codec.PartitionHandle{Offset: 1, FilterLen: 2, IndexLen: 3, FirstBlock: 4}) {
		t.Fatalf("non-minimal varint: %+v, %v", got, ok)
	}
}
