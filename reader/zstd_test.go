package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// zstdFrame is a single-segment zstd frame header claiming fcs decoded
// bytes (an 8-byte content size field) followed by blocks.
func zstdFrame(fcs uint64, blocks ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	b = append(b, 3<<6|1<<5)
	b = binary.LittleEndian.AppendUint64(b, fcs)
	for _, bl := range blocks {
		b = append(b, bl...)
	}
	return b
}

// zstdRLE is a last zstd block repeating c n times; zstdRaw a non-last
// raw block holding p.
func zstdRLE(n int, c byte) []byte {
	h := uint32(n)<<3 | 1<<1 | 1
	return []byte{byte(h), byte(h >> 8), byte(h >> 16), c}
}

func zstdRaw(p []byte) []byte {
	h := uint32(len(p)) << 3
	return append([]byte{byte(h), byte(h >> 8), byte(h >> 16)}, p...)
}

// TestLyingZstd rewrites zstd blocks of the zstd golden table, with valid
// checksums, so that they claim or produce more than the table allows (a
// "zstd bomb"), or less than they claim. Open, Verify, scans and Gets
// must fail or answer correctly without allocating the claimed size
// (checkLyingTables).
func TestLyingZstd(t *testing.T) {
	const huge = 1 << 30
	var g *goldenTable
	for _, gt := range loadGoldenTables(t) {
		if gt.name == "zstd.sst" {
			g = gt
		}
	}
	orig := g.data
	r, err := reader.New(bytes.NewReader(orig), int64(len(orig)), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := r.Properties()
	r.Close()
	if props.Compression != format.ZstdCompression {
		t.Fatalf("zstd.sst has compression %v", props.Compression)
	}
	blocks := dataBlocks(t, orig)
	first := blocks[0].Handle
	if blocks[0].Type != format.BlockTypeZstd {
		t.Fatalf("first data block of zstd.sst has type %d", blocks[0].Type)
	}

	// The first data block rewritten in place, same length, as a frame
	// claiming fcs bytes: filler in a raw block, then an RLE block of
	// rle bytes.
	lying := func(fcs uint64, rle int) []byte {
		filler := int(first.Length) - len(zstdFrame(0)) - 3 - 4
		stored := zstdFrame(fcs, zstdRaw(bytes.Repeat([]byte{'x'}, filler)), zstdRLE(rle, 'y'))
		if len(stored) != int(first.Length) {
			t.Fatalf("lying block of %d bytes, want %d", len(stored), first.Length)
		}
		out := slices.Clone(orig)
		copy(out[first.Offset:], codec.AppendTrailer(stored, stored, format.BlockTypeZstd))
		return out
	}
	filler := int(first.Length) - len(zstdFrame(0)) - 3 - 4
	tests := []lyingTable{
		{"control", slices.Clone(orig), ""},
		{"data: zstd claims 1 GiB", lying(huge, 10), "zstd block claims"},
		{"data: zstd claims the max block size, produces 1 MiB more", lying(props.MaxBlockSize, int(props.MaxBlockSize)+1<<20), "zstd"},
		{"data: zstd produces less than it claims", lying(props.MaxBlockSize, 0), "zstd"},
		{"data: zstd claims exactly what it produces, but not the block", lying(uint64(filler+3), 3), ""},
		{"properties: zstd block claiming 1 GiB", withPropertiesBlock(orig, zstdFrame(huge, zstdRLE(100, 'a')), format.BlockTypeZstd), "zstd block claims"},
	}
	checkLyingTables(t, g, tests)
}

// TestZstdTableReads reads zstd tables, version 1, 2 and 4, through
// every source and cache setting: the reader decodes zstd through
// codec.DecodeBlock without changes of its own.
func TestZstdTableReads(t *testing.T) {
	es := numbered(3000, func(i int) string { return fmt.Sprintf("value %d: %d", i, i*i*7) })
	for _, v := range tableVersions {
		data, p := build(t, es, v.opts(&builder.Options{Compression: format.ZstdCompression, BlockSize: 1024}))
		if p.Compression != format.ZstdCompression || p.FormatVersion != v.version {
			t.Fatalf("%s: compression %v, format version %d", v.name, p.Compression, p.FormatVersion)
		}
		zstdBlocks := 0
		for i, b := range dataBlocks(t, data) {
			if b.Type == format.BlockTypeZstd {
				zstdBlocks++
			} else if v.version == format.Version4 {
				// The builder stores a block raw when zstd saves less
				// than 12.5% of it (a version 4 table of these entries
				// has one such block); anything else must be zstd.
				if z := codec.AppendZstd(nil, b.Contents, format.LevelDefault); b.Type != format.BlockTypeRaw || len(z) < len(b.Contents)-len(b.Contents)/8 {
					t.Fatalf("%s: block %d of %d, type %d, %d bytes, %d with zstd: not zstd", v.name, i, p.NumDataBlocks, b.Type, len(b.Contents), len(z))
				}
				zstdBlocks++
			}
		}
		if zstdBlocks != int(p.NumDataBlocks) {
			t.Fatalf("%s: %d of %d blocks are zstd", v.name, zstdBlocks, p.NumDataBlocks)
		}
		for _, opts := range []*reader.Options{nil, cacheOpts(t, 0), cacheOpts(t, 4096)} {
			sources(t, data, opts, func(t *testing.T, r *reader.Reader) {
				if err := r.Verify(); err != nil {
					t.Fatal(err)
				}
				got, err := scan(r)
				if err != nil || len(got) != len(es) {
					t.Fatalf("scan: %d entries, %v", len(got), err)
				}
				back, err := scanBack(r)
				if err != nil || len(back) != len(es) {
					t.Fatalf("backward scan: %d entries, %v", len(back), err)
				}
				for i, e := range es {
					if got[i] != e {
						t.Fatalf("scan entry %d = %q, want %q", i, got[i].Key, e.Key)
					}
					v, err := r.Get([]byte(e.Key))
					if err != nil || string(v) != e.Value {
						t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
					}
				}
				if _, err := r.Get([]byte("zzz")); !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("Get of an absent key: %v", err)
				}
			})
		}
	}
}
