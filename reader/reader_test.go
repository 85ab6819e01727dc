package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// smallTable returns a format version 1 table of a few data blocks and its
// entries.
func smallTable(t testing.TB, c format.Compression) ([]byte, []entry) {
	t.Helper()
	return smallTableV(t, c, tableVersions[0])
}

// smallTableV is smallTable, of the format version tv.
func smallTableV(t testing.TB, c format.Compression, tv tableVersion) ([]byte, []entry) {
	t.Helper()
	es := numbered(40, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("ab", i%7)) })
	data, p := build(t, es, &builder.Options{BlockSize: 128, RestartInterval: 3, Compression: c, HashIndex: tv.hash, FormatVersion: tv.fv})
	if n := len(dataBlocks(t, data)); n < 3 {
		t.Fatalf("small table has %d data blocks, want at least 3", n)
	}
	if p.FormatVersion != tv.version || (p.HashIndexSize != 0) != tv.hasHashIndex() || p.Partitioned {
		t.Fatalf("small table (%s) has format version %d, hash index size %d, partitioned %v", tv.name, p.FormatVersion, p.HashIndexSize, p.Partitioned)
	}
	return data, es
}

// openAny opens data with reader.New, or writes it to a file in dir and
// opens it with reader.Open.
func openAny(data []byte, dir string, useFile bool) (*reader.Reader, error) {
	if !useFile {
		return reader.New(bytes.NewReader(data), int64(len(data)), nil)
	}
	f, err := os.CreateTemp(dir, "bad-*.sst")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return reader.Open(f.Name(), nil)
}

func TestBadFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	text := []byte(strings.Repeat("This is not an sstable, just some text.\n", 5))[:200]
	valid, _ := smallTable(t, format.SnappyCompression)
	validFooter, err := footer.Decode(valid[len(valid)-footer.Size:], int64(len(valid)))
	if err != nil {
		t.Fatal(err)
	}
	withFooter := func(body []byte, f footer.Footer) []byte {
		return f.Append(slices.Clone(body))
	}
	magicOnly := append(random(500), valid[len(valid)-8:]...)
	// The newest version plus one, and zero, are unknown; a version 1 table
	// whose footer claims Version2 disagrees with its properties.
	badVersion := validFooter
	badVersion.Version = format.Version + 1
	zeroVersion := validFooter
	zeroVersion.Version = 0
	v2Footer := validFooter
	v2Footer.Version = format.Version2
	outside := validFooter
	outside.Index.Offset = uint64(len(valid))

	tests := []struct {
		name    string
		data    []byte
		section string
		want    string
	}{
		{"empty", nil, format.SectionFile, "too small"},
		{"10 bytes", []byte("0123456789"), format.SectionFile, "too small"},
		{"63 bytes", valid[len(valid)-63:], format.SectionFile, "too small"},
		{"text", text, format.SectionFooter, "magic"},
		{"zeros", make([]byte, 4096), format.SectionFooter, "magic"},
		{"random 64", random(64), format.SectionFooter, "magic"},
		{"random 5000", random(5000), format.SectionFooter, "magic"},
		{"random with magic", magicOnly, format.SectionFooter, "checksum"},
		{"footer only", valid[len(valid)-footer.Size:], format.SectionFooter, "does not fit"},
		{"unknown version", withFooter(valid[:len(valid)-footer.Size], badVersion), format.SectionFooter, fmt.Sprintf("unsupported format version %d", format.Version+1)},
		{"version 0", withFooter(valid[:len(valid)-footer.Size], zeroVersion), format.SectionFooter, "unsupported format version 0"},
		{"v1 table, v2 footer", withFooter(valid[:len(valid)-footer.Size], v2Footer), format.SectionProperties, "format version 1 disagrees with the footer's 2"},
		{"index outside file", withFooter(valid[:len(valid)-footer.Size], outside), format.SectionFooter, "does not fit"},
		{"random body, valid footer", withFooter(random(len(valid)-footer.Size), validFooter), format.SectionProperties, "checksum"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		for _, useFile := range []bool{false, true} {
			name := tc.name + map[bool]string{false: "/New", true: "/Open"}[useFile]
			t.Run(name, func(t *testing.T) {
				r, err := openAny(tc.data, dir, useFile)
				if err == nil {
					r.Close()
					t.Fatalf("opened a bad file of %d bytes without error", len(tc.data))
				}
				ce := wantCorrupt(t, err, len(tc.data), tc.want)
				if ce.Section != tc.section {
					t.Errorf("error %q names section %q, want %q", err, ce.Section, tc.section)
				}
				if tc.section == format.SectionFooter && tc.want == "magic" && ce.Offset != int64(len(tc.data)-8) {
					t.Errorf("error %q: offset %d, want the magic number's %d", err, ce.Offset, len(tc.data)-8)
				}
			})
		}
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := reader.Open(t.TempDir()+"/missing.sst", nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
	if errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Open of a missing file: %v wraps ErrCorrupt", err)
	}
}

// checkDamaged opens a damaged table and requires Open or Verify to fail
// with a corruption error. Reads must not panic, every Get must return the
// right value or an error wrapping ErrCorrupt, and scans must return a
// prefix (forwards) or suffix (backwards) of the entries.
func checkDamaged(t *testing.T, data []byte, es []entry, r *reader.Reader, openErr error, what string) {
	t.Helper()
	if openErr != nil {
		wantCorrupt(t, openErr, len(data))
		return
	}
	defer r.Close()
	verr := r.Verify()
	if verr == nil {
		t.Fatalf("%s: Open and Verify both succeeded", what)
	}
	wantCorrupt(t, verr, len(data))
	for _, e := range es {
		v, err := r.Get([]byte(e.Key))
		if err == nil && string(v) != e.Value {
			t.Fatalf("%s: Get(%q) = %q, want %q or an error", what, e.Key, v, e.Value)
		}
		if err != nil && !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("%s: Get(%q): %v, want a value or ErrCorrupt", what, e.Key, err)
		}
	}
	fwd, err := scan(r)
	if err != nil {
		wantCorrupt(t, err, len(data))
	}
	if len(fwd) > len(es) || !slices.Equal(fwd, es[:len(fwd)]) || (err == nil && len(fwd) != len(es)) {
		t.Fatalf("%s: forward scan returned %d entries (err %v), not a prefix of the %d entries", what, len(fwd), err, len(es))
	}
	back, err := scanBack(r)
	if err != nil {
		wantCorrupt(t, err, len(data))
	}
	if len(back) > len(es) || !slices.Equal(back, reversed(es)[:len(back)]) || (err == nil && len(back) != len(es)) {
		t.Fatalf("%s: backward scan returned %d entries (err %v), not a suffix of the %d entries", what, len(back), err, len(es))
	}
}

func TestTruncatedTable(t *testing.T) {
	for _, v := range tableVersions {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			t.Run(v.name+"/"+c.String(), func(t *testing.T) {
				data, es := smallTableV(t, c, v)
				dir := t.TempDir()
				for n := 0; n < len(data); n++ {
					trunc := slices.Clone(data[:n])
					r, err := openAny(trunc, dir, false)
					checkDamaged(t, trunc, es, r, err, fmt.Sprintf("truncated to %d of %d bytes", n, len(data)))
					if n%5 == 0 || n < 2*footer.Size { // through reader.Open too
						r, err := openAny(trunc, dir, true)
						checkDamaged(t, trunc, es, r, err, fmt.Sprintf("file truncated to %d of %d bytes", n, len(data)))
					}
				}
			})
		}
	}
}

// TestEveryByteFlipDetected damages each byte of a table in turn: every
// byte is covered by a checksum or the magic number, so Open or Verify
// must fail, and no read may return a wrong value.
func TestEveryByteFlipDetected(t *testing.T) {
	for _, v := range tableVersions {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			t.Run(v.name+"/"+c.String(), func(t *testing.T) {
				data, es := smallTableV(t, c, v)
				dir := t.TempDir()
				masks := []byte{0x01, 0x80, 0xff, 0x10, 0x5a}
				for i := range data {
					mask := masks[i%len(masks)]
					bad := slices.Clone(data)
					bad[i] ^= mask
					useFile := i%5 == 0 // through reader.Open (mapped) for some
					r, err := openAny(bad, dir, useFile)
					checkDamaged(t, bad, es, r, err, fmt.Sprintf("byte %d of %d xor %#x (file %v)", i, len(data), mask, useFile))
				}
			})
		}
	}
}

func TestCorruptDataBlock(t *testing.T) {
	for _, v := range tableVersions {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			t.Run(v.name+"/"+c.String(), func(t *testing.T) { corruptDataBlock(t, c, v) })
		}
	}
}

func corruptDataBlock(t *testing.T, c format.Compression, tv tableVersion) {
	es := numbered(300, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("x", i%50)) })
	data, _ := build(t, es, &builder.Options{BlockSize: 512, Compression: c, HashIndex: tv.hash, FormatVersion: tv.fv})
	blocks := dataBlocks(t, data)
	if len(blocks) < 3 {
		t.Fatalf("%d data blocks, want at least 3", len(blocks))
	}
	k := len(blocks) / 2
	bk := blocks[k]
	if c == format.SnappyCompression && bk.Type != format.BlockTypeSnappy {
		t.Fatalf("block %d is not snappy-compressed", k)
	}
	bad := slices.Clone(data)
	bad[bk.Handle.Offset+bk.Handle.Length/2] ^= 0x20
	var before, after []entry
	for _, e := range es {
		switch {
		case e.Key < bk.Keys[0]:
			before = append(before, e)
		case e.Key > bk.Keys[len(bk.Keys)-1]:
			after = append(after, e)
		}
	}
	sources(t, bad, nil, func(t *testing.T, r *reader.Reader) {
		for _, k := range bk.Keys {
			_, err := r.Get([]byte(k))
			ce := wantCorrupt(t, err, len(bad), "checksum")
			if ce.Section != format.SectionDataBlock || ce.Offset != int64(bk.Handle.Offset) {
				t.Fatalf("Get(%q): error at %s offset %d, want data block at %d", k, ce.Section, ce.Offset, bk.Handle.Offset)
			}
		}
		// Other blocks are unaffected.
		for _, e := range append(slices.Clone(before), after...) {
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v; want %q", e.Key, v, err, e.Value)
			}
		}
		fwd, err := scan(r)
		wantCorrupt(t, err, len(bad))
		if diff := cmp.Diff(before, fwd); diff != "" {
			t.Fatalf("forward scan up to the bad block (-want +got):\n%s", diff)
		}
		back, err := scanBack(r)
		wantCorrupt(t, err, len(bad))
		if diff := cmp.Diff(reversed(after), back); diff != "" {
			t.Fatalf("backward scan down to the bad block (-want +got):\n%s", diff)
		}
		it := r.NewIterator()
		if it.SeekGE([]byte(bk.Keys[1])) {
			t.Fatalf("SeekGE into the bad block succeeded")
		}
		wantCorrupt(t, it.Err(), len(bad))
		if it.First() {
			t.Fatalf("First after an error succeeded")
		}
		if err := it.Close(); !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("Iterator.Close = %v, want the iteration error", err)
		}
		wantCorrupt(t, r.Verify(), len(bad), "checksum")
	})
}

// TestVerifyRechecksMappedBlocks damages a block of a mapped file after a
// Get has checked it: Verify must check every block again.
func TestVerifyRechecksMappedBlocks(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testVerifyRechecksMappedBlocks(t, v) })
	}
}

func testVerifyRechecksMappedBlocks(t *testing.T, tv tableVersion) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on writes showing through a shared mapping")
	}
	data, es := smallTableV(t, format.NoCompression, tv)
	path := writeFile(t, t.TempDir(), data)
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Mapped() {
		t.Fatal("not mapped")
	}
	for _, e := range es {
		if _, err := r.Get([]byte(e.Key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	b := dataBlocks(t, data)[1]
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[b.Handle.Offset+1] ^ 0x40}, int64(b.Handle.Offset+1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ce := wantCorrupt(t, r.Verify(), len(data), "checksum")
	if ce.Offset != int64(b.Handle.Offset) {
		t.Fatalf("Verify: error at offset %d, want %d", ce.Offset, b.Handle.Offset)
	}
}

// assemble writes a format version 1 table from hand-made parts: the data
// section (stored blocks with trailers), the index block contents and
// properties, with no filter. The section sizes in p are filled in.
func assemble(data, index []byte, p format.Properties) []byte {
	out := slices.Clone(data)
	var f footer.Footer
	f.Version = format.Version1
	p.FormatVersion = format.Version1
	p.DataSize = uint64(len(out))
	section := filterblock.AppendSection(nil, uint64(len(out)), "", nil)
	f.Filter = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(section))}
	out = codec.AppendTrailer(append(out, section...), section, format.BlockTypeRaw)
	p.FilterSize = uint64(len(section)) + format.BlockTrailerLen
	f.Index = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(index))}
	out = codec.AppendTrailer(append(out, index...), index, format.BlockTypeRaw)
	p.IndexSize = uint64(len(index)) + format.BlockTrailerLen
	props := codec.AppendProperties(nil, &p)
	f.Properties = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(props))}
	out = codec.AppendTrailer(append(out, props...), props, format.BlockTypeRaw)
	return f.Append(out)
}

// indexOf returns index block contents with one entry per handle.
func indexOf(seps []string, hs []format.BlockHandle) []byte {
	w := codec.BlockWriter{RestartInterval: 1}
	for i, h := range hs {
		w.Add([]byte(seps[i]), codec.AppendHandle(nil, h))
	}
	return slices.Clone(w.Finish())
}

func TestAssembledTableReadable(t *testing.T) {
	// The hand assembly used by TestHugeLengths makes valid tables.
	var w codec.BlockWriter
	w.Add([]byte("a"), []byte("apple"))
	contents := w.Finish()
	data := codec.AppendTrailer(slices.Clone(contents), contents, format.BlockTypeRaw)
	table := assemble(data, indexOf([]string{"b"}, []format.BlockHandle{{Offset: 0, Length: uint64(len(contents))}}),
		format.Properties{NumEntries: 1, NumDataBlocks: 1, SmallestKey: []byte("a"), LargestKey: []byte("a"),
			RawKeyBytes: 1, RawValueBytes: 5, Compression: format.NoCompression, MaxBlockSize: uint64(len(contents))})
	sources(t, table, nil, func(t *testing.T, r *reader.Reader) {
		if r.FilterKnown() || !r.MayContain([]byte("zzz")) {
			t.Fatalf("a table without a filter: FilterKnown %v, MayContain(zzz) %v", r.FilterKnown(), r.MayContain([]byte("zzz")))
		}
		if v, err := r.Get([]byte("a")); err != nil || string(v) != "apple" {
			t.Fatalf("Get(a) = %q, %v", v, err)
		}
		if _, err := r.Get([]byte("zzz")); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(zzz): %v, want ErrNotFound", err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHugeLengths gives the reader lengths of about 1 GiB in a small file:
// each must be rejected as corruption without allocating it.
func TestHugeLengths(t *testing.T) {
	const huge = 1 << 30
	valid, _ := smallTable(t, format.SnappyCompression)
	vf, err := footer.Decode(valid[len(valid)-footer.Size:], int64(len(valid)))
	if err != nil {
		t.Fatal(err)
	}
	hugeIndex := vf
	hugeIndex.Index.Length = huge
	hugeProps := vf
	hugeProps.Properties.Length = huge

	var w codec.BlockWriter
	w.Add([]byte("a"), bytes.Repeat([]byte("apple"), 20))
	contents := slices.Clone(w.Finish())
	rawBlock := codec.AppendTrailer(slices.Clone(contents), contents, format.BlockTypeRaw)
	props := format.Properties{NumEntries: 1, NumDataBlocks: 1, SmallestKey: []byte("a"), LargestKey: []byte("a"),
		RawKeyBytes: 1, RawValueBytes: 100, Compression: format.SnappyCompression, MaxBlockSize: uint64(len(contents))}

	// A snappy block whose header claims 1 GiB of decoded bytes.
	lying := binary.AppendUvarint(nil, huge)
	lying = append(lying, 0x00, 'x') // a 1-byte literal
	lyingBlock := codec.AppendTrailer(slices.Clone(lying), lying, format.BlockTypeSnappy)
	lyingProps := props
	lyingProps.MaxBlockSize = 22*uint64(len(lyingBlock)) + 16 // the most the reader accepts

	bigMax := props
	bigMax.MaxBlockSize = huge

	tests := []struct {
		name string
		data []byte
		want string // in the error from Open, or else from Get
	}{
		{"control: valid table", vf.Append(slices.Clone(valid[:len(valid)-footer.Size])), ""},
		{"footer 1 GiB index", hugeIndex.Append(slices.Clone(valid[:len(valid)-footer.Size])), "does not fit"},
		{"footer 1 GiB properties", hugeProps.Append(slices.Clone(valid[:len(valid)-footer.Size])), "does not fit"},
		{"index handle 1 GiB", assemble(rawBlock, indexOf([]string{"b"}, []format.BlockHandle{{Offset: 0, Length: huge}}), props), "outside the data section"},
		{"index handle far offset", assemble(rawBlock, indexOf([]string{"b"}, []format.BlockHandle{{Offset: huge, Length: 10}}), props), "outside the data section"},
		{"snappy claims 1 GiB", assemble(lyingBlock, indexOf([]string{"b"}, []format.BlockHandle{{Offset: 0, Length: uint64(len(lying))}}), lyingProps), "snappy block claims"},
		{"max block size 1 GiB", assemble(rawBlock, indexOf([]string{"b"}, []format.BlockHandle{{Offset: 0, Length: uint64(len(contents))}}), bigMax), "max block size"},
	}
	for _, tc := range tests {
		for _, useFile := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/New", true: "/Open"}[useFile], func(t *testing.T) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				r, err := openAny(tc.data, t.TempDir(), useFile)
				if tc.want == "" { // the control: a valid table
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					if err := r.Verify(); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err == nil {
					defer r.Close()
					_, err = r.Get([]byte("a"))
					if vErr := r.Verify(); !errors.Is(vErr, format.ErrCorrupt) {
						t.Fatalf("Verify: %v, want ErrCorrupt", vErr)
					}
					if _, iErr := scan(r); !errors.Is(iErr, format.ErrCorrupt) {
						t.Fatalf("scan: %v, want ErrCorrupt", iErr)
					}
				}
				wantCorrupt(t, err, len(tc.data), tc.want)
				runtime.ReadMemStats(&after)
				if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
					t.Fatalf("reading a %d-byte table allocated %d bytes", len(tc.data), d)
				}
			})
		}
	}
}

// bitmapPolicy is a test filter policy: a 1024-bit bitmap indexed by the
// CRC-32 of the key. It counts its probes.
type bitmapPolicy struct{ probes atomic.Int64 }

const bitmapName = "test.bitmap1024.crc32"

func (p *bitmapPolicy) Name() string                        { return bitmapName }
func (p *bitmapPolicy) NewGenerator() filterblock.Generator { return &bitmapGenerator{} }
func (p *bitmapPolicy) MayContain(filter, key []byte) bool {
	p.probes.Add(1)
	if len(filter) != 128 {
		return true
	}
	h := crc32.ChecksumIEEE(key) % 1024
	return filter[h/8]&(1<<(h%8)) != 0
}

type bitmapGenerator struct{ hashes []uint32 }

func (g *bitmapGenerator) Add(key []byte) { g.hashes = append(g.hashes, crc32.ChecksumIEEE(key)%1024) }
func (g *bitmapGenerator) Generate(dst []byte) []byte {
	f := make([]byte, 128)
	for _, h := range g.hashes {
		f[h/8] |= 1 << (h % 8)
	}
	g.hashes = g.hashes[:0]
	return append(dst, f...)
}

func TestUnknownFilterPolicy(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testUnknownFilterPolicy(t, v) })
	}
}

func testUnknownFilterPolicy(t *testing.T, tv tableVersion) {
	p := &bitmapPolicy{}
	es := numbered(60, func(i int) string { return fmt.Sprint("v", i) })
	data, props := build(t, es, &builder.Options{Filter: p, BlockSize: 256, HashIndex: tv.hash, FormatVersion: tv.fv})
	if props.FilterPolicy != bitmapName || props.FilterBitsPerKey != 0 {
		t.Fatalf("builder properties: policy %q, %g bits/key", props.FilterPolicy, props.FilterBitsPerKey)
	}
	absent := numbered(1000, func(int) string { return "" })
	for i := range absent {
		absent[i].Key = fmt.Sprintf("absent%04d", i)
	}

	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		p.probes.Store(0)
		if r.FilterKnown() || !r.Properties().FilterUnknown {
			t.Fatalf("unregistered policy: FilterKnown() = %v, Properties().FilterUnknown = %v", r.FilterKnown(), r.Properties().FilterUnknown)
		}
		if got := r.Properties().FilterPolicy; got != bitmapName {
			t.Fatalf("Properties().FilterPolicy = %q, want %q", got, bitmapName)
		}
		for _, e := range absent {
			if !r.MayContain([]byte(e.Key)) {
				t.Fatalf("MayContain(%q) = false without a known filter", e.Key)
			}
			if _, err := r.Get([]byte(e.Key)); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q): %v, want ErrNotFound", e.Key, err)
			}
		}
		for _, e := range es {
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
			}
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		if n := p.probes.Load(); n != 0 {
			t.Fatalf("the unregistered policy was probed %d times", n)
		}
	})

	// Registered (after a nil and another policy): the filter is used.
	opts := &reader.Options{Filters: []filterblock.Policy{nil, filterblock.Bloom(5), p}}
	sources(t, data, opts, func(t *testing.T, r *reader.Reader) {
		p.probes.Store(0)
		if !r.FilterKnown() || r.Properties().FilterUnknown {
			t.Fatalf("registered policy: FilterKnown() = %v, Properties().FilterUnknown = %v", r.FilterKnown(), r.Properties().FilterUnknown)
		}
		for _, e := range es {
			if !r.MayContain([]byte(e.Key)) {
				t.Fatalf("MayContain(%q) = false for a present key", e.Key)
			}
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
			}
		}
		rejected := 0
		for _, e := range absent {
			if !r.MayContain([]byte(e.Key)) {
				rejected++
			}
			if _, err := r.Get([]byte(e.Key)); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q): %v, want ErrNotFound", e.Key, err)
			}
		}
		// 60 keys set at most 60 of 1024 bits.
		if rejected < 800 {
			t.Fatalf("the registered filter rejected only %d of %d absent keys", rejected, len(absent))
		}
		if n := p.probes.Load(); n < int64(len(es)+len(absent)) {
			t.Fatalf("the registered policy was probed %d times", n)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMayContainFalsePositiveRate(t *testing.T) {
	es := numbered(10000, func(int) string { return "" })
	data, _ := build(t, es, &builder.Options{BlockSize: 4096})
	r := openMem(t, data, nil)
	defer r.Close()
	for _, e := range es {
		if !r.MayContain([]byte(e.Key)) {
			t.Fatalf("MayContain(%q) = false for a present key", e.Key)
		}
	}
	const probes = 20000
	fp := 0
	for i := range probes {
		if r.MayContain(fmt.Appendf(nil, "absent%06d", i)) {
			fp++
		}
	}
	// Theory gives about 1% at 10 bits per key.
	if rate := float64(fp) / probes; rate > 0.025 {
		t.Fatalf("false positive rate %.4f at 10 bits per key", rate)
	}
}

func TestEmptyTableReader(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testEmptyTableReader(t, v) })
	}
}

func testEmptyTableReader(t *testing.T, tv tableVersion) {
	data, _ := build(t, nil, &builder.Options{HashIndex: tv.hash, FormatVersion: tv.fv})
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		for _, k := range []string{"", "a", "\xff"} {
			if r.MayContain([]byte(k)) {
				t.Errorf("MayContain(%q) = true on an empty table", k)
			}
			if _, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
				t.Errorf("Get(%q): %v, want ErrNotFound", k, err)
			}
		}
		it := r.NewIterator()
		if it.First() || it.Last() || it.SeekGE(nil) || it.Next() || it.Prev() || it.Valid() || it.Err() != nil {
			t.Errorf("iterator over an empty table moved or failed: %v", it.Err())
		}
		if err := it.Close(); err != nil {
			t.Error(err)
		}
		if err := r.Verify(); err != nil {
			t.Error(err)
		}
		if p := r.Properties(); p.NumEntries != 0 || p.NumDataBlocks != 0 || p.SmallestKey != nil || p.LargestKey != nil {
			t.Errorf("properties of an empty table: %+v", p)
		}
		if p := r.Properties(); p.FormatVersion != tv.version || (p.HashIndexSize != 0) != tv.hasHashIndex() || p.Partitioned {
			t.Errorf("empty table built as %s: format version %d, hash index size %d, partitioned %v", tv.name, p.FormatVersion, p.HashIndexSize, p.Partitioned)
		}
	})
}

// TestGetReturnsCopy checks that Get and GetAppend return values that do
// not alias the file or the reader's buffers.
func TestGetReturnsCopy(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testGetReturnsCopy(t, v) })
	}
}

func testGetReturnsCopy(t *testing.T, tv tableVersion) {
	data, es := smallTableV(t, format.SnappyCompression, tv)
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		var got [][]byte
		for _, e := range es {
			v, err := r.Get([]byte(e.Key))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		// Reading other blocks again must not change earlier results.
		for _, e := range reversed(es) {
			if _, err := r.Get([]byte(e.Key)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		for i, e := range es { // after Close and munmap: must still be readable
			if string(got[i]) != e.Value {
				t.Fatalf("value of %q changed to %q", e.Key, got[i])
			}
		}
	})
}

func TestNoAllocs(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testNoAllocs(t, v, false) })
	}
	// Version 3, partitioned (with the bloom filter; the unknown policy
	// keeps version 1, or 2 with a hash index), without and with a hash
	// index.
	t.Run("v3", func(t *testing.T) { testNoAllocs(t, tableVersions[0], true) })
	t.Run("v3-hash", func(t *testing.T) { testNoAllocs(t, tableVersions[1], true) })
	t.Run("v4 partitioned", func(t *testing.T) { testNoAllocs(t, tableVersions[2], true) })
}

func testNoAllocs(t *testing.T, tv tableVersion, parted bool) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	es := numbered(2000, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("z", i%90)) })
	keys := make([][]byte, len(es))
	for i, e := range es {
		keys[i] = []byte(e.Key)
	}
	// Absent keys between the present ones. The unregistered filter policy
	// lets every one through to the index (or the hash index's probe).
	misses := make([][]byte, 64)
	for i := range misses {
		misses[i] = fmt.Appendf(nil, "key%06dx", 31*i)
	}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		for _, filter := range []string{"bloom", "unknown"} {
			opts := &builder.Options{Compression: c, BlockSize: 1024, HashIndex: tv.hash, FormatVersion: tv.fv}
			if parted {
				opts.PartitionThreshold, opts.PartitionSize = 1, 1024
			}
			if filter == "unknown" {
				opts.Filter = &bitmapPolicy{}
			}
			data, _ := build(t, es, opts)
			t.Run(c.String()+"/"+filter, func(t *testing.T) {
				sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
					if r.FilterKnown() != (filter == "bloom") {
						t.Fatalf("FilterKnown() = %v for the %s filter", r.FilterKnown(), filter)
					}
					buf := make([]byte, 0, 256)
					// Warm up: load the index and filter, size the buffers.
					for _, e := range es {
						if _, err := r.GetAppend(buf[:0], []byte(e.Key)); err != nil {
							t.Fatal(err)
						}
					}
					i, j := 0, 0
					allocs := testing.AllocsPerRun(1000, func() {
						i = (i + 7) % len(keys)
						j = (j + 1) % len(misses)
						v, err := r.GetAppend(buf[:0], keys[i])
						if err != nil || string(v) != es[i].Value {
							t.Fatalf("GetAppend(%q) = %q, %v", keys[i], v, err)
						}
						if !r.MayContain(keys[i]) {
							t.Fatal("MayContain = false for a present key")
						}
						r.MayContain(misses[j])
						if v, err := r.GetAppend(buf[:0], misses[j]); !errors.Is(err, reader.ErrNotFound) || len(v) != 0 {
							t.Fatalf("GetAppend(%q) of an absent key = %q, %v", misses[j], v, err)
						}
					})
					if allocs != 0 {
						t.Fatalf("GetAppend and MayContain allocate %v times per run", allocs)
					}
				})
			})
		}
	}
}

// mappings returns the lines of /proc/self/maps that map path.
func mappings(t *testing.T, path string) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(line, " "+path) {
			n++
		}
	}
	return n
}

func TestClose(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testClose(t, v) })
	}
}

func testClose(t *testing.T, tv tableVersion) {
	data, es := smallTableV(t, format.SnappyCompression, tv)
	for _, useFile := range []bool{false, true} {
		t.Run(map[bool]string{false: "New", true: "Open"}[useFile], func(t *testing.T) {
			path := writeFile(t, t.TempDir(), data)
			var r *reader.Reader
			var err error
			if useFile {
				r, err = reader.Open(path, nil)
			} else {
				r, err = reader.New(bytes.NewReader(data), int64(len(data)), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkMaps := useFile && runtime.GOOS == "linux" && r.Mapped()
			if checkMaps && mappings(t, path) == 0 {
				t.Fatalf("%s is not in /proc/self/maps", path)
			}
			if _, err := r.Get([]byte(es[0].Key)); err != nil {
				t.Fatal(err)
			}
			// An iterator opened before Close keeps the table readable.
			early := r.NewIterator()
			if !early.First() {
				t.Fatal(early.Err())
			}
			props := r.Properties()

			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			for _, e := range es {
				if v, err := r.Get([]byte(e.Key)); !errors.Is(err, reader.ErrClosed) || v != nil {
					t.Fatalf("Get(%q) after Close = %q, %v; want ErrClosed", e.Key, v, err)
				}
			}
			if v, err := r.GetAppend([]byte("dst"), []byte(es[0].Key)); !errors.Is(err, reader.ErrClosed) || string(v) != "dst" {
				t.Fatalf("GetAppend after Close = %q, %v; want dst and ErrClosed", v, err)
			}
			if !r.MayContain([]byte("absent")) || !r.MayContain([]byte(es[0].Key)) {
				t.Fatal("MayContain after Close = false, want true")
			}
			if err := r.Verify(); !errors.Is(err, reader.ErrClosed) {
				t.Fatalf("Verify after Close: %v, want ErrClosed", err)
			}
			late := r.NewIterator()
			for name, move := range map[string]func() bool{
				"First": late.First, "Last": late.Last, "Next": late.Next, "Prev": late.Prev,
				"SeekGE": func() bool { return late.SeekGE([]byte(es[0].Key)) },
			} {
				if move() {
					t.Fatalf("%s on an iterator of a closed reader succeeded", name)
				}
				if !errors.Is(late.Err(), reader.ErrClosed) {
					t.Fatalf("after %s: Err = %v, want ErrClosed", name, late.Err())
				}
			}
			if late.Valid() || late.Key() != nil || late.Value() != nil {
				t.Fatal("iterator of a closed reader is positioned")
			}
			// Close reports the error too, so that the usual loop
			// `for ok := it.First(); ok; ok = it.Next() {}; err := it.Close()`
			// does not mistake a closed reader for an empty table.
			if err := late.Close(); !errors.Is(err, reader.ErrClosed) {
				t.Fatalf("Iterator.Close on a closed reader: %v, want ErrClosed", err)
			}
			if got, err := scan(r); len(got) != 0 || !errors.Is(err, reader.ErrClosed) {
				t.Fatalf("scan of a closed reader: %d entries, %v; want ErrClosed", len(got), err)
			}
			if err := r.Close(); !errors.Is(err, reader.ErrClosed) {
				t.Fatalf("second Close: %v, want an error wrapping ErrClosed", err)
			}
			if diff := cmp.Diff(props, r.Properties()); diff != "" {
				t.Fatalf("Properties changed by Close:\n%s", diff)
			}

			// The early iterator still works, in both directions.
			if checkMaps && mappings(t, path) == 0 {
				t.Fatal("the file was unmapped while an iterator is open")
			}
			got := []entry{{string(early.Key()), string(early.Value())}}
			for early.Next() {
				got = append(got, entry{string(early.Key()), string(early.Value())})
			}
			if diff := cmp.Diff(es, got); diff != "" {
				t.Fatalf("scan by an iterator opened before Close (-want +got):\n%s", diff)
			}
			if !early.Last() || !early.Prev() || string(early.Key()) != es[len(es)-2].Key {
				t.Fatalf("Last/Prev after Close: %q, %v", early.Key(), early.Err())
			}
			if !early.SeekGE([]byte(es[5].Key)) || string(early.Value()) != es[5].Value {
				t.Fatalf("SeekGE after Close: %q, %v", early.Key(), early.Err())
			}
			if err := early.Close(); err != nil {
				t.Fatalf("closing the early iterator: %v", err)
			}
			if err := early.Close(); err != nil {
				t.Fatalf("closing the early iterator twice: %v", err)
			}
			if early.First() || early.Valid() {
				t.Fatal("a closed iterator moved")
			}
			if checkMaps {
				if n := mappings(t, path); n != 0 {
					t.Fatalf("%s still mapped %d times after Close and the last iterator closed", path, n)
				}
			}
		})
	}
}

// TestConcurrentClose runs lookups and scans from 16 goroutines on a mapped
// reader while another goroutine closes it. Every call must either succeed
// with the right result or report ErrClosed; a read of an unmapped page
// would crash the test. The closer waits for the workers' closeAt-th
// operation, and every wait has a deadline: a worker that never sees
// ErrClosed, workers that end before closeAt operations, or a call that
// never returns fail the test with a message rather than hang it.
func TestConcurrentClose(t *testing.T) {
	for round := range 3 {
		for _, v := range tableVersions {
			t.Run(fmt.Sprintf("%s/%d", v.name, round), func(t *testing.T) { concurrentClose(t, round, v) })
		}
	}
}

func concurrentClose(t *testing.T, round int, tv tableVersion) {
	es := numbered(3000, func(i int) string { return fmt.Sprintf("value-%d-%s", i, strings.Repeat("q", i%40)) })
	data, _ := build(t, es, &builder.Options{BlockSize: 512, HashIndex: tv.hash, FormatVersion: tv.fv})
	path := writeFile(t, t.TempDir(), data)
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const guard = time.Minute // a failing test's bound, not a measurement
	var (
		ops       atomic.Int64
		wg        sync.WaitGroup // the workers
		successes atomic.Int64
		closeAt   = int64(500 + 700*round)
		reached   = make(chan struct{}) // closed at the closeAt-th operation
		workers   = make(chan struct{}) // closed when the workers have ended
		closed    = make(chan struct{}) // closed when the closer has ended
		deadline  = time.Now().Add(guard)
	)
	go func() { // the closer
		defer close(closed)
		select {
		case <-reached:
		case <-workers:
			t.Errorf("the workers ended after %d operations, before the %d-th", ops.Load(), closeAt)
		case <-time.After(guard):
			t.Errorf("%d operations in %v, %d wanted before Close", ops.Load(), guard, closeAt)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), uint64(round)))
			sawClosed := 0
			for n := 0; sawClosed < 3; n++ {
				if time.Now().After(deadline) {
					t.Errorf("goroutine %d: reader reported ErrClosed %d times in %v, want 3", g, sawClosed, guard)
					return
				}
				if ops.Add(1) == closeAt {
					close(reached)
				}
				i := rng.IntN(len(es))
				e := es[i]
				switch n % 4 {
				case 0:
					v, err := r.Get([]byte(e.Key))
					switch {
					case err == nil:
						if string(v) != e.Value {
							t.Errorf("Get(%q) = %q, want %q", e.Key, v, e.Value)
							return
						}
						successes.Add(1)
					case errors.Is(err, reader.ErrClosed):
						sawClosed++
					default:
						t.Errorf("Get(%q): %v", e.Key, err)
						return
					}
				case 1:
					if _, err := r.Get([]byte(e.Key + "~")); !errors.Is(err, reader.ErrNotFound) && !errors.Is(err, reader.ErrClosed) {
						t.Errorf("Get of an absent key: %v", err)
						return
					}
				case 2:
					if !r.MayContain([]byte(e.Key)) {
						t.Errorf("MayContain(%q) = false", e.Key)
						return
					}
				case 3:
					it := r.NewIterator()
					j := i
					for ok := it.SeekGE([]byte(e.Key)); ok && j < i+40; ok = it.Next() {
						if string(it.Key()) != es[j].Key || string(it.Value()) != es[j].Value {
							t.Errorf("iterator at %q, %q; want entry %d %q", it.Key(), it.Value(), j, es[j].Key)
							return
						}
						j++
					}
					err := it.Close()
					switch {
					case err == nil:
						if j != min(i+40, len(es)) {
							t.Errorf("scan from %d stopped at %d without an error", i, j)
							return
						}
					case errors.Is(err, reader.ErrClosed):
						if j != i {
							t.Errorf("iterator returned %d entries and then ErrClosed", j-i)
						}
					default:
						t.Errorf("iterator: %v", err)
						return
					}
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(workers)
	}()
	for _, c := range []struct {
		done <-chan struct{}
		what string
	}{{workers, "the workers"}, {closed, "the closer"}} {
		select {
		case <-c.done:
		case <-time.After(time.Until(deadline) + 10*time.Second):
			t.Fatalf("%s still running %v after the start: a call that never returns", c.what, guard+10*time.Second)
		}
	}
	if successes.Load() == 0 {
		t.Error("no Get succeeded before Close")
	}
	if err := r.Close(); !errors.Is(err, reader.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if runtime.GOOS == "linux" {
		if n := mappings(t, path); n != 0 {
			t.Errorf("%s still mapped after Close", path)
		}
	}
}

// TestConcurrentReads checks that concurrent readers sharing the lazily
// loaded index and filter and the pooled buffers see correct results,
// within a deadline.
func TestConcurrentReads(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testConcurrentReads(t, v) })
	}
}

func testConcurrentReads(t *testing.T, tv tableVersion) {
	es := numbered(2000, func(i int) string { return fmt.Sprintf("v%d%s", i, strings.Repeat("w", i%30)) })
	data, _ := build(t, es, &builder.Options{BlockSize: 300, HashIndex: tv.hash, FormatVersion: tv.fv})
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < 300; k++ {
					e := es[(g*131+k*17)%len(es)]
					if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
						t.Errorf("Get(%q) = %q, %v", e.Key, v, err)
						return
					}
				}
				if g%2 == 0 {
					got, err := scan(r)
					if err != nil || !slices.Equal(got, es) {
						t.Errorf("concurrent scan: %d entries, %v", len(got), err)
					}
				} else if err := r.Verify(); err != nil {
					t.Errorf("concurrent Verify: %v", err)
				}
			}()
		}
		// A deadline, not a wait without end: a call that never returns
		// fails the test with a message.
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		const guard = 2 * time.Minute // a failing test's bound, not a measurement
		select {
		case <-done:
		case <-time.After(guard):
			t.Fatalf("concurrent reads still running after %v: a call that never returns", guard)
		}
	})
}

var errIO = errors.New("test: I/O error")

// flakyReaderAt fails reads that start before failBelow once armed.
type flakyReaderAt struct {
	data      []byte
	armed     atomic.Bool
	failBelow int64
}

func (f *flakyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.armed.Load() && off < f.failBelow {
		return 0, errIO
	}
	return bytes.NewReader(f.data).ReadAt(p, off)
}

// TestReadErrors checks that I/O errors from the source are reported as
// such, not as corruption or absence.
func TestReadErrors(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testReadErrors(t, v) })
	}
}

func testReadErrors(t *testing.T, tv tableVersion) {
	data, es := smallTableV(t, format.SnappyCompression, tv)
	src := &flakyReaderAt{data: data, failBelow: int64(len(data))}
	src.armed.Store(true)
	if _, err := reader.New(src, int64(len(data)), nil); !errors.Is(err, errIO) || errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("New over a failing source: %v, want the I/O error", err)
	}

	// Fail only the data blocks, after opening. The tail is the footer
	// alone, so that no data block comes from the tail New read.
	src.armed.Store(false)
	r, err := reader.New(src, int64(len(data)), &reader.Options{TailSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src.failBelow = int64(r.Properties().DataSize)
	src.armed.Store(true)
	for _, e := range es[:5] {
		if _, err := r.Get([]byte(e.Key)); !errors.Is(err, errIO) || errors.Is(err, format.ErrCorrupt) || errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) with failing reads: %v, want the I/O error", e.Key, err)
		}
	}
	if _, err := scan(r); !errors.Is(err, errIO) {
		t.Fatalf("scan with failing reads: %v, want the I/O error", err)
	}
	if err := r.Verify(); !errors.Is(err, errIO) {
		t.Fatalf("Verify with failing reads: %v, want the I/O error", err)
	}
	// The failure is not remembered: reads work again.
	src.armed.Store(false)
	if got, err := scan(r); err != nil || !slices.Equal(got, es) {
		t.Fatalf("scan after the source recovered: %d entries, %v", len(got), err)
	}
}

func TestNewSizeMismatch(t *testing.T) {
	data, _ := smallTable(t, format.NoCompression)
	// A negative size is a bad argument, not a size mismatch:
	// TestNewBadArguments.
	for _, size := range []int64{0, int64(len(data)) + 1, int64(len(data)) + 1000} {
		r, err := reader.New(bytes.NewReader(data), size, nil)
		if err == nil {
			r.Close()
			t.Fatalf("New with size %d of a %d-byte table succeeded", size, len(data))
		}
		// A size past the source's end is a failed read (the source may
		// yet grow, or the read have failed), not damage.
		if !errors.Is(err, format.ErrCorrupt) && !(size > int64(len(data)) && errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("New with size %d: %v, want ErrCorrupt or, past the end, io.ErrUnexpectedEOF", size, err)
		}
	}
}

func TestOpenDirectory(t *testing.T) {
	r, err := reader.Open(t.TempDir(), nil)
	if err == nil {
		r.Close()
		t.Fatal("Open of a directory succeeded")
	}
}

// TestTransientReadErrorNotSticky fails every read during the first uses
// of the index and filter (read on first use: New reads only the footer
// and properties with a tail of 64 bytes): once reads work again, so must
// the reader, filter included.
func TestTransientReadErrorNotSticky(t *testing.T) {
	for _, v := range tableVersions {
		t.Run(v.name, func(t *testing.T) { testTransientReadErrorNotSticky(t, v) })
	}
}

func testTransientReadErrorNotSticky(t *testing.T, tv tableVersion) {
	data, es := smallTableV(t, format.SnappyCompression, tv)
	src := &flakyReaderAt{data: data, failBelow: int64(len(data))}
	r, err := reader.New(src, int64(len(data)), &reader.Options{TailSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src.armed.Store(true)
	if _, err := r.Get([]byte(es[0].Key)); !errors.Is(err, errIO) {
		t.Fatalf("Get with failing reads: %v, want the I/O error", err)
	}
	if !r.MayContain([]byte("absent")) {
		t.Fatal("MayContain = false while the filter cannot be read")
	}
	if _, err := scan(r); !errors.Is(err, errIO) {
		t.Fatalf("scan with failing reads: %v, want the I/O error", err)
	}
	src.armed.Store(false)
	for _, e := range es {
		if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
			t.Fatalf("Get(%q) after reads recovered = %q, %v", e.Key, v, err)
		}
	}
	rejected := 0
	for i := range 100 {
		if !r.MayContain(fmt.Appendf(nil, "absent%d", i)) {
			rejected++
		}
	}
	if rejected < 80 {
		t.Fatalf("after reads recovered the filter rejects only %d of 100 absent keys", rejected)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}
