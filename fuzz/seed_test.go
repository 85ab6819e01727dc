package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// kv is one key/value entry.
type kv struct {
	Key, Value []byte
}

// seedTable is a whole table file used as a seed.
type seedTable struct {
	name string
	file []byte
}

var (
	seedOnce   sync.Once
	seedCache  []seedTable
	seedErr    error
	goldenGlob = filepath.Join("..", "testdata", "golden", "*.sst")
)

// seedTables returns the tables the seed functions start from: a few small
// tables built here with different options, then the golden tables, if any.
func seedTables(tb testing.TB) []seedTable {
	tb.Helper()
	seedOnce.Do(func() { seedCache, seedErr = makeSeedTables() })
	if seedErr != nil {
		tb.Fatal(seedErr)
	}
	return seedCache
}

func makeSeedTables() ([]seedTable, error) {
	var out []seedTable
	add := func(name string, kvs []kv, opts *builder.Options, user map[string][]byte) error {
		file, err := buildTable(kvs, opts, user)
		if err != nil {
			return fmt.Errorf("seed table %s: %w", name, err)
		}
		out = append(out, seedTable{name, file})
		return nil
	}
	var numbered, repetitive, odd []kv
	for i := 0; i < 40; i++ {
		numbered = append(numbered, kv{[]byte(fmt.Sprintf("key%04d", i*7)), []byte(fmt.Sprintf("v%d", i))})
		repetitive = append(repetitive, kv{
			[]byte(fmt.Sprintf("user/%03d/name", i)),
			[]byte(strings.Repeat(string(rune('a'+i%26)), 20+i)),
		})
	}
	odd = []kv{
		{[]byte{}, []byte("empty key")},
		{[]byte{0}, []byte{}},
		{[]byte{0, 0}, bytes.Repeat([]byte{0xff}, 70)},
		{[]byte("a"), []byte("1")},
		{[]byte("ab"), []byte("12")},
		{[]byte("abc"), bytes.Repeat([]byte("xyz"), 40)},
		{[]byte{0xfe, 0xff}, []byte("high")},
		{[]byte{0xff, 0xff, 0xff}, []byte("top")},
	}
	steps := []struct {
		name string
		kvs  []kv
		opts *builder.Options
	}{
		{"raw-64-r2", numbered, &builder.Options{BlockSize: 64, RestartInterval: 2, Compression: format.NoCompression}},
		{"snappy-256", repetitive, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression}},
		{"snappy-default-odd", odd, nil},
		{"raw-1-r1-bloom4", odd, &builder.Options{BlockSize: 1, RestartInterval: 1, Compression: format.NoCompression, Filter: filterblock.Bloom(4)}},
		{"raw-128-leveldb", numbered[:20], &builder.Options{BlockSize: 128, Compression: format.NoCompression, Filter: filterblock.LevelDBBloom(8)}},
		{"empty", nil, nil},
		// Format version 2: with a hash index.
		{"hash-raw-64-r2", numbered, &builder.Options{BlockSize: 64, RestartInterval: 2, Compression: format.NoCompression, HashIndex: true}},
		{"hash-snappy-256", repetitive, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression, HashIndex: true}},
		{"hash-default-odd", odd, &builder.Options{HashIndex: true}},
		{"hash-raw-128-leveldb", numbered[:20], &builder.Options{BlockSize: 128, Compression: format.NoCompression, Filter: filterblock.LevelDBBloom(8), HashIndex: true}},
		{"hash-empty", nil, &builder.Options{HashIndex: true}},
		// zstd blocks and the binary fuse filter.
		{"zstd-256", repetitive, &builder.Options{BlockSize: 256, Compression: format.ZstdCompression}},
		{"zstd-fuse-odd", odd, &builder.Options{Compression: format.ZstdCompression, Filter: filterblock.BinaryFuse8()}},
		{"hash-zstd-256-fuse", repetitive, &builder.Options{BlockSize: 256, Compression: format.ZstdCompression, Filter: filterblock.BinaryFuse8(), HashIndex: true}},
		{"fuse-empty", nil, &builder.Options{Filter: filterblock.BinaryFuse8()}},
		{"part-raw-64", numbered, &builder.Options{BlockSize: 64, RestartInterval: 2, Compression: format.NoCompression, PartitionThreshold: 1, PartitionSize: 128}},
		{"part-snappy-256", repetitive, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression, PartitionThreshold: 1, PartitionSize: 256}},
		// Format version 3 with a hash index section before the partitions.
		{"part-hash-raw-64", numbered, &builder.Options{BlockSize: 64, RestartInterval: 2, Compression: format.NoCompression, HashIndex: true, PartitionThreshold: 1, PartitionSize: 128}},
		{"part-hash-zstd-256-prefix", repetitive, &builder.Options{BlockSize: 256, Compression: format.ZstdCompression, HashIndex: true, Splitter: format.Suffix(5), PartitionThreshold: 1, PartitionSize: 256}},
	}
	for _, s := range steps {
		if err := add(s.name, s.kvs, legacy(s.opts), nil); err != nil {
			return nil, err
		}
		if s.opts == nil || !s.opts.HashIndex {
			// The same options in format version 4, the default.
			if err := add("v4-"+s.name, s.kvs, s.opts, nil); err != nil {
				return nil, err
			}
		}
	}
	// A splitter and user properties in each format version: small
	// tables of the layouts of the golden prefix tables, which FuzzTable
	// leaves out.
	user := map[string][]byte{"app.level": {6}, "app.empty": {}, "z": []byte("last\x00value")}
	for _, s := range []struct {
		name string
		kvs  []kv
		opts *builder.Options
	}{
		{"prefix-snappy-128-user", repetitive[:12], &builder.Options{BlockSize: 128, Compression: format.SnappyCompression, Splitter: format.Suffix(5)}},
		{"hash-prefix-raw-64-user", numbered[:16], &builder.Options{BlockSize: 64, Compression: format.NoCompression, HashIndex: true, Splitter: format.Suffix(2)}},
		{"part-prefix-zstd-128-user", repetitive[:12], &builder.Options{BlockSize: 128, Compression: format.ZstdCompression, Splitter: format.Suffix(5), PartitionThreshold: 1, PartitionSize: 128}},
	} {
		if err := add(s.name, s.kvs, legacy(s.opts), user); err != nil {
			return nil, err
		}
		if !s.opts.HashIndex {
			if err := add("v4-"+s.name, s.kvs, s.opts, user); err != nil {
				return nil, err
			}
		}
	}
	paths, err := filepath.Glob(goldenGlob)
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		file, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, seedTable{"golden/" + filepath.Base(p), file})
	}
	return out, nil
}

// legacy returns opts asking for the layouts before format version 4
// (version 1, 2 with a hash index, 3 partitioned), as the seed tables
// were built before version 4 became the default.
func legacy(opts *builder.Options) *builder.Options {
	var o builder.Options
	if opts != nil {
		o = *opts
	}
	if !o.HashIndex {
		o.FormatVersion = format.Version1
	}
	return &o
}

// buildTable builds a table of kvs, which must be sorted, with opts and
// the user properties user.
func buildTable(kvs []kv, opts *builder.Options, user map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	b := builder.New(&buf, opts)
	for name, value := range user {
		if err := b.SetUserProperty(name, value); err != nil {
			return nil, err
		}
	}
	for _, e := range kvs {
		if err := b.Add(e.Key, e.Value); err != nil {
			return nil, err
		}
	}
	if err := b.Finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tableParts is a table split into its sections. Parts that do not decode
// are left empty: golden files may include damaged tables.
type tableParts struct {
	fileSize     int64
	footer       footer.Footer
	footerBytes  []byte
	filterOff    uint64
	filter       []byte   // filter section contents (one-level tables)
	index        []byte   // index block contents, or a partitioned table's top-level index
	indexOff     uint64   //
	props        []byte   // properties block contents
	dataBlocks   [][]byte // decoded data block contents
	snappyBlocks [][]byte // stored bytes of the snappy-compressed data blocks

	// A partitioned table's (version 3, or 4 with Properties.Partitioned)
	// index partitions and filter partitions, and the values of its
	// top-level index (partition handles).
	indexParts, filterParts [][]byte
	partHandles             [][]byte

	// The hash index section contents of a version 2 table, its file
	// offset, and what DecodeHashIndex is given with it.
	hashIndex     []byte
	hashIndexOff  uint64
	dataSize      uint64
	numDataBlocks uint64
}

// splitTable locates a table's sections from its footer.
func splitTable(file []byte) (p tableParts, ok bool) {
	p.fileSize = int64(len(file))
	if len(file) < footer.Size {
		return p, false
	}
	p.footerBytes = file[len(file)-footer.Size:]
	f, err := footer.Decode(p.footerBytes, p.fileSize)
	if err != nil {
		return p, false
	}
	p.footer = f
	p.filterOff, p.indexOff = f.Filter.Offset, f.Index.Offset
	p.index = contentsAt(file, f.Index, 1<<20)
	p.props = contentsAt(file, f.Properties, 1<<20)
	partitioned := f.Version == format.Version3
	if props, err := codec.DecodeProperties(p.props, int64(f.Properties.Offset)); err == nil && p.props != nil {
		p.dataSize, p.numDataBlocks = props.DataSize, props.NumDataBlocks
		partitioned = partitioned || props.Partitioned
		if h, ok := hashIndexHandle(props); ok {
			p.hashIndex, p.hashIndexOff = contentsAt(file, h, 1<<20), h.Offset
		}
	}
	if !partitioned {
		p.filter = contentsAt(file, f.Filter, 1<<20)
	}
	addBlocks := func(index []byte) {
		var it codec.BlockIter
		if it.Init(format.SectionIndex, 0, index) != nil {
			return
		}
		for ok := it.First(); ok; ok = it.Next() {
			h, n := codec.DecodeHandle(it.Value())
			if n <= 0 || h.End() > f.Filter.Offset || h.End() < h.Offset {
				continue
			}
			if stored, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), file[h.Offset:h.End()]); err == nil && typ == format.BlockTypeSnappy {
				p.snappyBlocks = append(p.snappyBlocks, stored)
			}
			if c := contentsAt(file, h, 1<<20); c != nil {
				p.dataBlocks = append(p.dataBlocks, c)
			}
		}
	}
	if !partitioned {
		addBlocks(p.index)
		return p, true
	}
	var it codec.BlockIter
	if it.Init(format.SectionTopIndex, 0, p.index) != nil {
		return p, true
	}
	for ok := it.First(); ok; ok = it.Next() {
		p.partHandles = append(p.partHandles, it.Value())
		ph, ok := codec.DecodePartitionHandle(it.Value())
		if !ok || ph.End() < ph.Offset || ph.End() > f.Index.Offset {
			continue
		}
		if c := contentsAt(file, ph.Filter(), 1<<20); c != nil {
			p.filterParts = append(p.filterParts, c)
		}
		if c := contentsAt(file, ph.Index(), 1<<20); c != nil {
			p.indexParts = append(p.indexParts, c)
			addBlocks(c)
		}
	}
	return p, true
}

// hashIndexHandle returns the handle of the hash index section the
// properties describe, if any.
func hashIndexHandle(p format.Properties) (format.BlockHandle, bool) {
	if p.HashIndexSize < format.BlockTrailerLen || p.DataSize+p.HashIndexSize < p.DataSize {
		return format.BlockHandle{}, false
	}
	return format.BlockHandle{Offset: p.DataSize, Length: p.HashIndexSize - format.BlockTrailerLen}, true
}

// contentsAt returns the checked, decoded contents of the block at h, or nil.
func contentsAt(file []byte, h format.BlockHandle, maxLen int) []byte {
	if h.End() < h.Offset || h.End() > uint64(len(file)) {
		return nil
	}
	stored, typ, err := codec.CheckBlock("seed", int64(h.Offset), file[h.Offset:h.End()])
	if err != nil {
		return nil
	}
	c, err := codec.DecodeBlock("seed", int64(h.Offset), stored, typ, maxLen, nil)
	if err != nil {
		return nil
	}
	return c
}

// seedParts returns the split sections of every seed table that has a
// decodable footer.
func seedParts(tb testing.TB) []tableParts {
	var out []tableParts
	for _, st := range seedTables(tb) {
		if p, ok := splitTable(st.file); ok {
			out = append(out, p)
		}
	}
	return out
}

// repairChecksums returns a copy of file in which the footer's magic and
// checksum and the trailer checksum of every block the table's layout
// leads to are recomputed, so that the reader gets past its CRC checks to
// the decoders behind them. The layouts: version 1 (data blocks, filter
// section, index block), version 2 and one-level version 4 (the same with
// a hash index section after the data blocks), version 3 and partitioned
// version 4 (a top-level index naming partitions, each a filter and an
// index partition whose entries name the data blocks; a version 4 one's
// hash index section also holds the whole filter). It is best effort:
// whatever it cannot locate is left alone, and a table without damage
// comes back byte for byte (TestRepairIdentity).
func repairChecksums(file []byte) []byte {
	file = bytes.Clone(file)
	if len(file) < footer.Size {
		return file
	}
	ft := file[len(file)-footer.Size:]
	binary.LittleEndian.PutUint64(ft[56:], footer.Magic)
	binary.LittleEndian.PutUint32(ft[52:], codec.MaskCRC(crc32.Checksum(ft[:52], crc32.MakeTable(crc32.Castagnoli))))
	f, err := footer.Decode(ft, int64(len(file)))
	if err != nil {
		return file
	}
	// footer.Decode checked that the three handles and their trailers
	// lie inside the file; handles read from blocks are checked here.
	inFile := func(h format.BlockHandle) bool { return h.End() >= h.Offset && h.End() <= uint64(len(file)) }
	fix := func(h format.BlockHandle) {
		if !inFile(h) {
			return
		}
		end := h.Offset + h.Length
		binary.LittleEndian.PutUint32(file[end+1:], codec.BlockChecksum(file[h.Offset:end], file[end]))
	}
	contents := func(h format.BlockHandle) []byte { return file[h.Offset : h.Offset+h.Length] }
	// The properties say whether a version 4 table is partitioned and
	// where a hash index lies. They are read here, before anything is
	// rewritten, and their own checksum repaired last: a trailer written
	// through a damaged handle may land in any block.
	props, propsErr := codec.DecodeProperties(contents(f.Properties), int64(f.Properties.Offset))
	index := contents(f.Index)
	partitioned := f.Version == format.Version3
	if f.Version == format.Version4 || f.Version == format.Version5 {
		if propsErr == nil {
			partitioned = props.Partitioned
		} else {
			// A top-level index entry's value is four uvarints, a
			// one-level index entry's two.
			var it codec.BlockIter
			if it.Init(format.SectionIndex, 0, index) == nil && it.First() {
				_, partitioned = codec.DecodePartitionHandle(it.Value())
			}
		}
	}
	// Data blocks before the index blocks that name them, whose contents
	// a misplaced trailer could change. dataEnd is where the last data
	// block's trailer ends, as far as the index says.
	var dataEnd uint64
	fixBlocks := func(index []byte) {
		var it codec.BlockIter
		if it.Init(format.SectionIndex, 0, index) != nil {
			return
		}
		n := 0
		for ok := it.First(); ok && n < 4096; ok = it.Next() {
			if h, k := codec.DecodeHandle(it.Value()); k > 0 && inFile(h) && h.End() <= f.Filter.Offset {
				fix(h)
				dataEnd = max(dataEnd, h.End())
			}
			n++
		}
	}
	if partitioned {
		// Each partition's index names its data blocks.
		var it codec.BlockIter
		if it.Init(format.SectionIndex, 0, index) == nil {
			n := 0
			for ok := it.First(); ok && n < 4096; ok = it.Next() {
				if ph, ok := codec.DecodePartitionHandle(it.Value()); ok && ph.End() >= ph.Offset && ph.End() <= f.Index.Offset {
					fixBlocks(contents(ph.Index()))
					fix(ph.Filter())
					fix(ph.Index())
				}
				n++
			}
		}
	} else {
		fixBlocks(index)
		// In a partitioned table the filter handle spans the partitions,
		// its trailer the last index partition's: fixed above.
		fix(f.Filter)
	}
	// The hash index section (versions 2 and 4, and 3 with one) lies
	// between the data blocks and the filter, or the partitions: where
	// the properties say or, if they do not decode, after the last data
	// block.
	if h, ok := hashIndexHandle(props); propsErr == nil && ok {
		fix(h)
	} else if propsErr != nil && f.Version != format.Version1 && f.Filter.Offset >= dataEnd+format.BlockTrailerLen {
		fix(format.BlockHandle{Offset: dataEnd, Length: f.Filter.Offset - dataEnd - format.BlockTrailerLen})
	}
	fix(f.Index)
	// A version 5 table's span block lies between the index block and
	// the properties.
	if f.Version == format.Version5 && f.Properties.Offset >= f.Index.End()+format.BlockTrailerLen {
		fix(format.BlockHandle{Offset: f.Index.End(), Length: f.Properties.Offset - f.Index.End() - format.BlockTrailerLen})
	}
	fix(f.Properties)
	return file
}

// wantErr fails the test unless err is nil or wraps one of targets.
func wantErr(t *testing.T, what string, err error, targets ...error) {
	if err == nil {
		return
	}
	for _, target := range targets {
		if errors.Is(err, target) {
			return
		}
	}
	t.Helper() // only here: Helper costs a stack walk, and this runs per lookup
	t.Fatalf("%s: error %q (%T) wraps none of %q", what, err, err, targets)
}

// keysFrom draws up to max lookup keys from data: the empty key and
// substrings of several lengths at spread-out offsets.
func keysFrom(data []byte, max int) [][]byte {
	keys := [][]byte{{}}
	if len(data) == 0 {
		return keys
	}
	step := len(data)/max + 1
	for i, n := 0, 1; i < len(data) && len(keys) < max; i, n = i+step, n%9+1 {
		end := min(i+n, len(data))
		keys = append(keys, data[i:end])
	}
	keys = append(keys, data[len(data)-min(len(data), 4):])
	return keys
}

// successor returns a key just above k, for model SeekGE probes.
func successor(k []byte) []byte { return append(bytes.Clone(k), 0) }

// cp copies b into a new non-nil slice, so empty keys compare equal.
func cp(b []byte) []byte { return append([]byte{}, b...) }

// diffEntries returns "" if a and b hold the same entries, else a cmp.Diff
// report (-a +b). The quick check first keeps cmp off the hot path.
func diffEntries(a, b []blockEntry) string {
	if slices.EqualFunc(a, b, func(x, y blockEntry) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
	}) {
		return ""
	}
	return cmp.Diff(a, b)
}
