package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// recordEntries are entries shaped like package records: similar text
// with a few varying fields, which compresses well only with history
// shared across blocks.
func recordEntries(n int) []entry {
	return numbered(n, func(i int) string {
		return fmt.Sprintf("Package: pkg%d\nVersion: %d.%d-%d\nArchitecture: amd64\nMaintainer: Team %d <team%d@lists.example.org>\nInstalled-Size: %d\nDepends: libc6 (>= 2.%d), libfoo%d\nSection: utils\nPriority: optional\nDescription: tool number %d for doing things\n",
			i, i%7, i%13, i%3, i%50, i%50, i*37%10000, i%40, i%9, i)
	})
}

// checkReads opens data every way, with and without a cache, and checks
// Verify, scans both ways and every Get against es.
func checkReads(t *testing.T, data []byte, es []entry) {
	for _, opts := range []*reader.Options{nil, cacheOpts(t, 0), cacheOpts(t, 4096)} {
		sources(t, data, opts, func(t *testing.T, r *reader.Reader) {
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			got, err := scan(r)
			if err != nil || !slices.Equal(got, es) {
				t.Fatalf("scan: %d entries of %d, %v", len(got), len(es), err)
			}
			back, err := scanBack(r)
			if err != nil || !slices.Equal(back, reversed(es)) {
				t.Fatalf("backward scan: %d entries, %v", len(back), err)
			}
			for _, e := range es {
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

// TestMinLZTableReads builds MinLZ tables of every format version and
// reads them through every reader path; every data block is MinLZ, or
// raw where MinLZ saves less than 12.5%.
func TestMinLZTableReads(t *testing.T) {
	es := recordEntries(1500)
	for _, v := range tableVersions {
		data, p := build(t, es, v.opts(&builder.Options{Compression: format.MinLZCompression, BlockSize: 1024}))
		if p.Compression != format.MinLZCompression {
			t.Fatalf("%s: compression %v", v.name, p.Compression)
		}
		for i, b := range dataBlocks(t, data) {
			if b.Type != format.BlockTypeMinLZ {
				if z, _ := codec.AppendMinLZ(nil, b.Contents, format.LevelDefault); b.Type != format.BlockTypeRaw || len(z) < len(b.Contents)-len(b.Contents)/8 {
					t.Fatalf("%s: block %d has type %d", v.name, i, b.Type)
				}
			}
		}
		t.Run(v.name, func(t *testing.T) { checkReads(t, data, es) })
	}
}

// TestDictionaryTableReads builds zstd tables with a dictionary, large
// enough to train it mid-table (blocks queued, then written) and small
// enough to train it at Finish, and reads them every way.
func TestDictionaryTableReads(t *testing.T) {
	versions, large := tableVersions, 3000
	if raceEnabled {
		// The default, version 4, and fewer entries (still past the
		// training sample): training is slow under the race detector.
		versions, large = versions[len(versions)-1:], 1000
	}
	for _, n := range []int{40, large} {
		es := recordEntries(n)
		for _, v := range versions {
			opts := v.opts(&builder.Options{Compression: format.ZstdCompression, BlockSize: 1024, DictionarySize: 1024})
			data, p := build(t, es, opts)
			// DictionarySize bounds the content; the header and entropy
			// tables come on top.
			if len(p.Dictionary) == 0 || len(p.Dictionary) > 1024+1024 {
				t.Fatalf("%d entries, %s: dictionary of %d bytes", n, v.name, len(p.Dictionary))
			}
			if got := tableProps(t, data).Dictionary; !bytes.Equal(got, p.Dictionary) {
				t.Fatalf("stored dictionary differs from the builder's")
			}
			dictBlocks := 0
			for _, b := range dataBlocks(t, data) {
				if b.Type == format.BlockTypeZstdDict {
					dictBlocks++
				} else if b.Type != format.BlockTypeRaw {
					t.Fatalf("block of type %d in a dictionary table", b.Type)
				}
			}
			if dictBlocks < int(p.NumDataBlocks)*9/10 {
				t.Fatalf("%d entries, %s: %d of %d blocks use the dictionary", n, v.name, dictBlocks, p.NumDataBlocks)
			}
			plain, _ := build(t, es, v.opts(&builder.Options{Compression: format.ZstdCompression, BlockSize: 1024}))
			if n == large && len(data) >= len(plain)*9/10 {
				t.Errorf("%d entries, %s: table with a dictionary %d bytes, without %d", n, v.name, len(data), len(plain))
			}
			t.Run(fmt.Sprintf("%d/%s", n, v.name), func(t *testing.T) { checkReads(t, data, es) })
		}
	}
}

// dictRecord returns the offset of the tag byte of the dictionary record
// in a table with a dictionary, and the properties block's handle.
func dictRecord(t *testing.T, data []byte) (int, format.BlockHandle) {
	p := tableProps(t, data)
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Properties
	i := bytes.Index(data[h.Offset:h.End()], p.Dictionary)
	if i < 0 {
		t.Fatal("dictionary not in the properties block")
	}
	tag := int(h.Offset) + i - len(binary.AppendUvarint(nil, uint64(len(p.Dictionary)))) - 1
	if data[tag] != 28 {
		t.Fatalf("dictionary record tag %d", data[tag])
	}
	return tag, h
}

// resum rewrites the properties block's trailer for its bytes.
func resum(data []byte, h format.BlockHandle) {
	end := h.Offset + h.Length
	copy(data[end:], codec.AppendTrailer(nil, data[h.Offset:end], format.BlockTypeRaw))
}

// TestDamagedDictionary: a dictionary that does not parse fails Open; a
// table whose dictionary record is gone (an unknown tag in its place, as
// a reader before tag 28 sees it) reports its dictionary blocks as
// corrupt; neither gives a wrong value.
func TestDamagedDictionary(t *testing.T) {
	es := recordEntries(2000)
	data, _ := build(t, es, &builder.Options{Compression: format.ZstdCompression, DictionarySize: 4096})
	tag, h := dictRecord(t, data)
	start := tag + 1 + len(binary.AppendUvarint(nil, uint64(len(tableProps(t, data).Dictionary))))

	bad := slices.Clone(data)
	bad[start] ^= 0xff // the dictionary's magic number
	resum(bad, h)
	_, err := reader.New(bytes.NewReader(bad), int64(len(bad)), nil)
	wantCorrupt(t, err, len(bad), "dictionary")

	gone := slices.Clone(data)
	gone[tag] = 29
	resum(gone, h)
	r := openMem(t, gone, nil)
	defer r.Close()
	for _, e := range es[:50] {
		if v, err := r.Get([]byte(e.Key)); err == nil || !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("Get(%q) without the dictionary = %q, %v; want ErrCorrupt", e.Key, v, err)
		}
	}
	if err := r.Verify(); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Verify without the dictionary: %v", err)
	}
}

// TestDictionaryGetAllocs: a Get hit on a dictionary table, and on a
// MinLZ table, allocates nothing, with the block cache warm and with a
// cache too small to hold a block (every Get decodes).
func TestDictionaryGetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	es := recordEntries(2000)
	for _, o := range []*builder.Options{{Compression: format.ZstdCompression, DictionarySize: 4096}, {Compression: format.MinLZCompression}} {
		testGetAllocs(t, es, o)
	}
}

func testGetAllocs(t *testing.T, es []entry, o *builder.Options) {
	data, _ := build(t, es, o)
	for _, c := range []struct {
		name string
		opts *reader.Options
	}{{"warm", cacheOpts(t, 64<<20)}, {"cold", cacheOpts(t, 0)}} {
		r := openMem(t, data, c.opts)
		keys := [][]byte{[]byte(es[10].Key), []byte(es[1000].Key), []byte(es[1999].Key)}
		for _, k := range keys {
			if _, err := r.Get(k); err != nil {
				t.Fatal(err)
			}
		}
		i := 0
		buf := make([]byte, 0, 4096)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := r.GetAppend(buf[:0], keys[i%len(keys)]); err != nil {
				t.Fatal(err)
			}
			i++
		})
		r.Close()
		if allocs != 0 {
			t.Errorf("%v, dictionary %d, %s cache: Get allocates %v times", o.Compression, o.DictionarySize, c.name, allocs)
		}
	}
}

// TestDictionaryLargeBlocks: in a table with a dictionary, a block over
// 32 KiB (one large value) is a plain zstd frame, the others dictionary
// frames, and both read back.
func TestDictionaryLargeBlocks(t *testing.T) {
	es := recordEntries(2000)
	var big strings.Builder
	for _, e := range recordEntries(400) {
		big.WriteString(e.Value)
	}
	es[700].Value = big.String() // about 100 KB, compressing about as the records do
	data, p := build(t, es, &builder.Options{Compression: format.ZstdCompression, DictionarySize: 4096})
	if len(p.Dictionary) == 0 {
		t.Fatal("no dictionary")
	}
	types := map[byte]int{}
	for _, b := range dataBlocks(t, data) {
		types[b.Type]++
		if b.Type == format.BlockTypeZstdDict && len(b.Contents) > 32<<10 || b.Type == format.BlockTypeZstd && len(b.Contents) <= 32<<10 {
			t.Fatalf("block of %d bytes has type %d", len(b.Contents), b.Type)
		}
	}
	if types[format.BlockTypeZstd] != 1 || types[format.BlockTypeZstdDict] == 0 {
		t.Fatalf("block types %v", types)
	}
	checkReads(t, data, es)
}
