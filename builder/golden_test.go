package builder_test

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.sst from testdata/golden/input.txt")

const goldenDir = "../testdata/golden"

// goldenTables are the committed tables and the fixed options that build
// them from input.txt. Changing the format or these options changes the
// bytes; regenerate deliberately with go test ./builder -run Golden -update.
var goldenTables = []struct {
	file    string
	opts    builder.Options
	entries bool              // built from input.txt; false: an empty table
	user    map[string][]byte // user properties
}{
	{"snappy.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), FormatVersion: format.Version1}, true, nil},
	{"none.sst", builder.Options{BlockSize: 512, RestartInterval: 16, Compression: format.NoCompression, Filter: filterblock.Bloom(10), FormatVersion: format.Version1}, true, nil},
	{"empty.sst", builder.Options{FormatVersion: format.Version1}, false, nil},
	{"hashindex.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), HashIndex: true}, true, nil},
	// zstd.sst pins the block encoding of github.com/klauspost/compress
	// at the version in go.mod: a new version may encode differently
	// (any valid frame decodes the same), which calls for -update.
	{"zstd.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.ZstdCompression, Filter: filterblock.Bloom(10), FormatVersion: format.Version1}, true, nil},
	{"fuse.sst", builder.Options{BlockSize: 512, RestartInterval: 16, Compression: format.NoCompression, Filter: filterblock.BinaryFuse8(), FormatVersion: format.Version1}, true, nil},
	// prefix.sst pins a table with a splitter (properties tag 20; filter
	// and hash index over prefixes) and user properties (tag 21).
	{"prefix.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), HashIndex: true, Splitter: format.Suffix(4)}, true,
		map[string][]byte{"app.tombstones": {3}, "app.empty": {}, "z": []byte("last\x00value")}},
	// Version 3: partitioned index and filter, forced on this small table
	// by a threshold of 1 byte, in partitions of about 256 bytes.
	{"partitioned.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), PartitionThreshold: 1, PartitionSize: 256, FormatVersion: format.Version1}, true, nil},
	// prefixparted.sst: version 3 with a splitter (each partition's
	// filter over its keys' prefixes), zstd blocks and user properties.
	{"prefixparted.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.ZstdCompression, Filter: filterblock.Bloom(10), Splitter: format.Suffix(4), PartitionThreshold: 1, PartitionSize: 256, FormatVersion: format.Version1}, true,
		map[string][]byte{"app.level": {6}}},
	// hashparted.sst: version 3 with a hash index (hashindex.sst's
	// options, partitioned as partitioned.sst is): the hash index section
	// between the data blocks and the partitions, covering every block.
	{"hashparted.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), HashIndex: true, PartitionThreshold: 1, PartitionSize: 256}, true, nil},
	// Version 4, the default: entries sharing their block's first key and
	// the compact hash index, one-level (snappy and none), partitioned
	// (the hash index section carrying the whole filter), with a splitter
	// (slots and filter over prefixes; zstd, partitioned), and empty.
	{"v4.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10)}, true, nil},
	{"v4none.sst", builder.Options{BlockSize: 512, RestartInterval: 16, Compression: format.NoCompression, Filter: filterblock.Bloom(10)}, true, nil},
	{"v4parted.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), PartitionThreshold: 1, PartitionSize: 256}, true, nil},
	{"v4prefix.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.ZstdCompression, Filter: filterblock.Bloom(10), Splitter: format.Suffix(4), PartitionThreshold: 1, PartitionSize: 256}, true,
		map[string][]byte{"app.level": {6}}},
	{"v4empty.sst", builder.Options{}, false, nil},
	// minlz.sst pins MinLZ blocks (type 3, compression 4) in a version 4
	// table, and zstddict.sst a zstd dictionary (tag 28) and blocks
	// encoded with it (type 4). Like zstd.sst, they pin the encoders of
	// github.com/minio/minlz and github.com/klauspost/compress (and its
	// dictionary trainer) at the versions in go.mod.
	{"minlz.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.MinLZCompression, Filter: filterblock.Bloom(10)}, true, nil},
	{"zstddict.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.ZstdCompression, DictionarySize: 256, Filter: filterblock.Bloom(10)}, true, nil},
	// Version 5: v4.sst and v4parted.sst with the overlapping spans of
	// spans.txt, fragmented into a span block after the index block (the
	// top-level index), and a table of spans alone (goldenSpans: the
	// tables whose names start with v5).
	{"v5.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10)}, true, nil},
	{"v5parted.sst", builder.Options{BlockSize: 256, RestartInterval: 4, Compression: format.SnappyCompression, Filter: filterblock.Bloom(10), PartitionThreshold: 1, PartitionSize: 256}, true, nil},
	{"v5spansonly.sst", builder.Options{}, false, nil},
}

// goldenSpans reports whether golden table file holds the spans of
// spans.txt.
func goldenSpans(file string) bool { return strings.HasPrefix(file, "v5") }

// readGoldenSpans parses spans.txt: one "start<TAB>end<TAB>value" span
// per line, in non-decreasing start order.
func readGoldenSpans(t *testing.T) [][3]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, "spans.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][3]string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("spans.txt: line %q has %d fields, want 3", line, len(f))
		}
		out = append(out, [3]string{f[0], f[1], f[2]})
	}
	return out
}

// checkGoldenSpans checks a golden table's fragments against a brute
// force over spans.txt at every span bound and the keys around them.
func checkGoldenSpans(t *testing.T, r *reader.Reader, spans [][3]string) {
	t.Helper()
	var probes []string
	for _, s := range spans {
		probes = append(probes, s[0], s[1], s[0]+"\x00", s[1]+"\x00", s[1][:len(s[1])-1])
	}
	for _, k := range probes {
		var want [][]byte
		for _, s := range spans {
			if s[0] <= k && k < s[1] {
				want = append(want, []byte(s[2]))
			}
		}
		sp, err := r.SpanAt([]byte(k))
		switch {
		case len(want) == 0 && err != reader.ErrNotFound:
			t.Fatalf("SpanAt(%q) = %q, %v; want ErrNotFound", k, sp, err)
		case len(want) > 0 && (err != nil || !cmp.Equal(want, sp.Values) || string(sp.Start) > k || k >= string(sp.End)):
			t.Fatalf("SpanAt(%q) = %q, %v; want values %q", k, sp, err, want)
		}
	}
	if p := r.Properties(); p.NumSpans != uint64(len(spans)) || p.FormatVersion != format.Version5 {
		t.Fatalf("%d spans, version %d; want %d, 5", p.NumSpans, p.FormatVersion, len(spans))
	}
}

// goldenReaderOpts let readers of the golden tables use the binary fuse
// filter, which package reader does not know by default.
var goldenReaderOpts = &reader.Options{Filters: []filterblock.Policy{filterblock.BinaryFuse8()}}

type kv struct{ Key, Value string }

// readGoldenInput parses input.txt: one "key<TAB>value" entry per line.
func readGoldenInput(t *testing.T) []kv {
	t.Helper()
	f, err := os.Open(filepath.Join(goldenDir, "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []kv
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := bytes.Cut(sc.Bytes(), []byte{'\t'})
		out = append(out, kv{string(k), string(v)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGolden(t *testing.T) {
	input := readGoldenInput(t)
	spans := readGoldenSpans(t)
	for _, g := range goldenTables {
		t.Run(g.file, func(t *testing.T) {
			var buf bytes.Buffer
			opts := g.opts
			b := builder.New(&buf, &opts)
			if g.entries {
				for _, e := range input {
					if err := b.Add([]byte(e.Key), []byte(e.Value)); err != nil {
						t.Fatal(err)
					}
				}
			}
			for k, v := range g.user {
				if err := b.SetUserProperty(k, v); err != nil {
					t.Fatal(err)
				}
			}
			if goldenSpans(g.file) {
				for _, s := range spans {
					if err := b.AddSpan([]byte(s[0]), []byte(s[1]), []byte(s[2])); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(goldenDir, g.file)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./builder -run Golden -update to create it)", err)
			}
			got := buf.Bytes()
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("builder output differs from %s at byte offset %d (built %d bytes, golden %d bytes)", path, i, len(got), len(want))
			}

			r, err := reader.Open(path, goldenReaderOpts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			var wantEntries, gotEntries []kv
			if g.entries {
				wantEntries = input
			}
			it := r.NewIterator()
			for ok := it.First(); ok; ok = it.Next() {
				gotEntries = append(gotEntries, kv{string(it.Key()), string(it.Value())})
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantEntries, gotEntries); diff != "" {
				t.Fatalf("scan of %s (-want +got):\n%s", path, diff)
			}
			for _, e := range wantEntries {
				v, err := r.Get([]byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %q, %v; want %q", e.Key, v, err, e.Value)
				}
			}
			if _, err := r.Get([]byte("fruit/zzz")); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get of absent key: %v, want ErrNotFound", err)
			}
			if p := r.Properties(); p.NumEntries != uint64(len(wantEntries)) {
				t.Fatalf("NumEntries = %d, want %d", p.NumEntries, len(wantEntries))
			}
			if p := r.Properties(); g.opts.Filter != nil && (p.FilterPolicy != g.opts.Filter.Name() || p.FilterUnknown) ||
				g.opts.Compression != format.DefaultCompression && p.Compression != g.opts.Compression {
				t.Fatalf("filter policy %q (unknown %v), compression %v; built with %s, %v", p.FilterPolicy, p.FilterUnknown, p.Compression, g.opts.Filter.Name(), g.opts.Compression)
			}
			for _, e := range wantEntries {
				if !r.MayContain([]byte(e.Key)) {
					t.Fatalf("MayContain(%q) = false", e.Key)
				}
			}
			wantVersion := format.Version1
			v4 := g.opts.FormatVersion == 0 && !g.opts.HashIndex
			switch {
			case v4 && goldenSpans(g.file):
				wantVersion = format.Version5
			case v4:
				wantVersion = format.Version4
			case g.opts.PartitionThreshold > 0:
				wantVersion = format.Version3
			case g.opts.HashIndex:
				wantVersion = format.Version2
			}
			if g.opts.HashIndex && g.opts.Splitter == nil { // Verify checked a prefix hash index
				var ps []pair
				for _, e := range wantEntries {
					ps = append(ps, pair{e.Key, e.Value})
				}
				checkHashIndexTable(t, want, r.Properties(), ps)
			}
			if p := r.Properties(); len(g.user) > 0 && !cmp.Equal(p.User, g.user) || len(g.user) == 0 && p.User != nil {
				t.Fatalf("user properties %q, want %q", p.User, g.user)
			}
			if g.opts.Splitter != nil {
				checkGoldenPrefixes(t, r, g.opts.Splitter, wantEntries)
			}
			if goldenSpans(g.file) {
				checkGoldenSpans(t, r, spans)
			} else if _, err := r.SpanAt(nil); err != reader.ErrNotFound {
				t.Fatalf("SpanAt in a table without spans: %v", err)
			}
			if p := r.Properties(); p.FormatVersion != wantVersion || (p.HashIndexSize != 0) != (g.opts.HashIndex || v4) || p.Partitioned != (v4 && g.opts.PartitionThreshold > 0 && g.entries) {
				t.Fatalf("format version %d, hash index size %d, partitioned %v; want version %d", p.FormatVersion, p.HashIndexSize, p.Partitioned, wantVersion)
			}
		})
	}
}

// checkGoldenPrefixes checks a golden table with a splitter: every
// prefix is in the filter and SeekPrefixGE finds its first entry.
func checkGoldenPrefixes(t *testing.T, r *reader.Reader, sp format.Splitter, es []kv) {
	t.Helper()
	if got := r.Properties().Splitter; got != sp.Name() {
		t.Fatalf("splitter %q, want %q", got, sp.Name())
	}
	it := r.NewIterator()
	defer it.Close()
	for i, e := range es {
		k := []byte(e.Key)
		prefix := k[:sp.Split(k)]
		if !r.MayContainPrefix(prefix) {
			t.Fatalf("MayContainPrefix(%q) = false", prefix)
		}
		if i > 0 && bytes.HasPrefix([]byte(es[i-1].Key), prefix) && sp.Split([]byte(es[i-1].Key)) == len(prefix) {
			continue // not the prefix's first entry
		}
		if !it.SeekPrefixGE(prefix, prefix) || string(it.Key()) != e.Key {
			t.Fatalf("SeekPrefixGE(%q) at %q, want %q (%v)", prefix, it.Key(), e.Key, it.Err())
		}
	}
}
