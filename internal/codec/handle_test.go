package codec_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

func TestHandleRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := format.BlockHandle{
			Offset: rapid.OneOf(rapid.Uint64(), rapid.Uint64Range(0, 300), rapid.Just(uint64(math.MaxUint64))).Draw(t, "offset"),
			Length: rapid.OneOf(rapid.Uint64(), rapid.Uint64Range(0, 300), rapid.Just(uint64(math.MaxUint64))).Draw(t, "length"),
		}
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "prefix")
		suffix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "suffix")

		enc := codec.AppendHandle(bytes.Clone(prefix), h)
		if !bytes.Equal(enc[:len(prefix)], prefix) {
			t.Fatalf("AppendHandle changed dst's prefix")
		}
		body := enc[len(prefix):]
		want := binary.AppendUvarint(binary.AppendUvarint(nil, h.Offset), h.Length)
		if !bytes.Equal(body, want) {
			t.Fatalf("AppendHandle(%+v) = %x, want two uvarints %x", h, body, want)
		}
		if len(body) > codec.MaxHandleLen {
			t.Fatalf("encoding of %+v is %d bytes, MaxHandleLen is %d", h, len(body), codec.MaxHandleLen)
		}
		got, n := codec.DecodeHandle(append(bytes.Clone(body), suffix...))
		if n != len(body) {
			t.Fatalf("DecodeHandle read %d bytes, want %d", n, len(body))
		}
		if diff := cmp.Diff(h, got); diff != "" {
			t.Fatalf("DecodeHandle (-want +got):\n%s", diff)
		}
		// Every proper prefix of the encoding is rejected.
		for i := 0; i < len(body); i++ {
			if got, n := codec.DecodeHandle(body[:i]); n > 0 {
				t.Fatalf("DecodeHandle(%x), a %d-byte truncation, = %+v, %d; want n <= 0", body[:i], i, got, n)
			}
		}
	})
}

func TestHandleMaxLen(t *testing.T) {
	h := format.BlockHandle{Offset: math.MaxUint64, Length: math.MaxUint64}
	if codec.MaxHandleLen != 20 {
		t.Fatalf("MaxHandleLen = %d, want 20", codec.MaxHandleLen)
	}
	if n := len(codec.AppendHandle(nil, h)); n != codec.MaxHandleLen {
		t.Fatalf("largest handle encodes to %d bytes, want MaxHandleLen", n)
	}
	if n := len(codec.AppendHandle(nil, format.BlockHandle{})); n != 2 {
		t.Fatalf("zero handle encodes to %d bytes, want 2", n)
	}
}

func TestDecodeHandleMalformed(t *testing.T) {
	for _, src := range [][]byte{
		nil,
		{},
		{0x05},
		{0x80},
		{0x05, 0x80},
		{0x05, 0x80, 0x80},
		bytes.Repeat([]byte{0xff}, 11), // first uvarint overflows
		append([]byte{0x01}, bytes.Repeat([]byte{0xff}, 11)...), // second uvarint overflows
		append(bytes.Repeat([]byte{0xff}, 9), 0x02, 0x00),       // > 64 bits in 10 bytes
		append([]byte{0x00}, append(bytes.Repeat([]byte{0x80}, 9), 0x02)...),
	} {
		if h, n := codec.DecodeHandle(src); n > 0 {
			t.Errorf("DecodeHandle(%x) = %+v, %d; want n <= 0", src, h, n)
		}
	}
}

func TestHandleEnd(t *testing.T) {
	h := format.BlockHandle{Offset: 1000, Length: 234}
	if got, want := h.End(), uint64(1000+234+format.BlockTrailerLen); got != want {
		t.Fatalf("End() = %d, want %d", got, want)
	}
	if format.BlockTrailerLen != 5 {
		t.Fatalf("BlockTrailerLen = %d, the documented trailer is 5 bytes", format.BlockTrailerLen)
	}
}
