package builder_test

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// sizedPolicy is the default Bloom filter reporting another bits per key.
type sizedPolicy struct {
	filterblock.Policy
	bpk float64
}

func (p sizedPolicy) BitsPerKey() float64 { return p.bpk }

// badOptions are invalid options, each with the field its error must name.
var badOptions = []struct {
	name  string
	opts  builder.Options
	field string
}{
	{"compression 42", builder.Options{Compression: 42}, "Options.Compression"},
	{"compression -1", builder.Options{Compression: -1}, "Options.Compression"},
	{"zstd level 9", builder.Options{Compression: format.ZstdCompression, CompressionLevel: 9}, "Options.CompressionLevel"},
	{"snappy level 9", builder.Options{CompressionLevel: 9}, "Options.CompressionLevel"},
	{"level -1", builder.Options{Compression: format.ZstdCompression, CompressionLevel: -1}, "Options.CompressionLevel"},
	{"format version 9", builder.Options{FormatVersion: 9}, "Options.FormatVersion 9: want 0 (default), 1, 2, 3 or 4"},
	{"format version 5", builder.Options{FormatVersion: format.Version + 1}, "Options.FormatVersion"},
	{"hash index in version 4", builder.Options{HashIndex: true, FormatVersion: format.Version4}, "Options.HashIndex"},
	{"block size over 1 GiB", builder.Options{BlockSize: builder.MaxBlockSize + 1}, "Options.BlockSize"},
	{"block size over 1 GiB, version 1", builder.Options{BlockSize: builder.MaxBlockSize + 1, FormatVersion: format.Version1}, "Options.BlockSize"},
	{"filter name too long", builder.Options{Filter: namedPolicy{filterblock.Bloom(10), strings.Repeat("n", filterblock.MaxNameLen+1)}}, "Options.Filter"},
	{"empty filter name", builder.Options{Filter: emptyNamed{filterblock.Bloom(10)}}, "Options.Filter"},
	{"bits per key NaN", builder.Options{Filter: sizedPolicy{filterblock.Bloom(10), math.NaN()}}, "Options.Filter"},
	{"bits per key +Inf", builder.Options{Filter: sizedPolicy{filterblock.Bloom(10), math.Inf(1)}}, "Options.Filter"},
	{"bits per key -1", builder.Options{Filter: sizedPolicy{filterblock.Bloom(10), -1}}, "Options.Filter"},
	{"bits per key over the maximum", builder.Options{Filter: sizedPolicy{filterblock.Bloom(10), builder.MaxBitsPerKey + 1}}, "Options.Filter"},
	{"splitter Suffix(-1)", builder.Options{Splitter: format.Suffix(-1)}, "Options.Splitter"},
	{"splitter without a name", builder.Options{Splitter: namedSplitter{format.Suffix(2), ""}}, "Options.Splitter"},
}

// namedSplitter is a splitter under another name.
type namedSplitter struct {
	format.Splitter
	name string
}

func (s namedSplitter) Name() string { return s.name }

// TestInvalidOptions: every invalid option is reported by Validate, by
// Create before any file exists, and by New before anything is written,
// with an error naming the field.
func TestInvalidOptions(t *testing.T) {
	for _, c := range badOptions {
		t.Run(c.name, func(t *testing.T) {
			err := c.opts.Validate()
			if err == nil || !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Validate: %v, want one line naming %s", err, c.field)
			}

			dir := t.TempDir()
			b, cerr := builder.Create(filepath.Join(dir, "t.sst"), &c.opts)
			if cerr == nil || b != nil || cerr.Error() != err.Error() {
				t.Fatalf("Create: %v, %v; want nil and %v", b, cerr, err)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Fatalf("Create with a bad option left %q", names)
			}

			var buf bytes.Buffer
			nb := builder.New(&buf, &c.opts)
			if aerr := nb.Add([]byte("a"), []byte("1")); aerr == nil || aerr.Error() != err.Error() {
				t.Fatalf("Add: %v, want %v", aerr, err)
			}
			if ferr := nb.Finish(); ferr == nil || ferr.Error() != err.Error() {
				t.Fatalf("Finish: %v, want %v", ferr, err)
			}
			if buf.Len() != 0 {
				t.Fatalf("New with a bad option wrote %d bytes", buf.Len())
			}
		})
	}
}

// TestValidOptionsAtTheirLimits: the boundary values of each option
// build tables that read back.
func TestValidOptionsAtTheirLimits(t *testing.T) {
	ps := pairs(300, func(i int) string { return strings.Repeat("v", i%50) })
	for name, opts := range map[string]*builder.Options{
		"nil":                       nil,
		"negative sizes":            {BlockSize: -1, RestartInterval: -1, PartitionSize: -1},
		"negative threshold":        {PartitionThreshold: -1},
		"largest block size":        {BlockSize: builder.MaxBlockSize},
		"level ignored with snappy": {CompressionLevel: format.LevelBest},
		"zstd best":                 {Compression: format.ZstdCompression, CompressionLevel: format.LevelBest},
		"version 1 with hash index": {FormatVersion: format.Version1, HashIndex: true},
		"version 3 with hash index": {FormatVersion: format.Version3, HashIndex: true},
		"version 2":                 {FormatVersion: format.Version2},
		"version 4":                 {FormatVersion: format.Version4},
		"largest bits per key":      {Filter: filterblock.Bloom(builder.MaxBitsPerKey)},
		"zero bits per key":         {Filter: sizedPolicy{filterblock.Bloom(10), 0}},
		"suffix splitter":           {Splitter: format.Suffix(1)},
	} {
		t.Run(name, func(t *testing.T) {
			if err := opts.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			data, _ := buildPairs(t, ps, opts)
			got, _ := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}
