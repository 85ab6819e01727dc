package rocksblock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
)

// goldenBlock is one block of a golden table: its bytes with the trailer,
// as the walk found them.
type goldenBlock struct {
	table   string
	section string
	off     int64
	buf     []byte // stored bytes + trailer
	fv      uint32
	ck      ChecksumType
	base    uint32
	dict    *Dict
}

// goldenBlocks walks the golden tables and returns all their blocks.
func goldenBlocks(t testing.TB) []goldenBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenBlock
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "table ") {
			continue
		}
		spec, err := parseSpec(line)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(goldenDir, spec.name))
		if err != nil {
			t.Fatal(err)
		}
		st, err := walkTable(data, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.name, err)
		}
		for _, r := range st.regions {
			out = append(out, goldenBlock{spec.name, r.section, int64(r.h.off), data[r.h.off : r.h.off+r.h.size+TrailerLen], st.fv, st.checksum, st.base, st.dict})
		}
	}
	if len(out) == 0 {
		t.Fatal("no golden blocks")
	}
	return out
}

// classify fails t unless err is nil or wraps exactly one of
// format.ErrCorrupt and ErrUnsupportedCompression, and is not a decoder
// panic that Decompress recovered (which would be a bug to know about).
func classify(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	c, u := errors.Is(err, format.ErrCorrupt), errors.Is(err, ErrUnsupportedCompression)
	if c == u {
		t.Fatalf("%s: error %q wraps ErrCorrupt %v and ErrUnsupportedCompression %v", what, err, c, u)
	}
	if strings.Contains(err.Error(), "decoder failed") {
		t.Fatalf("%s: a decoder panicked: %v", what, err)
	}
}

// TestBitFlips flips every byte of every golden block and its trailer
// (xor 0x01 and xor 0xff). With a checksum, CheckBlock must fail with an
// error wrapping format.ErrCorrupt naming the block's section and offset;
// without one, a flip of the stored bytes may pass the (zero) trailer,
// and Decompress must then give the block or an error. Decompress of the
// flipped bytes never panics in any case.
func TestBitFlips(t *testing.T) {
	blocks := goldenBlocks(t)
	flips, caught := 0, 0
	for _, b := range blocks {
		if _, _, err := CheckBlock(b.section, b.off, b.buf, b.ck, b.base); err != nil {
			t.Fatalf("%s %s at %d: intact block fails: %v", b.table, b.section, b.off, err)
		}
		buf := bytes.Clone(b.buf)
		n := len(buf) - TrailerLen
		for i := range buf {
			for _, x := range []byte{0x01, 0xff} {
				buf[i] ^= x
				flips++
				stored, typ, err := CheckBlock(b.section, b.off, buf, b.ck, b.base)
				switch {
				case err != nil:
					caught++
					var ce *format.CorruptError
					if !errors.As(err, &ce) || ce.Section != b.section || ce.Offset != b.off {
						t.Fatalf("%s: flip at %d: error %v does not name %s at %d", b.table, i, err, b.section, b.off)
					}
				case b.ck != NoChecksum || i > n:
					t.Fatalf("%s %s at %d: flip of byte %d (xor %#x) passes the %s check", b.table, b.section, b.off, i, x, b.ck)
				}
				if err != nil {
					stored, typ = buf[:n], buf[n]
				}
				out, derr := Decompress(b.section, b.off, typ, b.fv, stored, b.dict, 1<<20, nil)
				classify(t, b.table, derr)
				if derr == nil && len(out) > 1<<20 {
					t.Fatalf("%s: %d decoded bytes over the limit", b.table, len(out))
				}
				buf[i] ^= x
			}
		}
	}
	t.Logf("%d golden blocks, %d flips, %d caught by the checksum", len(blocks), flips, caught)
}

// TestContextChecksum checks that a format_version 6+ block fails at any
// other offset or with another base: its checksum carries both.
func TestContextChecksum(t *testing.T) {
	n := 0
	for _, b := range goldenBlocks(t) {
		if b.base == 0 {
			continue
		}
		n++
		for _, off := range []int64{b.off + 1, b.off - 1, b.off + 1<<32} {
			if _, _, err := CheckBlock(b.section, off, b.buf, b.ck, b.base); !errors.Is(err, format.ErrCorrupt) {
				t.Errorf("%s %s at %d passes at offset %d: %v", b.table, b.section, b.off, off, err)
			}
		}
		if _, _, err := CheckBlock(b.section, b.off, b.buf, b.ck, b.base^1); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s %s at %d passes with another base: %v", b.table, b.section, b.off, err)
		}
		if _, _, err := CheckBlock(b.section, b.off, b.buf, b.ck, 0); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s %s at %d passes without its context: %v", b.table, b.section, b.off, err)
		}
	}
	if n == 0 {
		t.Fatal("no golden block with a context checksum")
	}
}

// TestDecompressRandom feeds random bytes, and golden compressed blocks
// randomly damaged, to Decompress for every type byte and format_version
// 0 to 7, with and without the golden dictionaries.
func TestDecompressRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var dicts []*Dict
	var samples []goldenBlock
	for _, b := range goldenBlocks(t) {
		if b.dict != nil && !containsDict(dicts, b.dict) {
			dicts = append(dicts, b.dict)
		}
		if typ := b.buf[len(b.buf)-TrailerLen]; typ != NoCompression {
			samples = append(samples, b)
		}
	}
	dicts = append(dicts, nil)
	calls := 0
	for typ := 0; typ < 256; typ++ {
		for fv := uint32(0); fv <= 7; fv++ {
			for i := 0; i < 20; i++ {
				in := make([]byte, rng.IntN(300))
				for j := range in {
					in[j] = byte(rng.Uint32())
				}
				out, err := Decompress("data block", 99, byte(typ), fv, in, dicts[rng.IntN(len(dicts))], 1<<16, nil)
				classify(t, "random bytes", err)
				if err == nil && typ != int(NoCompression) && len(out) > 1<<16 {
					t.Fatalf("type %d: %d bytes over the limit", typ, len(out))
				}
				calls++
			}
		}
	}
	for _, s := range samples {
		n := len(s.buf) - TrailerLen
		typ := s.buf[n]
		for i := 0; i < 30; i++ {
			in := bytes.Clone(s.buf[:n])
			switch rng.IntN(3) {
			case 0:
				in = in[:rng.IntN(len(in)+1)]
			case 1:
				for k := 1 + rng.IntN(4); k > 0 && len(in) > 0; k-- {
					in[rng.IntN(len(in))] = byte(rng.Uint32())
				}
			case 2:
				in = append(in, byte(rng.Uint32()))
			}
			_, err := Decompress(s.section, s.off, typ, s.fv, in, s.dict, 1<<20, nil)
			classify(t, s.table, err)
			calls++
		}
	}
	t.Logf("%d calls", calls)
}

func containsDict(ds []*Dict, d *Dict) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// TestHostileSizes gives each size-prefixed format a tiny block claiming
// up to 1 GiB: it must be an error wrapping format.ErrCorrupt before any
// large allocation, with maxLen as large as the claim.
func TestHostileSizes(t *testing.T) {
	const claim = 1 << 30
	varint := binary.AppendUvarint(nil, claim)
	legacy := binary.LittleEndian.AppendUint64(nil, claim)
	snappyHdr := binary.AppendUvarint(nil, claim)
	zstdFrame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00} // content size 0
	cases := []struct {
		name   string
		typ    byte
		fv     uint32
		stored []byte
	}{
		{"snappy", Snappy, 5, append(snappyHdr, 0x00, 0x01)},
		{"zlib", Zlib, 2, append(varint, 0x4b, 0x04, 0x00)},
		{"bzip2", BZip2, 2, append(varint, 'B', 'Z', 'h', '9')},
		{"lz4", LZ4, 2, append(varint, 0x10, 'a')},
		{"lz4hc", LZ4HC, 5, append(varint, 0x10, 'a')},
		{"lz4 legacy", LZ4, 1, append(legacy, 0x10, 'a')},
		{"zstd", ZSTD, 5, append(varint, zstdFrame...)},
		{"zstd not final", ZSTDNotFinal, 0, append(varint, zstdFrame...)},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := Decompress("data block", 4096, c.typ, c.fv, c.stored, nil, claim, nil)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: got %d bytes, error %v; want a corruption error", c.name, len(out), err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte block", c.name, alloc, len(c.stored))
		}
		if n, ok := DecompressedLen(c.typ, c.fv, c.stored); !ok || n != claim {
			t.Errorf("%s: DecompressedLen = %d, %v; want the claim %d", c.name, n, ok, claim)
		}
		if _, err := Decompress("data block", 4096, c.typ, c.fv, c.stored, nil, 1<<20, nil); !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: a claim over maxLen gives %v", c.name, err)
		}
	}
}

// TestUnsupportedCompression checks that the types this package cannot
// decode give ErrUnsupportedCompression naming the type, not a
// corruption error.
func TestUnsupportedCompression(t *testing.T) {
	for _, c := range []struct {
		typ  byte
		name string
	}{{Xpress, "Xpress"}, {0x80, "compression type 128"}, {0xfe, "compression type 254"}, {0x08, "compression type 8"}} {
		_, err := Decompress("data block", 12, c.typ, 5, []byte{1, 2, 3}, nil, 1<<20, nil)
		if !errors.Is(err, ErrUnsupportedCompression) || errors.Is(err, format.ErrCorrupt) {
			t.Errorf("type %#x: %v, want ErrUnsupportedCompression only", c.typ, err)
		} else if !strings.Contains(err.Error(), c.name) {
			t.Errorf("type %#x: %q does not name %q", c.typ, err, c.name)
		}
		if _, ok := DecompressedLen(c.typ, 5, []byte{1, 2, 3}); ok {
			t.Errorf("type %#x: DecompressedLen claims to know", c.typ)
		}
	}
	if _, err := TrailerChecksum(5, nil, 0); !errors.Is(err, ErrUnsupportedChecksum) {
		t.Errorf("checksum type 5: %v", err)
	}
	if _, _, err := CheckBlock("index", 0, make([]byte, 9), 9, 0); !errors.Is(err, ErrUnsupportedChecksum) {
		t.Errorf("CheckBlock with checksum type 9: %v", err)
	}
}

// TestDstReuse checks that Decompress writes into dst's capacity when it
// suffices, as the reader's buffer reuse relies on.
func TestDstReuse(t *testing.T) {
	for _, b := range goldenBlocks(t) {
		n := len(b.buf) - TrailerLen
		typ := b.buf[n]
		if typ == NoCompression {
			continue
		}
		want, err := Decompress(b.section, b.off, typ, b.fv, b.buf[:n], b.dict, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 3, len(want)+10)
		got, err := Decompress(b.section, b.off, typ, b.fv, b.buf[:n], b.dict, 1<<20, dst)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s %s at %d: with dst: %v, equal %v", b.table, b.section, b.off, err, bytes.Equal(got, want))
		}
		if &got[0] != &dst[:1][0] {
			t.Fatalf("%s %s at %d (%s): result not in dst's capacity", b.table, b.section, b.off, CompressionName(typ))
		}
		if m, ok := DecompressedLen(typ, b.fv, b.buf[:n]); ok && m != len(want) {
			t.Fatalf("%s %s at %d: DecompressedLen %d, decoded %d", b.table, b.section, b.off, m, len(want))
		}
	}
}

// FuzzDecompress checks Decompress on arbitrary bytes, seeded with the
// golden blocks: no panic, an error of one of the two kinds, never more
// than maxLen bytes, and the length DecompressedLen claims.
func FuzzDecompress(f *testing.F) {
	blocks := goldenBlocks(f)
	var dicts []*Dict
	for _, b := range blocks {
		n := len(b.buf) - TrailerLen
		dictIdx := byte(255)
		if b.dict != nil {
			if !containsDict(dicts, b.dict) {
				dicts = append(dicts, b.dict)
			}
			for i, d := range dicts {
				if d == b.dict {
					dictIdx = byte(i)
				}
			}
		}
		f.Add(b.buf[n], byte(b.fv), dictIdx, b.buf[:n])
	}
	f.Fuzz(func(t *testing.T, typ, fv, dictIdx byte, stored []byte) {
		var d *Dict
		if int(dictIdx) < len(dicts) {
			d = dicts[dictIdx]
		}
		const maxLen = 1 << 16
		out, err := Decompress("data block", 7, typ, uint32(fv), stored, d, maxLen, nil)
		classify(t, "fuzz", err)
		if err != nil || typ == NoCompression {
			return
		}
		if len(out) > maxLen {
			t.Fatalf("%d bytes over the limit %d", len(out), maxLen)
		}
		if n, ok := DecompressedLen(typ, uint32(fv), stored); ok && n != len(out) {
			t.Fatalf("DecompressedLen %d, decoded %d bytes", n, len(out))
		}
	})
}
