package reader_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// TestMain lowers the number of rapid checks under the race detector (which
// slows the property tests by an order of magnitude) unless -rapid.checks
// is given, and removes the benchmark tables afterwards.
func TestMain(m *testing.M) {
	flag.Parse()
	if raceEnabled {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
		if !set {
			if err := flag.Set("rapid.checks", "25"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// mmapSupported reports whether reader.Open is expected to memory-map files.
var mmapSupported = runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "freebsd"

// entry is a key/value pair as strings, so that cmp.Diff output is readable
// and nil and empty slices compare equal.
type entry struct{ Key, Value string }

// tb is the part of testing.TB that *rapid.T also implements.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// build writes es, which must be sorted and unique, into an in-memory table.
func build(t tb, es []entry, opts *builder.Options) ([]byte, format.Properties) {
	t.Helper()
	var buf bytes.Buffer
	b := builder.New(&buf, opts)
	for _, e := range es {
		if err := b.Add([]byte(e.Key), []byte(e.Value)); err != nil {
			t.Fatalf("Add(%q): %v", e.Key, err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return buf.Bytes(), b.Properties()
}

// writeFile writes data to a new file in dir and returns its path.
func writeFile(t tb, dir string, data []byte) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "table-*.sst")
	if err != nil {
		t.Fatalf("%v", err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatalf("%v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	return f.Name()
}

// openMem opens data through reader.New.
func openMem(t tb, data []byte, opts *reader.Options) *reader.Reader {
	t.Helper()
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatalf("reader.New: %v", err)
	}
	return r
}

// openFile writes data to a file in t.TempDir() and opens it with
// reader.Open; the reader is closed at cleanup unless already closed.
func openFile(t *testing.T, data []byte, opts *reader.Options) *reader.Reader {
	t.Helper()
	path := writeFile(t, t.TempDir(), data)
	r, err := reader.Open(path, opts)
	if err != nil {
		t.Fatalf("reader.Open: %v", err)
	}
	if mmapSupported && !r.Mapped() {
		t.Fatalf("reader.Open(%s) did not memory-map the file", path)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// sources opens data both ways and runs f on each, as subtests.
func sources(t *testing.T, data []byte, opts *reader.Options, f func(t *testing.T, r *reader.Reader)) {
	t.Helper()
	t.Run("New", func(t *testing.T) {
		r := openMem(t, data, opts)
		defer r.Close()
		f(t, r)
	})
	t.Run("Open", func(t *testing.T) {
		f(t, openFile(t, data, opts))
	})
}

// scan returns every entry from First/Next, and the iterator's error.
func scan(r *reader.Reader) ([]entry, error) {
	it := r.NewIterator()
	var out []entry
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, entry{string(it.Key()), string(it.Value())})
	}
	return out, it.Close()
}

// scanBack returns every entry from Last/Prev, in reverse order, and the
// iterator's error.
func scanBack(r *reader.Reader) ([]entry, error) {
	it := r.NewIterator()
	var out []entry
	for ok := it.Last(); ok; ok = it.Prev() {
		out = append(out, entry{string(it.Key()), string(it.Value())})
	}
	return out, it.Close()
}

func reversed(es []entry) []entry {
	out := slices.Clone(es)
	slices.Reverse(out)
	return out
}

// numbered returns n entries with keys key%06d and the given value maker.
func numbered(n int, value func(i int) string) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i] = entry{fmt.Sprintf("key%06d", i), value(i)}
	}
	return es
}

// tableVersion is one of the one-level layouts the builder writes.
type tableVersion struct {
	name    string
	hash    bool   // builder.Options.HashIndex
	fv      uint32 // builder.Options.FormatVersion
	version uint32 // the format version the builder writes with them
}

// opts sets o's HashIndex and FormatVersion to ask for v, and returns o.
func (v tableVersion) opts(o *builder.Options) *builder.Options {
	o.HashIndex, o.FormatVersion = v.hash, v.fv
	return o
}

// hasHashIndex reports whether tables of v have a hash index section:
// version 2 (HashIndex) and version 4 (always).
func (v tableVersion) hasHashIndex() bool { return v.hash || v.version == format.Version4 }

// tableVersions are the one-level format versions the builder writes:
// Version1 when asked for (FormatVersion: format.Version1), Version2 with
// Options.HashIndex, Version4 by default.
var tableVersions = []tableVersion{
	{"v1", false, format.Version1, format.Version1},
	{"v2", true, 0, format.Version2},
	{"v4", false, 0, format.Version4},
}

// blockInfo describes one data block of a table.
type blockInfo struct {
	Handle    format.BlockHandle
	Type      byte     // trailer compression type
	Separator string   // index key
	Keys      []string // keys stored in the block
	Offsets   []int    // byte offset of each key's entry in the decoded block
	Contents  []byte   // decoded block contents
}

// dataBlocks parses the footer, index and data blocks of a valid table
// without using package reader.
func dataBlocks(t tb, data []byte) []blockInfo {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	// The index block, or a partitioned table's index partitions in turn.
	indexes := []format.BlockHandle{f.Index}
	if isPartitioned(t, data, f.Version) {
		indexes = indexes[:0]
		var top codec.BlockIter
		if err := top.Init(format.SectionTopIndex, int64(f.Index.Offset), data[f.Index.Offset:f.Index.Offset+f.Index.Length]); err != nil {
			t.Fatalf("top-level index: %v", err)
		}
		for ok := top.First(); ok; ok = top.Next() {
			ph, ok := codec.DecodePartitionHandle(top.Value())
			if !ok {
				t.Fatalf("bad partition handle in the top-level index")
			}
			indexes = append(indexes, ph.Index())
		}
		if err := top.Err(); err != nil {
			t.Fatalf("top-level index: %v", err)
		}
	}
	var dict *codec.ZstdDict
	if d := tableProps(t, data).Dictionary; d != nil {
		if dict, err = codec.NewZstdDict(format.SectionProperties, 0, d); err != nil {
			t.Fatalf("%v", err)
		}
		defer dict.Close()
	}
	var out []blockInfo
	for _, ih := range indexes {
		var idx codec.BlockIter
		if err := idx.Init(format.SectionIndex, int64(ih.Offset), data[ih.Offset:ih.Offset+ih.Length]); err != nil {
			t.Fatalf("index: %v", err)
		}
		for ok := idx.First(); ok; ok = idx.Next() {
			h, n := codec.DecodeHandle(idx.Value())
			if n != len(idx.Value()) {
				t.Fatalf("bad handle in index")
			}
			stored, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), data[h.Offset:h.End()])
			if err != nil {
				t.Fatalf("%v", err)
			}
			contents, err := codec.DecodeBlockDict(format.SectionDataBlock, int64(h.Offset), stored, typ, 1<<30, nil, dict)
			if err != nil {
				t.Fatalf("%v", err)
			}
			bi := blockInfo{Handle: h, Type: typ, Separator: string(idx.Key()), Contents: contents}
			var d codec.BlockIter
			if err := d.Init(format.SectionDataBlock, int64(h.Offset), contents); err != nil {
				t.Fatalf("%v", err)
			}
			for ok := d.First(); ok; ok = d.Next() {
				bi.Keys = append(bi.Keys, string(d.Key()))
				bi.Offsets = append(bi.Offsets, d.Offset())
			}
			if err := d.Err(); err != nil {
				t.Fatalf("data block at %d: %v", h.Offset, err)
			}
			out = append(out, bi)
		}
		if err := idx.Err(); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return out
}

// wantCorrupt fails unless err wraps format.ErrCorrupt through a
// *format.CorruptError with a known section and an offset inside a file of
// size bytes, and its message contains every string in want.
func wantCorrupt(t tb, err error, size int, want ...string) *format.CorruptError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one wrapping format.ErrCorrupt")
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("error %q (%T) does not wrap format.ErrCorrupt", err, err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %q does not wrap a *format.CorruptError", err)
	}
	switch ce.Section {
	case format.SectionFile, format.SectionFooter, format.SectionIndex, format.SectionDataBlock, format.SectionFilter, format.SectionProperties, format.SectionHashIndex,
		format.SectionTopIndex, format.SectionIndexPartition, format.SectionFilterPartition:
	default:
		t.Fatalf("error %q: unknown section %q", err, ce.Section)
	}
	if ce.Offset < 0 || ce.Offset > int64(size) {
		t.Fatalf("error %q: offset %d outside the %d-byte file", err, ce.Offset, size)
	}
	if ce.Msg == "" {
		t.Fatalf("error %q has an empty message", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
	return ce
}

// cacheOpts returns reader options with a cache of its own of capacity
// bytes (0: a cache that holds nothing), closed when the test ends; the
// close fails the test if a reader still uses the cache then.
func cacheOpts(t testing.TB, capacity int64) *reader.Options {
	c := newCache(t, capacity)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("closing the test's cache: %v", err)
		}
	})
	return &reader.Options{Cache: c}
}

// drawCacheOpts draws the reader's cache: the shared default, one that
// holds nothing, one smaller than a block, or one of a few small blocks
// (constant eviction).
func drawCacheOpts(t *rapid.T) *reader.Options {
	capacity := rapid.SampledFrom([]int64{-1, 0, 64, 16 << 10}).Draw(t, "cacheCapacity")
	if capacity < 0 {
		return &reader.Options{}
	}
	c := newCache(t, capacity)
	t.Cleanup(func() {
		// ErrInUse here is the one sign that the property left a reader open.
		if err := c.Close(); err != nil {
			t.Errorf("closing the drawn cache: %v", err)
		}
	})
	return &reader.Options{Cache: c}
}

// newCache returns a cache of capacity bytes, failing the test if its
// memory cannot be reserved. A capacity below cache.MinCapacity (0, 1)
// asks for a cache that holds nothing: cache.New refuses it, and
// MinCapacity holds no block either, so it gets that.
func newCache(t interface {
	Helper()
	Fatalf(string, ...any)
}, capacity int64) *cache.Cache {
	t.Helper()
	if capacity < cache.MinCapacity {
		capacity = cache.MinCapacity
	}
	c, err := cache.New(capacity)
	if err != nil {
		t.Fatalf("cache.New(%d): %v", capacity, err)
	}
	return c
}

// partitionable reports whether a builder partitions a table with filter
// policy p (given a low enough PartitionThreshold), with or without a
// hash index: the Bloom policies, whose generators take hashes and never
// fall back.
func partitionable(p filterblock.Policy) bool {
	if p == nil {
		return true
	}
	g := p.NewGenerator()
	_, hashes := g.(filterblock.HashAdder)
	_, fallback := g.(filterblock.FallbackReporter)
	return hashes && !fallback
}

// drawPartitioning forces partitioning (format version 3, or version 4
// with Properties.Partitioned) on a table of the property tests, whose
// tables are far below the default threshold: a threshold of 1 byte, and
// partitions from 1 byte (a partition per data block) to a few KiB.
func drawPartitioning(t *rapid.T, o *builder.Options) {
	o.PartitionThreshold = 1
	o.PartitionSize = rapid.SampledFrom([]int{1, 100, 300, 1024, 4096}).Draw(t, "partitionSize")
}

// drawFormatVersion draws the builder's FormatVersion for a table without
// Options.HashIndex: the version 1 layout (version 3 when partitioned),
// asked for explicitly, or version 4, by default (0) or explicitly.
// With HashIndex it leaves FormatVersion 0 (versions 2 and 3).
func drawFormatVersion(t *rapid.T, o *builder.Options) {
	if o.HashIndex {
		return
	}
	o.FormatVersion = rapid.SampledFrom([]uint32{format.Version1, 0, format.Version4}).Draw(t, "formatVersion")
}

// drawCompression draws the data block compression: snappy, MinLZ or
// none, and with zstd also zstd.
func drawCompression(t *rapid.T, zstd bool) format.Compression {
	cs := []format.Compression{format.NoCompression, format.SnappyCompression, format.MinLZCompression}
	if zstd {
		cs = append(cs, format.ZstdCompression)
	}
	return rapid.SampledFrom(cs).Draw(t, "compression")
}

// drawDictionary draws Options.DictionarySize for compression c: with
// zstd, none or a small dictionary (which small tables train from all
// their blocks at Finish).
func drawDictionary(t *rapid.T, c format.Compression) int {
	if c != format.ZstdCompression {
		return 0
	}
	return rapid.SampledFrom([]int{0, builder.MinDictionarySize, 2048}).Draw(t, "dictionarySize")
}

// isV4 reports whether a builder with options o writes format version 4:
// FormatVersion 0 or format.Version4, without HashIndex.
func isV4(o *builder.Options) bool {
	return !o.HashIndex && (o.FormatVersion == 0 || o.FormatVersion == format.Version4)
}

// wantPartitioned reports whether a builder with options o partitions a
// table of n entries small enough for the default threshold: when
// partitioning is forced on a non-empty table with a Bloom filter.
func wantPartitioned(o *builder.Options, n int) bool {
	return o.PartitionThreshold > 0 && n > 0 && partitionable(o.Filter)
}

// wantVersion returns the format version a builder with options o writes
// for a table of n entries small enough for the default threshold: 4 by
// default (partitioned or not: Properties.Partitioned tells), else 3 when
// partitioning is forced (wantPartitioned, with or without a hash index),
// else 2 with a hash index, else 1.
func wantVersion(o *builder.Options, n int) uint32 {
	switch {
	case isV4(o):
		return format.Version4
	case wantPartitioned(o, n):
		return format.Version3
	case o.HashIndex:
		return format.Version2
	}
	return format.Version1
}

// wantHashIndex reports whether a builder with options o writes a hash
// index section: with HashIndex (versions 2 and 3), and always in
// version 4.
func wantHashIndex(o *builder.Options) bool { return o.HashIndex || isV4(o) }

// tableProps decodes the properties block of a valid table without using
// package reader.
func tableProps(t tb, data []byte) format.Properties {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	h := f.Properties
	stored, typ, err := codec.CheckBlock(format.SectionProperties, int64(h.Offset), data[h.Offset:h.End()])
	if err != nil {
		t.Fatalf("%v", err)
	}
	contents, err := codec.DecodeBlock(format.SectionProperties, int64(h.Offset), stored, typ, 1<<30, nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	p, err := codec.DecodeProperties(contents, int64(h.Offset))
	if err != nil {
		t.Fatalf("properties: %v", err)
	}
	return p
}

// isPartitioned reports whether a valid table with footer version v has
// partitions: version 3, and version 4 with Properties.Partitioned.
func isPartitioned(t tb, data []byte, v uint32) bool {
	t.Helper()
	return v == format.Version3 || v == format.Version4 && tableProps(t, data).Partitioned
}
