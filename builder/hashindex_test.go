package builder_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// checkHashIndexTable checks the layout of a table with a hash index built
// from ps without package reader: the footer and properties say version 2
// (or 3, partitioned), the sections follow each other (data, hash index,
// filter or partitions, index or top-level index, properties, footer) with
// the sizes the properties give, every data block entry is stored whole,
// and the hash index covers every data block and locates every key. It
// returns the decoded hash index.
func checkHashIndexTable(t *testing.T, data []byte, bp format.Properties, ps []pair) codec.HashIndex {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	if f.Version != bp.FormatVersion || bp.FormatVersion != format.Version2 && bp.FormatVersion != format.Version3 {
		t.Fatalf("footer version %d, properties version %d; want %d or %d (partitioned)", f.Version, bp.FormatVersion, format.Version2, format.Version3)
	}
	stored, typ, err := codec.CheckBlock(format.SectionProperties, int64(f.Properties.Offset), data[f.Properties.Offset:f.Properties.End()])
	if err != nil || typ != format.BlockTypeRaw {
		t.Fatalf("properties block: type %d, %v", typ, err)
	}
	sp, err := codec.DecodeProperties(stored, int64(f.Properties.Offset))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bp, sp); diff != "" {
		t.Fatalf("builder vs stored properties (-builder +stored):\n%s", diff)
	}

	// Sections, in order, each right after the previous.
	hiOff := bp.DataSize
	if bp.HashIndexSize < codec.HashIndexHeaderLen+format.BlockTrailerLen {
		t.Fatalf("HashIndexSize %d", bp.HashIndexSize)
	}
	if f.Filter.Offset != hiOff+bp.HashIndexSize {
		t.Fatalf("filter at %d, want data size %d + hash index size %d", f.Filter.Offset, bp.DataSize, bp.HashIndexSize)
	}
	if bp.FilterSize != f.Filter.Length+format.BlockTrailerLen {
		t.Fatalf("FilterSize %d, filter handle %+v", bp.FilterSize, f.Filter)
	}
	if f.Index.Offset != f.Filter.End() || bp.IndexSize != f.Index.Length+format.BlockTrailerLen {
		t.Fatalf("index handle %+v, filter ends at %d, IndexSize %d", f.Index, f.Filter.End(), bp.IndexSize)
	}
	if f.Properties.Offset != f.Index.End() || f.Properties.End() != uint64(len(data)-footer.Size) {
		t.Fatalf("properties handle %+v, index ends at %d, footer at %d", f.Properties, f.Index.End(), len(data)-footer.Size)
	}
	if want := bp.DataSize + bp.HashIndexSize + bp.FilterSize + bp.IndexSize + f.Properties.Length + format.BlockTrailerLen + footer.Size; want != uint64(len(data)) {
		t.Fatalf("sections add up to %d bytes, table is %d", want, len(data))
	}

	// The hash index section: raw, checksummed, exactly HashIndexSize bytes.
	hiEnd := hiOff + bp.HashIndexSize
	stored, typ, err = codec.CheckBlock(format.SectionHashIndex, int64(hiOff), data[hiOff:hiEnd])
	if err != nil || typ != format.BlockTypeRaw {
		t.Fatalf("hash index section: type %d, %v", typ, err)
	}
	if uint64(len(stored))+format.BlockTrailerLen != bp.HashIndexSize {
		t.Fatalf("hash index of %d bytes, HashIndexSize %d", len(stored), bp.HashIndexSize)
	}
	x, err := codec.DecodeHashIndex(stored, int64(hiOff), bp.DataSize, bp.NumDataBlocks)
	if err != nil {
		t.Fatalf("DecodeHashIndex: %v", err)
	}
	if x.Occupied() != bp.NumEntries || x.NumSlots() != codec.HashIndexSlots(bp.NumEntries) || x.NumBlocks() != int(bp.NumDataBlocks) {
		t.Fatalf("hash index: %d occupied of %d slots, %d blocks; table has %d entries, %d blocks",
			x.Occupied(), x.NumSlots(), x.NumBlocks(), bp.NumEntries, bp.NumDataBlocks)
	}

	// The hash index's block offsets are the index block's handles, and
	// every entry of every block is stored whole.
	blocks := blocksOf(t, data)
	if len(blocks) != x.NumBlocks() {
		t.Fatalf("index block lists %d data blocks, hash index %d", len(blocks), x.NumBlocks())
	}
	// Slots hold entries' file offsets exactly when every block is raw.
	allRaw := true
	for _, b := range blocks {
		allRaw = allRaw && b.Type == format.BlockTypeRaw
	}
	if x.FileOffsets() != allRaw {
		t.Fatalf("FileOffsets() = %v, every data block raw: %v", x.FileOffsets(), allRaw)
	}
	// Otherwise they hold offsets in the concatenated decoded blocks, and
	// the decoded starts tile that concatenation block by block.
	if x.DecodedOffsets() != (!allRaw && len(blocks) > 0) {
		t.Fatalf("DecodedOffsets() = %v, every data block raw: %v, %d blocks", x.DecodedOffsets(), allRaw, len(blocks))
	}
	if x.DecodedOffsets() {
		var total uint64
		for i, b := range blocks {
			if got := x.DecodedStart(i); got != total {
				t.Fatalf("decoded start of block %d: %d, want %d", i, got, total)
			}
			total += uint64(len(b.Contents))
		}
		if got := x.DecodedStart(len(blocks)); got != total {
			t.Fatalf("decoded size %d, blocks decode to %d bytes", got, total)
		}
	}
	for i, b := range blocks {
		if got := x.BlockHandle(i); got != b.Handle {
			t.Fatalf("hash index handle of block %d: %+v, index block %+v", i, got, b.Handle)
		}
		var it codec.BlockIter
		if err := it.Init(format.SectionDataBlock, int64(b.Handle.Offset), b.Contents); err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			k, v, err := codec.EntryAt(b.Contents, int64(b.Handle.Offset), uint32(it.Offset()))
			if err != nil || !bytes.Equal(k, it.Key()) || !bytes.Equal(v, it.Value()) {
				t.Fatalf("block %d: entry at %d is %q, EntryAt gives %q, %v", i, it.Offset(), it.Key(), k, err)
			}
		}
	}

	// Every key's probe reaches its own entry.
	for _, p := range ps {
		probe := x.Probe(codec.KeyHash([]byte(p.K)))
		found := false
		for !found {
			bi, off, ok, err := probe.Next()
			if err != nil {
				t.Fatalf("probe of %q: %v", p.K, err)
			}
			if !ok {
				t.Fatalf("probe of %q ends without finding it", p.K)
			}
			h := blocks[bi].Handle
			if x.FileOffsets() {
				if off < h.Offset || off >= h.End() {
					t.Fatalf("probe of %q: file offset %d outside block %d %+v", p.K, off, bi, h)
				}
				off -= h.Offset
			}
			if x.DecodedOffsets() {
				start, next := x.DecodedStart(bi), x.DecodedStart(bi+1)
				if off < start || off >= next {
					t.Fatalf("probe of %q: decoded offset %d outside block %d [%d, %d)", p.K, off, bi, start, next)
				}
				off -= start
			}
			if off >= 1<<32 {
				t.Fatalf("probe of %q: block %d offset %d", p.K, bi, off)
			}
			k, v, err := codec.EntryAt(blocks[bi].Contents, int64(h.Offset), uint32(off))
			if err != nil {
				t.Fatalf("probe of %q: block %d offset %d: %v", p.K, bi, off, err)
			}
			if string(k) == p.K {
				if string(v) != p.V {
					t.Fatalf("probe of %q finds value %q, want %q", p.K, v, p.V)
				}
				found = true
			}
		}
	}
	return x
}

func TestHashIndexTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var ps []pair
	for i := range 3000 {
		ps = append(ps, pair{fmt.Sprintf("%c/key/%07d", 'a'+i/1000, i*13), randomString(rng, rng.IntN(40)) + strings.Repeat("v", rng.IntN(200))})
	}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		for _, bs := range []int{64, 4096} {
			for _, ri := range []int{1, 16} {
				t.Run(fmt.Sprintf("%v/block%d/restart%d", c, bs, ri), func(t *testing.T) {
					opts := &builder.Options{BlockSize: bs, RestartInterval: ri, Compression: c, HashIndex: true}
					data, bp := buildPairs(t, ps, opts)
					x := checkHashIndexTable(t, data, bp, ps)
					if bs == 64 && x.NumBlocks() < 1000 {
						t.Fatalf("%d data blocks of 64 bytes for %d entries", x.NumBlocks(), len(ps))
					}
					// The values compress, so both kinds of slot occur.
					if x.FileOffsets() != (c == format.NoCompression) || x.DecodedOffsets() != (c != format.NoCompression) {
						t.Fatalf("FileOffsets() = %v, DecodedOffsets() = %v under %v", x.FileOffsets(), x.DecodedOffsets(), c)
					}
					// The reader agrees on properties and contents.
					got, rp := readBack(t, data)
					if diff := cmp.Diff(ps, got); diff != "" {
						t.Fatalf("table contents (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(bp, rp); diff != "" {
						t.Fatalf("builder and reader properties differ (-builder +reader):\n%s", diff)
					}
					if rp.BlockSize != uint64(bs) || rp.RestartInterval != uint64(ri) || rp.Compression != c ||
						rp.NumEntries != uint64(len(ps)) || rp.FilterPolicy != filterblock.BloomName {
						t.Fatalf("properties: %+v", rp)
					}
				})
			}
		}
	}
}

// TestHashIndexVersusVersion1 builds the same entries with and without a
// hash index: only the version, the data blocks (whole keys) and the hash
// index differ.
func TestHashIndexVersusVersion1(t *testing.T) {
	ps := pairs(500, func(i int) string { return fmt.Sprintf("value %d", i) })
	opts := builder.Options{BlockSize: 512, Compression: format.NoCompression, FormatVersion: format.Version1}
	v1, p1 := buildPairs(t, ps, &opts)
	opts.HashIndex = true
	v2, p2 := buildPairs(t, ps, &opts)
	if p1.FormatVersion != format.Version1 || p1.HashIndexSize != 0 || p2.FormatVersion != format.Version2 || p2.HashIndexSize == 0 {
		t.Fatalf("version 1: version %d, hash index %d; version 2: version %d, hash index %d", p1.FormatVersion, p1.HashIndexSize, p2.FormatVersion, p2.HashIndexSize)
	}
	// Whole keys take more room: "key000123" shares 6 bytes with its
	// predecessor in a version 1 block.
	if p2.DataSize <= p1.DataSize || p2.NumDataBlocks < p1.NumDataBlocks {
		t.Fatalf("version 2 data: %d bytes in %d blocks, version 1 %d bytes in %d blocks", p2.DataSize, p2.NumDataBlocks, p1.DataSize, p1.NumDataBlocks)
	}
	// The filter is built over the same keys; only its alignment padding
	// (below 64 bytes) may differ.
	if d := int64(p1.FilterSize) - int64(p2.FilterSize); d <= -64 || d >= 64 || p1.FilterPolicy != p2.FilterPolicy {
		t.Fatalf("filter: %d bytes %q vs %d bytes %q", p1.FilterSize, p1.FilterPolicy, p2.FilterSize, p2.FilterPolicy)
	}
	checkHashIndexTable(t, v2, p2, ps)
	got1, _ := readBack(t, v1)
	got2, _ := readBack(t, v2)
	if diff := cmp.Diff(got1, got2); diff != "" {
		t.Fatalf("version 1 vs version 2 contents (-v1 +v2):\n%s", diff)
	}
}

func TestHashIndexEmptyTable(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{HashIndex: true})
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	data, bp := buf.Bytes(), b.Properties()
	x := checkHashIndexTable(t, data, bp, nil)
	if x.NumBlocks() != 0 || x.Occupied() != 0 {
		t.Fatalf("hash index of an empty table: %d blocks, %d occupied", x.NumBlocks(), x.Occupied())
	}
	checkEmpty(t, data)
}

func TestHashIndexEmptyKeyAndValues(t *testing.T) {
	ps := []pair{{"", ""}, {"\x00", "x"}, {"a", ""}, {"b", "bee"}, {"c", ""}}
	data, bp := buildPairs(t, ps, &builder.Options{HashIndex: true, BlockSize: 16, RestartInterval: 2})
	checkHashIndexTable(t, data, bp, ps)
	got, _ := readBack(t, data)
	if diff := cmp.Diff(ps, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestBlockSizeLimit: block sizes are at most builder.MaxBlockSize (1
// GiB) in every format version, since restart offsets and hash index
// slots hold 32-bit offsets in a block; a larger one fails before
// anything is written.
func TestBlockSizeLimit(t *testing.T) {
	for _, bs := range []int{builder.MaxBlockSize + 1, 1 << 40} {
		for _, l := range layouts {
			var buf bytes.Buffer
			b := builder.New(&buf, l.opts(builder.Options{BlockSize: bs}))
			err := b.Add([]byte("a"), []byte("1"))
			if err == nil || !strings.Contains(err.Error(), "Options.BlockSize") {
				t.Fatalf("%s, BlockSize %d: Add gave %v, want a BlockSize error", l.name, bs, err)
			}
			if err := b.Finish(); err == nil {
				t.Fatalf("%s, BlockSize %d: Finish succeeded", l.name, bs)
			}
			if buf.Len() != 0 {
				t.Fatalf("%s, BlockSize %d: wrote %d bytes", l.name, bs, buf.Len())
			}
			// An empty build fails too.
			b = builder.New(&buf, l.opts(builder.Options{BlockSize: bs}))
			if err := b.Finish(); err == nil || buf.Len() != 0 {
				t.Fatalf("%s, BlockSize %d, no entries: Finish gave %v, wrote %d bytes", l.name, bs, err, buf.Len())
			}
		}
	}
	// 1 GiB itself is allowed.
	ps := []pair{{"a", "1"}, {"b", "2"}}
	data, bp := buildPairs(t, ps, &builder.Options{BlockSize: 1 << 30, HashIndex: true})
	checkHashIndexTable(t, data, bp, ps)
	if bp.BlockSize != 1<<30 {
		t.Fatalf("BlockSize property %d", bp.BlockSize)
	}
}

// TestHashIndexPartitioned builds the same entries with a hash index in
// the one-level layout (version 2) and partitioned (version 3): the data
// blocks and the hash index section are byte for byte the same, at the
// same offsets, so the partitioned table's hash index covers every data
// block of the table; then come the partitions, checked by
// checkHashIndexTable and the reader.
func TestHashIndexPartitioned(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var ps []pair
	for i := range 3000 {
		ps = append(ps, pair{fmt.Sprintf("%c/key/%07d", 'a'+i/1000, i*13), randomString(rng, rng.IntN(40)) + strings.Repeat("v", rng.IntN(200))})
	}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		for _, split := range []format.Splitter{nil, format.Suffix(3)} {
			t.Run(fmt.Sprintf("%v/splitter=%v", c, split != nil), func(t *testing.T) {
				opts := builder.Options{BlockSize: 512, Compression: c, HashIndex: true, Splitter: split, PartitionThreshold: -1}
				v2, p2 := buildPairs(t, ps, &opts)
				opts.PartitionThreshold, opts.PartitionSize = 1, 1024
				v3, p3 := buildPairs(t, ps, &opts)
				if p2.FormatVersion != format.Version2 || p3.FormatVersion != format.Version3 {
					t.Fatalf("format versions %d and %d, want 2 and 3", p2.FormatVersion, p3.FormatVersion)
				}
				if p2.DataSize != p3.DataSize || p2.HashIndexSize != p3.HashIndexSize || p2.NumDataBlocks != p3.NumDataBlocks {
					t.Fatalf("version 2: data %d, hash index %d, %d blocks; version 3: %d, %d, %d", p2.DataSize, p2.HashIndexSize, p2.NumDataBlocks, p3.DataSize, p3.HashIndexSize, p3.NumDataBlocks)
				}
				if end := p2.DataSize + p2.HashIndexSize; !bytes.Equal(v2[:end], v3[:end]) {
					t.Fatal("data blocks or hash index differ between the one-level and partitioned tables")
				}
				if split == nil {
					checkHashIndexTable(t, v3, p3, ps)
				}
				f, err := footer.Decode(v3[len(v3)-footer.Size:], int64(len(v3)))
				if err != nil {
					t.Fatal(err)
				}
				if f.Filter.Offset != p3.DataSize+p3.HashIndexSize {
					t.Fatalf("partitions start at %d, want data size %d + hash index size %d", f.Filter.Offset, p3.DataSize, p3.HashIndexSize)
				}
				if n := len(blocksOf(t, v3)); n != int(p3.NumDataBlocks) {
					t.Fatalf("index partitions list %d data blocks, properties say %d", n, p3.NumDataBlocks)
				}
				got, rp := readBack(t, v3)
				if diff := cmp.Diff(ps, got); diff != "" {
					t.Fatalf("table contents (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(p3, rp); diff != "" {
					t.Fatalf("builder and reader properties differ (-builder +reader):\n%s", diff)
				}
			})
		}
	}
}
