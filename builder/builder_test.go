package builder_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
	"pgregory.net/rapid"
)

// pair is a key/value entry as strings, for readable diffs.
type pair struct{ K, V string }

type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// buildPairs builds a table from ps in memory and returns its bytes and
// the builder's properties.
func buildPairs(t tb, ps []pair, opts *builder.Options) ([]byte, format.Properties) {
	t.Helper()
	var buf bytes.Buffer
	b := builder.New(&buf, opts)
	for _, p := range ps {
		if err := b.Add([]byte(p.K), []byte(p.V)); err != nil {
			t.Fatalf("Add(%q): %v", p.K, err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return buf.Bytes(), b.Properties()
}

// readBack opens a table with package reader, verifies it, checks that Get
// finds every scanned entry, and returns the entries and the reader's
// properties.
func readBack(t tb, data []byte) ([]pair, format.Properties) {
	t.Helper()
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatalf("reader.New: %v", err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	var out []pair
	it := r.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, pair{string(it.Key()), string(it.Value())})
	}
	if err := it.Close(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	for _, p := range out {
		v, err := r.Get([]byte(p.K))
		if err != nil || string(v) != p.V {
			t.Fatalf("Get(%q) = %q, %v; want %q", p.K, v, err, p.V)
		}
	}
	return out, r.Properties()
}

// readFile reads back the table at path.
func readFile(t *testing.T, path string) []pair {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := readBack(t, data)
	return ps
}

func pairs(n int, value func(i int) string) []pair {
	ps := make([]pair, n)
	for i := range ps {
		ps[i] = pair{fmt.Sprintf("key%06d", i), value(i)}
	}
	return ps
}

// randomString returns n pseudo-random (incompressible) bytes.
func randomString(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return string(b)
}

// block describes a stored data block, parsed without package reader.
type block struct {
	Handle    format.BlockHandle
	Type      byte
	Contents  []byte
	Restarts  int
	Separator string
	Keys      []string
}

func blocksOf(t tb, data []byte) []block {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	index := data[f.Index.Offset : f.Index.Offset+f.Index.Length]
	props, err := codec.DecodeProperties(data[f.Properties.Offset:f.Properties.Offset+f.Properties.Length], int64(f.Properties.Offset))
	if err != nil {
		t.Fatalf("properties: %v", err)
	}
	if f.Version != format.Version3 && !props.Partitioned {
		return blocksIn(t, data, f.Index.Offset, index)
	}
	// A partitioned table: the top-level index leads to the index
	// partitions, which list the data blocks in file order.
	var top codec.BlockIter
	if err := top.Init(format.SectionTopIndex, int64(f.Index.Offset), index); err != nil {
		t.Fatalf("top-level index: %v", err)
	}
	var out []block
	for ok := top.First(); ok; ok = top.Next() {
		ph, ok := codec.DecodePartitionHandle(top.Value())
		if !ok {
			t.Fatalf("top-level index: bad partition handle %x", top.Value())
		}
		ih := ph.Index()
		out = append(out, blocksIn(t, data, ih.Offset, data[ih.Offset:ih.Offset+ih.Length])...)
	}
	if err := top.Err(); err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// blocksIn returns the data blocks an index block (or index partition)
// at file offset off lists, in order.
func blocksIn(t tb, data []byte, off uint64, index []byte) []block {
	t.Helper()
	var idx codec.BlockIter
	if err := idx.Init(format.SectionIndex, int64(off), index); err != nil {
		t.Fatalf("index: %v", err)
	}
	var out []block
	for ok := idx.First(); ok; ok = idx.Next() {
		h, _ := codec.DecodeHandle(idx.Value())
		stored, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), data[h.Offset:h.End()])
		if err != nil {
			t.Fatalf("%v", err)
		}
		contents, err := codec.DecodeBlock(format.SectionDataBlock, int64(h.Offset), stored, typ, 1<<30, nil)
		if err != nil {
			t.Fatalf("%v", err)
		}
		var d codec.BlockIter
		if err := d.Init(format.SectionDataBlock, int64(h.Offset), contents); err != nil {
			t.Fatalf("%v", err)
		}
		b := block{Handle: h, Type: typ, Contents: contents, Restarts: d.NumRestarts(), Separator: string(idx.Key())}
		for ok := d.First(); ok; ok = d.Next() {
			b.Keys = append(b.Keys, string(d.Key()))
		}
		if err := d.Err(); err != nil {
			t.Fatalf("%v", err)
		}
		out = append(out, b)
	}
	if err := idx.Err(); err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

func TestKeyOrder(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{BlockSize: 64})
	add := func(k string, wantErr bool) {
		t.Helper()
		err := b.Add([]byte(k), []byte("value of "+k))
		if wantErr {
			if !errors.Is(err, builder.ErrKeyOrder) {
				t.Fatalf("Add(%q): %v, want ErrKeyOrder", k, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Add(%q): %v", k, err)
		}
	}
	add("b", false)
	add("a", true) // before
	add("b", true) // duplicate
	add("", true)  // the empty key sorts first
	add("b\x00", false)
	add("b", true) // prefix of the previous key
	add("c", false)
	err := b.Add([]byte("a"), nil)
	for _, want := range []string{`"a"`, `"c"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name key %s", err, want)
		}
	}
	long := "c" + strings.Repeat("k", 500)
	add(long, false)
	err = b.Add([]byte("c"), nil)
	if !errors.Is(err, builder.ErrKeyOrder) || len(err.Error()) > 300 {
		t.Errorf("error for a long previous key is %d bytes: %q", len(err.Error()), err)
	}
	if n := b.EntryCount(); n != 4 {
		t.Fatalf("EntryCount() = %d after 4 valid keys", n)
	}
	// The builder is still usable, including across block boundaries.
	for i := range 50 {
		k := fmt.Sprintf("d%03d", i)
		add(k, false)
		add(k, true)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	want := []pair{{"b", "value of b"}, {"b\x00", "value of b\x00"}, {"c", "value of c"}, {long, "value of " + long}}
	for i := range 50 {
		k := fmt.Sprintf("d%03d", i)
		want = append(want, pair{k, "value of " + k})
	}
	got, props := readBack(t, buf.Bytes())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("table contents (-want +got):\n%s", diff)
	}
	if props.NumEntries != uint64(len(want)) || string(props.SmallestKey) != "b" || string(props.LargestKey) != "d049" {
		t.Fatalf("properties: %d entries, smallest %q, largest %q", props.NumEntries, props.SmallestKey, props.LargestKey)
	}
}

// TestPropertyAddOrder adds random keys in random order: exactly the keys
// greater than the last accepted one are accepted, and the table holds
// exactly those.
func TestPropertyAddOrder(t *testing.T) {
	alphabet := []byte{0x00, 'a', 'b', 0xff}
	genKey := rapid.Map(rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 5), func(b []byte) string { return string(b) })
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(genKey, 0, 200).Draw(t, "keys")
		var buf bytes.Buffer
		b := builder.New(&buf, &builder.Options{
			BlockSize:       rapid.IntRange(64, 512).Draw(t, "blockSize"),
			RestartInterval: rapid.IntRange(1, 8).Draw(t, "restartInterval"),
			Compression:     rapid.SampledFrom([]format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression}).Draw(t, "compression"),
		})
		var accepted []pair
		for i, k := range keys {
			v := strings.Repeat(fmt.Sprint(i), i%5)
			err := b.Add([]byte(k), []byte(v))
			ok := len(accepted) == 0 || k > accepted[len(accepted)-1].K
			if ok != (err == nil) {
				t.Fatalf("Add(%q) after %d accepted keys: %v", k, len(accepted), err)
			}
			if err != nil && !errors.Is(err, builder.ErrKeyOrder) {
				t.Fatalf("Add(%q): %v, want ErrKeyOrder", k, err)
			}
			if ok {
				accepted = append(accepted, pair{k, v})
			}
			if b.EntryCount() != uint64(len(accepted)) {
				t.Fatalf("EntryCount() = %d, want %d", b.EntryCount(), len(accepted))
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		got, _ := readBack(t, buf.Bytes())
		if diff := cmp.Diff(accepted, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("table contents (-accepted +got):\n%s", diff)
		}
	})
}

// checkEmpty checks a table with no entries.
func checkEmpty(t *testing.T, data []byte) {
	t.Helper()
	got, props := readBack(t, data)
	if len(got) != 0 {
		t.Fatalf("empty table scans to %q", got)
	}
	if props.NumEntries != 0 || props.NumDataBlocks != 0 || props.DataSize != 0 || props.SmallestKey != nil || props.LargestKey != nil || props.RawKeyBytes != 0 {
		t.Fatalf("properties of an empty table: %+v", props)
	}
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, k := range []string{"", "a"} {
		if _, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) on an empty table: %v, want ErrNotFound", k, err)
		}
	}
	it := r.NewIterator()
	defer it.Close()
	if it.First() || it.Last() || it.SeekGE(nil) || it.Err() != nil {
		t.Fatalf("iterator over an empty table: valid %v, err %v", it.Valid(), it.Err())
	}
}

func TestEmptyTable(t *testing.T) {
	t.Run("New", func(t *testing.T) {
		var buf bytes.Buffer
		b := builder.New(&buf, nil)
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		checkEmpty(t, buf.Bytes())
		if p := b.Properties(); p.NumEntries != 0 || b.EntryCount() != 0 {
			t.Fatalf("builder counts %d entries", p.NumEntries)
		}
	})
	t.Run("Create", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.sst")
		b, err := builder.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkEmpty(t, data)
	})
}

func TestEmptyKeyAndValues(t *testing.T) {
	ps := []pair{{"", ""}, {"\x00", "x"}, {"a", ""}, {"b", "bee"}, {"c", ""}}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		t.Run(c.String(), func(t *testing.T) {
			data, bp := buildPairs(t, ps, &builder.Options{Compression: c, BlockSize: 64, RestartInterval: 2})
			got, props := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if props.SmallestKey == nil || len(props.SmallestKey) != 0 || string(props.LargestKey) != "c" {
				t.Fatalf("smallest key %#v (want empty, not absent), largest %q", props.SmallestKey, props.LargestKey)
			}
			if props.RawKeyBytes != 4 || props.RawValueBytes != 4 {
				t.Fatalf("raw key/value bytes %d/%d, want 4/4", props.RawKeyBytes, props.RawValueBytes)
			}
			if diff := cmp.Diff(bp, props); diff != "" {
				t.Fatalf("builder and reader properties differ (-builder +reader):\n%s", diff)
			}
			r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			v, err := r.Get(nil)
			if err != nil || v == nil || len(v) != 0 {
				t.Fatalf("Get(nil) = %#v, %v; want an empty non-nil value", v, err)
			}
		})
	}
	t.Run("only the empty key", func(t *testing.T) {
		data, _ := buildPairs(t, []pair{{"", "v"}}, nil)
		got, props := readBack(t, data)
		if diff := cmp.Diff([]pair{{"", "v"}}, got); diff != "" {
			t.Fatal(diff)
		}
		if props.NumEntries != 1 || props.SmallestKey == nil || props.LargestKey == nil {
			t.Fatalf("properties: %+v", props)
		}
	})
}

func TestValueLargerThanBlockSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	ps := []pair{
		{"a", "small"},
		{"b", randomString(rng, 1000)},
		{"c", strings.Repeat("compressible ", 700)},
		{"d", ""},
		{"e", randomString(rng, 129)},
		{"f", "tail"},
	}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		t.Run(c.String(), func(t *testing.T) {
			data, props := buildPairs(t, ps, &builder.Options{BlockSize: 128, Compression: c})
			got, _ := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			blocks := blocksOf(t, data)
			var keys [][]string
			for _, b := range blocks {
				keys = append(keys, b.Keys)
			}
			// A block is cut as soon as it reaches 128 bytes.
			want := [][]string{{"a", "b"}, {"c"}, {"d", "e"}, {"f"}}
			if diff := cmp.Diff(want, keys); diff != "" {
				t.Fatalf("keys per block (-want +got):\n%s", diff)
			}
			if props.MaxBlockSize < uint64(len(ps[2].V)) || props.NumDataBlocks != 4 {
				t.Fatalf("MaxBlockSize %d, NumDataBlocks %d", props.MaxBlockSize, props.NumDataBlocks)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	ps := pairs(1000, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("v", i%40)) })
	for name, opts := range map[string]*builder.Options{
		"nil":      nil,
		"zero":     {},
		"negative": {BlockSize: -1, RestartInterval: -5, Compression: format.DefaultCompression},
	} {
		t.Run(name, func(t *testing.T) {
			data, bp := buildPairs(t, ps, opts)
			got, rp := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(bp, rp); diff != "" {
				t.Fatalf("builder and reader properties differ (-builder +reader):\n%s", diff)
			}
			type defaults struct {
				Compression      format.Compression
				FilterPolicy     string
				FilterBitsPerKey float64
				BlockSize        uint64
				RestartInterval  uint64
			}
			want := defaults{format.SnappyCompression, filterblock.BloomName, 10, 4096, builder.DefaultRestartIntervalV4}
			if diff := cmp.Diff(want, defaults{rp.Compression, rp.FilterPolicy, rp.FilterBitsPerKey, rp.BlockSize, rp.RestartInterval}); diff != "" {
				t.Fatalf("default properties (-want +got):\n%s", diff)
			}
			if builder.DefaultBlockSize != 4096 || builder.DefaultRestartInterval != 16 || builder.DefaultRestartIntervalV4 != 32 || builder.DefaultBitsPerKey != 10 {
				t.Fatal("documented default constants changed")
			}
			// The defaults are applied, not only recorded.
			blocks := blocksOf(t, data)
			for i, b := range blocks {
				if b.Type != format.BlockTypeSnappy {
					t.Errorf("block %d has type %d, want snappy", i, b.Type)
				}
				if i < len(blocks)-1 && (len(b.Contents) < 4096 || len(b.Contents) > 4096+200) {
					t.Errorf("block %d holds %d bytes, want about 4096", i, len(b.Contents))
				}
				if want := (len(b.Keys) + 31) / 32; b.Restarts != want {
					t.Errorf("block %d of %d entries has %d restarts, want %d", i, len(b.Keys), b.Restarts, want)
				}
			}
		})
	}
}

// TestBlockLayout checks block cutting, restart points and separators for
// several block sizes and restart intervals.
func TestBlockLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var ps []pair
	for i := range 600 {
		k := fmt.Sprintf("%c/%05d", 'a'+i/200, i*7)
		ps = append(ps, pair{k, randomString(rng, rng.IntN(60))})
	}
	for _, fv := range []uint32{format.Version1, format.Version4} {
		for _, bs := range []int{64, 256, 1000, 4096} {
			for _, ri := range []int{1, 3, 16, 32} {
				t.Run(fmt.Sprintf("v%d/block%d/restart%d", fv, bs, ri), func(t *testing.T) {
					data, props := buildPairs(t, ps, &builder.Options{BlockSize: bs, RestartInterval: ri, Compression: format.NoCompression, FormatVersion: fv})
					if props.FormatVersion != fv {
						t.Fatalf("format version %d, want %d", props.FormatVersion, fv)
					}
					blocks := blocksOf(t, data)
					if props.NumDataBlocks != uint64(len(blocks)) {
						t.Fatalf("NumDataBlocks %d, index has %d", props.NumDataBlocks, len(blocks))
					}
					var all []string
					var offset uint64
					for i, b := range blocks {
						if b.Handle.Offset != offset {
							t.Fatalf("block %d at %d, want %d", i, b.Handle.Offset, offset)
						}
						offset = b.Handle.End()
						if b.Type != format.BlockTypeRaw {
							t.Fatalf("block %d is compressed under NoCompression", i)
						}
						if want := (len(b.Keys) + ri - 1) / ri; b.Restarts != want {
							t.Fatalf("block %d: %d restarts for %d entries, want %d", i, b.Restarts, len(b.Keys), want)
						}
						last := b.Keys[len(b.Keys)-1]
						if b.Separator < last {
							t.Fatalf("block %d: separator %q below its last key %q", i, b.Separator, last)
						}
						if i+1 < len(blocks) {
							if b.Separator >= blocks[i+1].Keys[0] {
								t.Fatalf("block %d: separator %q not below the next block's first key %q", i, b.Separator, blocks[i+1].Keys[0])
							}
							if len(b.Contents) < bs {
								t.Fatalf("block %d cut at %d bytes, below the %d target", i, len(b.Contents), bs)
							}
							// Cut as soon as the target is reached: without its
							// last entry the block was below it.
							if n := len(b.Contents) - entrySize(b.Keys, ps, ri, fv == format.Version4); n >= bs {
								t.Fatalf("block %d of %d bytes was already %d bytes before its last entry", i, len(b.Contents), n)
							}
						}
						all = append(all, b.Keys...)
					}
					if offset != props.DataSize {
						t.Fatalf("blocks end at %d, DataSize %d", offset, props.DataSize)
					}
					var want []string
					for _, p := range ps {
						want = append(want, p.K)
					}
					if diff := cmp.Diff(want, all); diff != "" {
						t.Fatalf("keys in blocks (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// entrySize returns the bytes the last of keys adds to its block: the
// encoded entry and, if it starts a restart interval, its restart offset.
func entrySize(keys []string, ps []pair, ri int, v4 bool) int {
	n := len(keys)
	k := keys[n-1]
	var v string
	for _, p := range ps {
		if p.K == k {
			v = p.V
		}
	}
	shared := 0
	restart := (n-1)%ri == 0
	if !restart {
		prev := keys[n-2]
		if v4 {
			prev = keys[0] // version 4 shares with the block's first key
		}
		for shared < len(k) && shared < len(prev) && k[shared] == prev[shared] {
			shared++
		}
	}
	size := uvarintLen(shared) + uvarintLen(len(k)-shared) + uvarintLen(len(v)) + len(k) - shared + len(v)
	if restart {
		size += 4
	}
	return size
}

func uvarintLen(v int) int { return len(binary.AppendUvarint(nil, uint64(v))) }

func TestCompressionChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	random := pairs(300, func(int) string { return randomString(rng, 100) })
	text := pairs(300, func(i int) string { return strings.Repeat(fmt.Sprintf("text %d ", i%10), 12) })
	tests := []struct {
		name string
		ps   []pair
		c    format.Compression
		typ  byte
	}{
		{"incompressible/snappy", random, format.SnappyCompression, format.BlockTypeRaw},
		{"incompressible/default", random, format.DefaultCompression, format.BlockTypeRaw},
		{"incompressible/none", random, format.NoCompression, format.BlockTypeRaw},
		{"compressible/snappy", text, format.SnappyCompression, format.BlockTypeSnappy},
		{"compressible/none", text, format.NoCompression, format.BlockTypeRaw},
		{"incompressible/zstd", random, format.ZstdCompression, format.BlockTypeRaw},
		{"compressible/zstd", text, format.ZstdCompression, format.BlockTypeZstd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, props := buildPairs(t, tc.ps, &builder.Options{Compression: tc.c, BlockSize: 1024})
			got, _ := readBack(t, data)
			if diff := cmp.Diff(tc.ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			wantComp := tc.c
			if wantComp == format.DefaultCompression {
				wantComp = format.SnappyCompression
			}
			if props.Compression != wantComp {
				t.Fatalf("Properties().Compression = %v, want %v", props.Compression, wantComp)
			}
			raw := props.RawKeyBytes + props.RawValueBytes
			for i, b := range blocksOf(t, data) {
				if b.Type != tc.typ {
					t.Fatalf("block %d stored with type %d, want %d", i, b.Type, tc.typ)
				}
				if b.Type != format.BlockTypeRaw && b.Handle.Length > uint64(len(b.Contents))*7/8 {
					t.Fatalf("block %d compressed from %d to only %d bytes", i, len(b.Contents), b.Handle.Length)
				}
			}
			if tc.typ != format.BlockTypeRaw && props.DataSize > raw/2 {
				t.Fatalf("compressible data: %d data bytes for %d raw bytes", props.DataSize, raw)
			}
		})
	}
}

// TestZstdLevels builds the same entries at every zstd level: each table
// reads back, records zstd, and the best level is no larger than the
// fastest. An unknown level is an error.
func TestZstdLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly hex jovial frogs")
	ps := pairs(2000, func(i int) string {
		var b strings.Builder
		for range 10 + rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	})
	snappyData, _ := buildPairs(t, ps, &builder.Options{Compression: format.SnappyCompression})
	size := map[format.CompressionLevel]int{}
	for _, l := range []format.CompressionLevel{format.LevelFastest, format.LevelDefault, format.LevelBetter, format.LevelBest} {
		data, props := buildPairs(t, ps, &builder.Options{Compression: format.ZstdCompression, CompressionLevel: l})
		got, rp := readBack(t, data)
		if diff := cmp.Diff(ps, got); diff != "" {
			t.Fatalf("level %v (-want +got):\n%s", l, diff)
		}
		if props.Compression != format.ZstdCompression || rp.Compression != format.ZstdCompression {
			t.Fatalf("level %v: compression %v (builder), %v (reader)", l, props.Compression, rp.Compression)
		}
		for i, b := range blocksOf(t, data) {
			// A tiny last block may not save the 12.5% compression must
			// save, and is then stored raw.
			if b.Type != format.BlockTypeZstd && (len(b.Contents) >= 256 || b.Type != format.BlockTypeRaw) {
				t.Fatalf("level %v: block %d (%d bytes) has type %d", l, i, len(b.Contents), b.Type)
			}
		}
		size[l] = len(data)
		if size[l] >= len(snappyData) {
			t.Errorf("level %v: %d bytes, snappy %d", l, size[l], len(snappyData))
		}
	}
	if size[format.LevelBest] > size[format.LevelFastest] {
		t.Errorf("best level %d bytes, fastest %d", size[format.LevelBest], size[format.LevelFastest])
	}
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{Compression: format.ZstdCompression, CompressionLevel: 9})
	if err := b.Add([]byte("k"), nil); err == nil || !strings.Contains(err.Error(), "compression level") {
		t.Fatalf("Add with level 9: %v", err)
	}
}

// TestZstdExpansionBound: a block zstd would shrink more than 22-fold (a
// reader's bound on decoded size, see package format) is stored as snappy,
// and the table reads back.
func TestZstdExpansionBound(t *testing.T) {
	ps := []pair{{"a", strings.Repeat("z", 1<<20)}, {"b", "x"}}
	data, props := buildPairs(t, ps, &builder.Options{Compression: format.ZstdCompression})
	got, _ := readBack(t, data)
	if diff := cmp.Diff(ps, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	bs := blocksOf(t, data)
	if bs[0].Type != format.BlockTypeSnappy {
		t.Fatalf("1 MiB of one byte stored as type %d, want snappy", bs[0].Type)
	}
	if props.MaxBlockSize > 22*props.DataSize+16 {
		t.Fatalf("max block size %d for %d data bytes", props.MaxBlockSize, props.DataSize)
	}
}

func TestAddCopiesArguments(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{BlockSize: 64})
	key, val := make([]byte, 8), make([]byte, 8)
	var want []pair
	for i := range 40 {
		copy(key, fmt.Sprintf("k%07d", i))
		copy(val, fmt.Sprintf("v%07d", i))
		if err := b.Add(key, val); err != nil {
			t.Fatal(err)
		}
		want = append(want, pair{string(key), string(val)})
		for j := range key { // scribble over the caller's buffers
			key[j], val[j] = 0xee, 0xee
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	got, props := readBack(t, buf.Bytes())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if string(props.SmallestKey) != "k0000000" || string(props.LargestKey) != "k0000039" {
		t.Fatalf("smallest %q, largest %q", props.SmallestKey, props.LargestKey)
	}
}

func TestFinishTwice(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, nil)
	if err := b.Add([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	n := buf.Len()
	if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("second Finish: %v, want ErrClosed", err)
	}
	if err := b.Add([]byte("b"), nil); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("Add after Finish: %v, want ErrClosed", err)
	}
	if err := b.Abort(); err != nil {
		t.Fatalf("Abort after Finish: %v", err)
	}
	if buf.Len() != n {
		t.Fatalf("calls after Finish wrote %d more bytes", buf.Len()-n)
	}
	got, _ := readBack(t, buf.Bytes())
	if diff := cmp.Diff([]pair{{"a", "1"}}, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestAbortNew(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, nil)
	if err := b.Add([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("Finish after Abort: %v, want ErrClosed", err)
	}
	if err := b.Add([]byte("b"), nil); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("Add after Abort: %v, want ErrClosed", err)
	}
	if err := b.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("an aborted builder wrote %d bytes", buf.Len())
	}
}

func TestUnknownCompression(t *testing.T) {
	for _, c := range []format.Compression{format.Compression(5), format.Compression(99), format.Compression(-1)} {
		t.Run(c.String(), func(t *testing.T) {
			var buf bytes.Buffer
			b := builder.New(&buf, &builder.Options{Compression: c})
			err := b.Add([]byte("a"), []byte("1"))
			if err == nil || errors.Is(err, builder.ErrKeyOrder) || !strings.Contains(err.Error(), "compression") {
				t.Fatalf("Add with compression %v: %v, want an error about the compression", c, err)
			}
			if err2 := b.Add([]byte("b"), []byte("2")); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("second Add: %v, want %v", err2, err)
			}
			if err := b.Finish(); err == nil || !strings.Contains(err.Error(), "compression") {
				t.Fatalf("Finish with compression %v: %v", c, err)
			}
			if buf.Len() != 0 {
				t.Fatalf("wrote %d bytes", buf.Len())
			}
		})
	}
	t.Run("Finish without Add", func(t *testing.T) {
		b := builder.New(io.Discard, &builder.Options{Compression: 42})
		if err := b.Finish(); err == nil {
			t.Fatal("Finish succeeded with compression 42")
		}
	})
}

var errWrite = errors.New("test: disk full")

// failingWriter accepts limit bytes, then fails.
type failingWriter struct {
	limit int
	buf   bytes.Buffer
	short bool // fail with a short write and no error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if len(p) <= room {
		return w.buf.Write(p)
	}
	w.buf.Write(p[:max(room, 0)])
	if w.short {
		return max(room, 0), nil
	}
	return max(room, 0), errWrite
}

func TestFailingWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ps := pairs(6000, func(int) string { return randomString(rng, 100) })
	opts := &builder.Options{Compression: format.NoCompression}
	good, _ := buildPairs(t, ps, opts)
	const bufSize = 256 << 10 // the builder's write buffer
	if len(good) < 2*bufSize {
		t.Fatalf("table of %d bytes is too small for this test", len(good))
	}
	for _, limit := range []int{0, 1, 1000, bufSize - 1, bufSize + 1, len(good) - bufSize - 1, len(good) - 1, len(good)} {
		for _, short := range []bool{false, true} {
			t.Run(fmt.Sprintf("limit%d/short%v", limit, short), func(t *testing.T) {
				w := &failingWriter{limit: limit, short: short}
				wantErr := errWrite
				if short {
					wantErr = io.ErrShortWrite
				}
				b := builder.New(w, opts)
				var addErr error
				failedAt := -1
				for i, p := range ps {
					err := b.Add([]byte(p.K), []byte(p.V))
					if addErr == nil && err != nil {
						addErr, failedAt = err, i
					}
					if addErr != nil && !errors.Is(err, wantErr) {
						t.Fatalf("Add %d after a write error at Add %d: %v, want the write error", i, failedAt, err)
					}
				}
				finishErr := b.Finish()
				if limit >= len(good) {
					if addErr != nil || finishErr != nil {
						t.Fatalf("errors with enough room: Add %v, Finish %v", addErr, finishErr)
					}
					if !bytes.Equal(w.buf.Bytes(), good) {
						t.Fatal("output differs from the in-memory build")
					}
					return
				}
				if !errors.Is(finishErr, wantErr) {
					t.Fatalf("Finish: %v, want an error wrapping %v", finishErr, wantErr)
				}
				// A write error surfaces in Add once the buffer spills.
				if limit+bufSize < len(good)-100_000 && addErr == nil {
					t.Fatalf("no Add reported the write error after %d bytes", limit)
				}
				if addErr != nil && !errors.Is(addErr, wantErr) {
					t.Fatalf("Add %d: %v, want the write error", failedAt, addErr)
				}
				if !bytes.HasPrefix(good, w.buf.Bytes()) {
					t.Fatal("the bytes written before the error are not a prefix of the table")
				}
				if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
					t.Fatalf("Finish after a failed Finish: %v, want ErrClosed", err)
				}
			})
		}
	}
}

// dirNames returns the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestIsTempFile(t *testing.T) {
	for name, want := range map[string]bool{
		".t.sst.123" + builder.TempSuffix: true,
		"." + builder.TempSuffix:          true,
		"t.sst":                           false,
		"t.sst" + builder.TempSuffix:      false, // no leading dot
		".t.sst":                          false,
		".t.sst.sst-tmp.bak":              false,
		"":                                false,
	} {
		if got := builder.IsTempFile(name); got != want {
			t.Errorf("IsTempFile(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCreateFinish(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "table.sst")
	b, err := builder.Create(path, &builder.Options{BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	ps := pairs(2000, func(i int) string { return fmt.Sprint("value ", i) })
	for _, p := range ps {
		if err := b.Add([]byte(p.K), []byte(p.V)); err != nil {
			t.Fatal(err)
		}
	}
	// While building: one temporary file beside the target, no target.
	names := dirNames(t, dir)
	if len(names) != 1 || !builder.IsTempFile(names[0]) || !strings.HasPrefix(names[0], ".table.sst.") {
		t.Fatalf("directory during the build holds %q, want one temporary file", names)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"table.sst"}, dirNames(t, dir)); diff != "" {
		t.Fatalf("directory after Finish (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ps, readFile(t, path)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o644 {
		t.Errorf("table file mode %v, want 0644", perm)
	}
	// The same bytes as an in-memory build.
	want, _ := buildPairs(t, ps, &builder.Options{BlockSize: 256})
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatal("Create wrote different bytes than New")
	}
	if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("second Finish: %v", err)
	}
	if err := b.Abort(); err != nil {
		t.Fatalf("Abort after Finish: %v", err)
	}
	if diff := cmp.Diff([]string{"table.sst"}, dirNames(t, dir)); diff != "" {
		t.Fatalf("Abort after Finish changed the directory:\n%s", diff)
	}
}

func TestCreateRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	b, err := builder.Create("rel.sst", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"rel.sst"}, dirNames(t, dir)); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff([]pair{{"k", "v"}}, readFile(t, filepath.Join(dir, "rel.sst"))); diff != "" {
		t.Fatal(diff)
	}
}

func TestCreateReplacesExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("new"), []byte("table")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old contents" {
		t.Fatal("the old file changed before Finish")
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]pair{{"new", "table"}}, readFile(t, path)); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff([]string{"t.sst"}, dirNames(t, dir)); diff != "" {
		t.Fatal(diff)
	}
}

func TestCreateAbort(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprintf("existing%v", existing), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.sst")
			var want []string
			if existing {
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
				want = []string{"t.sst"}
			}
			b, err := builder.Create(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs(5000, func(i int) string { return fmt.Sprint(i) }) {
				if err := b.Add([]byte(p.K), []byte(p.V)); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Abort(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, dirNames(t, dir)); diff != "" {
				t.Fatalf("directory after Abort (-want +got):\n%s", diff)
			}
			if existing {
				if got, _ := os.ReadFile(path); string(got) != "old" {
					t.Fatalf("Abort changed the existing file to %q", got)
				}
			}
			if err := b.Abort(); err != nil {
				t.Fatalf("second Abort: %v", err)
			}
			if err := b.Add([]byte("zzz"), nil); !errors.Is(err, builder.ErrClosed) {
				t.Fatalf("Add after Abort: %v", err)
			}
			if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
				t.Fatalf("Finish after Abort: %v", err)
			}
			if diff := cmp.Diff(want, dirNames(t, dir)); diff != "" {
				t.Fatalf("directory after Finish on an aborted builder (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateFailedFinish(t *testing.T) {
	t.Run("rename fails", func(t *testing.T) {
		// The target is a non-empty directory: the rename must fail and
		// the temporary file must go.
		dir := t.TempDir()
		path := filepath.Join(dir, "t.sst")
		if err := os.MkdirAll(filepath.Join(path, "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := builder.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add([]byte("a"), []byte("1")); err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err == nil {
			t.Fatal("Finish succeeded renaming onto a non-empty directory")
		}
		if diff := cmp.Diff([]string{"t.sst"}, dirNames(t, dir)); diff != "" {
			t.Fatalf("directory after a failed rename (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"inner"}, dirNames(t, path)); diff != "" {
			t.Fatalf("target directory changed:\n%s", diff)
		}
	})
}

func TestCreateMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "t.sst")
	b, err := builder.Create(path, nil)
	if err == nil || b != nil {
		t.Fatalf("Create in a missing directory = %v, %v", b, err)
	}
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q should wrap os.ErrNotExist and name %s", err, path)
	}
}

// TestBuilderProperties checks Properties and EntryCount as entries arrive
// and after Finish.
func TestBuilderProperties(t *testing.T) {
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{BlockSize: 100, RestartInterval: 4, Compression: format.NoCompression, Filter: filterblock.Bloom(7)})
	ps := pairs(50, func(i int) string { return strings.Repeat("x", i) })
	var keyBytes, valueBytes uint64
	for i, p := range ps {
		if err := b.Add([]byte(p.K), []byte(p.V)); err != nil {
			t.Fatal(err)
		}
		keyBytes += uint64(len(p.K))
		valueBytes += uint64(len(p.V))
		props := b.Properties()
		if b.EntryCount() != uint64(i+1) || props.NumEntries != uint64(i+1) || props.RawKeyBytes != keyBytes || props.RawValueBytes != valueBytes {
			t.Fatalf("after %d entries: EntryCount %d, %+v", i+1, b.EntryCount(), props)
		}
		if string(props.SmallestKey) != ps[0].K {
			t.Fatalf("SmallestKey %q", props.SmallestKey)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	bp := b.Properties()
	_, rp := readBack(t, buf.Bytes())
	if diff := cmp.Diff(bp, rp); diff != "" {
		t.Fatalf("(-builder +reader):\n%s", diff)
	}
	if bp.FilterBitsPerKey != 7 || bp.FilterPolicy != filterblock.BloomName || bp.BlockSize != 100 || bp.RestartInterval != 4 ||
		bp.Compression != format.NoCompression || string(bp.LargestKey) != ps[len(ps)-1].K || bp.FormatVersion != format.Version4 || bp.HashIndexSize == 0 || bp.Partitioned {
		t.Fatalf("properties after Finish: %+v", bp)
	}
	// By default the builder writes version 4 tables.
	data := buf.Bytes()
	if f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data))); err != nil || f.Version != format.Version4 {
		t.Fatalf("footer version %d, %v; want %d", f.Version, err, format.Version1)
	}
	if bp.DataSize+bp.FilterSize+bp.IndexSize+footer.Size >= uint64(buf.Len()) {
		t.Fatalf("section sizes exceed the %d-byte table: %+v", buf.Len(), bp)
	}
}

// BenchmarkAdd builds a table of 16-byte keys and 100-byte values that
// snappy stores in about 70 bytes: 24 random bytes, then text, as
// bench/cmd/compare's.
func BenchmarkAdd(b *testing.B) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		b.Run(c.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. ", 40))
			value := make([]byte, 100)
			key := make([]byte, 16)
			bld := builder.New(io.Discard, &builder.Options{Compression: c})
			b.SetBytes(int64(len(key) + len(value)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				binary.BigEndian.PutUint64(key[8:], uint64(i))
				for j := 0; j < 24; j += 8 {
					binary.LittleEndian.PutUint64(value[j:], rng.Uint64())
				}
				copy(value[24:], text[i*37%(len(text)-76):])
				if err := bld.Add(key, value); err != nil {
					b.Fatal(err)
				}
			}
			if err := bld.Finish(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// namedPolicy is the default Bloom filter under another name.
type namedPolicy struct {
	filterblock.Policy
	name string
}

func (p namedPolicy) Name() string { return p.name }

func TestFilterPolicyName(t *testing.T) {
	ok := strings.Repeat("n", filterblock.MaxNameLen)
	data, props := buildPairs(t, []pair{{"a", "1"}}, &builder.Options{Filter: namedPolicy{filterblock.Bloom(10), ok}})
	if props.FilterPolicy != ok {
		t.Fatalf("FilterPolicy %q", props.FilterPolicy)
	}
	if got, rp := readBack(t, data); len(got) != 1 || rp.FilterPolicy != ok {
		t.Fatalf("read back %q with policy %q", got, rp.FilterPolicy)
	}

	// A name too long to store makes the build fail instead of writing a
	// table no reader accepts.
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{Filter: namedPolicy{filterblock.Bloom(10), ok + "x"}})
	if err := b.Add([]byte("a"), []byte("1")); err == nil {
		t.Fatal("Add succeeded with an over-long filter policy name")
	}
	if err := b.Finish(); err == nil {
		t.Fatal("Finish succeeded with an over-long filter policy name")
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %d bytes", buf.Len())
	}
}
