//go:build unix

package codec_test

import (
	"bytes"
	"testing"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/fdcapture"
)

// TestDecodersWriteNothing runs corruption sweeps over blocks of every
// codec (raw, snappy, and zstd at every level) with file descriptors 1
// and 2 captured: every single-bit flip, every truncation and every byte
// set to 0x00 and 0xff of each stored block goes through DecodedLen and
// DecodeBlock, as a reader would after a checksum that passed (the
// checksum is bypassed here, so the damage reaches the decoders). The
// decoders may return errors, but must write not one byte to stdout or
// stderr.
func TestDecodersWriteNothing(t *testing.T) {
	type blockCodec struct {
		name string
		typ  byte
		enc  func([]byte) []byte
	}
	codecs := []blockCodec{
		{"raw", format.BlockTypeRaw, func(b []byte) []byte { return b }},
		{"snappy", format.BlockTypeSnappy, func(b []byte) []byte { return snappy.Encode(nil, b) }},
	}
	for _, l := range []format.CompressionLevel{format.LevelFastest, format.LevelDefault, format.LevelBetter, format.LevelBest} {
		codecs = append(codecs, blockCodec{"zstd-" + l.String(), format.BlockTypeZstd, func(b []byte) []byte { return codec.AppendZstd(nil, b, l) }})
	}
	var inputs [][]byte
	for i, n := range []int{0, 1, 40, 300, 4096} {
		inputs = append(inputs, blockLike(n, uint64(i)))
	}
	codecs = append(codecs, blockCodec{"minlz", format.BlockTypeMinLZ, func(b []byte) []byte { m, _ := codec.AppendMinLZ(nil, b, format.LevelDefault); return m }})
	rawDict, err := codec.TrainZstdDict(inputs[1:], 1024, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := codec.NewZstdDict("dictionary", 0, rawDict)
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Close()
	dictEnc, err := codec.NewZstdDictEncoder(rawDict, format.LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer dictEnc.Close()
	codecs = append(codecs, blockCodec{"zstd-dict", format.BlockTypeZstdDict, func(b []byte) []byte { return dictEnc.Append(nil, b) }})
	inputs = append(inputs, bytes.Repeat([]byte("abc"), 2000))
	stride := 1
	if testing.Short() {
		stride = 5
	}
	decode := func(stored []byte, typ byte) {
		if n, err := codec.DecodedLen(stored, typ); err == nil && n <= 1<<20 {
			codec.DecodeBlockDict(format.SectionDataBlock, 0, stored, typ, 1<<20, make([]byte, 0, n), dict)
		}
		codec.DecodeBlockDict(format.SectionDataBlock, 0, stored, typ, 64<<10, nil, dict)
	}
	stopErr := fdcapture.Start(t, 2)
	stopOut := fdcapture.Start(t, 1)
	var tried int
	for _, c := range codecs {
		for _, in := range inputs {
			stored := c.enc(in)
			buf := bytes.Clone(stored)
			for f := 0; f < 8*len(buf); f += stride {
				buf[f/8] ^= 1 << (f % 8)
				decode(buf, c.typ)
				buf[f/8] ^= 1 << (f % 8)
				tried++
			}
			for i := range buf {
				for _, v := range []byte{0, 0xff} {
					old := buf[i]
					buf[i] = v
					decode(buf, c.typ)
					buf[i] = old
					tried++
				}
			}
			for n := 0; n < len(stored); n += stride {
				decode(stored[:n:n], c.typ)
				tried++
			}
		}
	}
	out, errOut := stopOut(), stopErr()
	t.Logf("%d damaged blocks decoded", tried)
	if len(errOut) > 0 || len(out) > 0 {
		t.Fatalf("decoders wrote %d bytes to stderr and %d to stdout; stderr begins %q", len(errOut), len(out), errOut[:min(len(errOut), 500)])
	}
}
