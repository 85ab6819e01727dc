package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Limits on the build flags. Larger values only waste memory: the filter
// uses at most 16 probes (about 23 bits per key), and a block is cut as
// soon as it reaches the block size anyway.
const (
	maxBlockSize  = 1 << 30
	maxBitsPerKey = 64
)

// buildEntry is one entry of a directory input: its key, and the file
// holding its value, read when it is added.
type buildEntry struct {
	key   []byte
	value []byte // a value given directly (tests)
	path  string // the file holding the value
}

// runBuild implements "sst build": it reads each INPUT into a bulk.Writer,
// which sorts the entries within the -memory budget, and writes one table
// (or, with -split, a directory of tables and a manifest), then prints
// their figures.
func runBuild(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fset.String("o", "", "output table")
	force := fset.Bool("f", false, "replace OUT if it exists")
	table := addTableFlags(fset)
	hashIndex := fset.Bool("hash-index", false, "write format version 2 (3 when partitioned) with its wide hash index instead of version 4")
	formatVersion := fset.Int("format-version", 0, "format version: 4 (the default, with the compact hash index), or 1 to 3 (the older layouts)")
	memoryFlag := fset.String("memory", "256MiB", "memory budget for sorting: entries held before a sorted run is spilled")
	splitFlag := fset.String("split", "", "write tables of about this size into the directory OUT, with OUT/manifest.json")
	quiet := fset.Bool("q", false, "no progress line on stderr")
	hexFlag := fset.Bool("hex", false, "text input lines are hexkey<TAB>hexvalue")
	spansFlag := fset.String("spans", "", "text file of spans (range deletions): start<TAB>end<TAB>value lines")
	leveldbFlag := fset.Bool("leveldb", false, "INPUT is a LevelDB database directory: convert its live view")
	addLevelDBFlags(fset, stderr)
	rocksdbFlag := fset.Bool("rocksdb", false, "the INPUTs are RocksDB tables, newest first, or INPUT is a RocksDB database directory: convert the view")
	addColumnFamilyFlag(fset)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	memory, err := parseBytes(*memoryFlag)
	if err != nil || memory < 1<<20 {
		return usagef("build: bad -memory %q (want a size of at least 1MiB, such as 256MiB or 2GiB)", *memoryFlag)
	}
	var split int64
	if *splitFlag != "" {
		if split, err = parseBytes(*splitFlag); err != nil || split < 1 {
			return usagef("build: bad -split %q (want a size such as 64MiB)", *splitFlag)
		}
	}
	if err := checkDBFlags("build", fset); err != nil {
		return err
	}
	switch {
	case *rocksdbFlag && len(pos) == 0:
		return usagef("build: -rocksdb: want at least one RocksDB table (usage: sst build -rocksdb NEWEST.sst ... OLDEST.sst -o OUT [-split BYTES] [flags])")
	case len(pos) == 0 && split > 0:
		return usagef("build: want at least one INPUT (usage: sst build -split BYTES -o DIR [flags] INPUT...)")
	case len(pos) != 1 && split == 0 && !*rocksdbFlag:
		return usagef("build: want exactly one INPUT, got %d arguments (usage: sst build -o OUT [flags] INPUT; several INPUTs need -split)", len(pos))
	case *out == "":
		return usagef("build: -o OUT is required")
	case *formatVersion < 0 || *formatVersion > int(format.Version4):
		return usagef("build: -format-version %d out of range [1, %d]", *formatVersion, format.Version4)
	case *hashIndex && *formatVersion == int(format.Version4):
		return usagef("build: -hash-index writes format version 2 or 3, not 4 (whose hash index is always there)")
	case *spansFlag == "-" && slices.Contains(pos, "-"):
		// Standard input can be read once: the entries would take all of
		// it and the spans find none.
		return usagef("build: -spans - and INPUT - both read standard input; give the spans or the entries as a file (./- names a file called \"-\")")
	}
	opts, err := table.options("build", fset)
	if err != nil {
		return err
	}
	opts.HashIndex = *hashIndex
	opts.FormatVersion = uint32(*formatVersion)
	start := time.Now()
	if *rocksdbFlag {
		return buildRocksDB(fset, pos, *out, *force, split, opts, *hexFlag, start, stdout)
	}
	if *leveldbFlag {
		return buildLevelDB(fset, pos, *out, *force, split, opts, *hexFlag, start, stdout)
	}
	var inputs []buildInput
	for i, in := range pos {
		if in == "-" {
			if slices.Contains(pos[:i], "-") {
				return usagef("build: standard input (-) given twice")
			}
			inputs = append(inputs, buildInput{path: in})
			continue
		}
		st, err := os.Stat(in)
		if err != nil {
			return cmdErr("build", err)
		}
		if outSt, err := os.Stat(*out); err == nil && !st.IsDir() && os.SameFile(st, outSt) {
			return usagef("build: output %s is the input file", *out)
		}
		if st.IsDir() && *hexFlag {
			return usagef("build: -hex reads text input; %s is a directory", in)
		}
		inputs = append(inputs, buildInput{path: in, dir: st.IsDir()})
	}
	cfg := buildConfig{opts: opts, memory: memory, split: split, hex: *hexFlag, spans: *spansFlag}
	if cfg.spans != "" && (opts.HashIndex || opts.FormatVersion != 0 && opts.FormatVersion != format.Version4) {
		return usagef("build: -spans needs format version 4 (spans make a table version 5): drop -format-version and -hash-index")
	}
	if !*quiet {
		cfg.progress = progressWriter(stderr)
	}
	if split > 0 {
		return runSplitBuild(*out, *force, cfg, inputs, start, stdout)
	}
	// OUT is checked before the work starts; a file created at OUT while
	// the build runs is replaced.
	if outSt, err := os.Lstat(*out); err == nil {
		if outSt.IsDir() {
			return fmt.Errorf("build: %s is a directory, not a table file (use -split to write a directory of tables)", *out)
		}
		if !*force {
			return fmt.Errorf("build: %s already exists (use -f to replace it)", *out)
		}
	}
	if err := buildTable(*out, cfg, inputs); err != nil {
		return cmdErr("build", err)
	}
	return printBuilt(*out, start, stdout)
}

// printBuilt prints the figures of the table a build wrote to out.
func printBuilt(out string, start time.Time, stdout io.Writer) error {
	r, err := reader.Open(out, &reader.Options{NoMmap: true})
	if err != nil {
		return cmdErr("build", err)
	}
	props := r.Properties()
	size := uint64(r.Size())
	r.Close()
	elapsed := time.Since(start)

	in := props.RawKeyBytes + props.RawValueBytes
	fmt.Fprintf(stdout, "wrote %s\n", out)
	fmt.Fprintf(stdout, "entries:           %d\n", props.NumEntries)
	fmt.Fprintf(stdout, "data blocks:       %d\n", props.NumDataBlocks)
	fmt.Fprintf(stdout, "bytes in:          %d (%s; keys %d, values %d)\n", in, humanBytes(in), props.RawKeyBytes, props.RawValueBytes)
	fmt.Fprintf(stdout, "bytes out:         %d (%s)\n", size, humanBytes(size))
	fmt.Fprintf(stdout, "compression ratio: %.3f (in/out, %s)\n", float64(in)/float64(size), props.Compression)
	filterBits := fmt.Sprintf("%g bits/key", props.FilterBitsPerKey)
	if props.FilterBitsPerKey == 0 && props.NumEntries > 0 { // a policy not sized in bits per key
		filterBits = fmt.Sprintf("%s, %.2f bits/key", props.FilterPolicy, 8*float64(props.FilterSize)/float64(props.NumEntries))
	}
	fmt.Fprintf(stdout, "filter size:       %d (%s, %s)\n", props.FilterSize, humanBytes(props.FilterSize), filterBits)
	fmt.Fprintf(stdout, "elapsed:           %s\n", elapsed.Round(time.Millisecond))
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runSplitBuild writes the tables of a -split build into the directory
// out and prints their figures. An earlier build in out is an error unless
// force is set; it is replaced only once the new build is complete.
func runSplitBuild(out string, force bool, cfg buildConfig, inputs []buildInput, start time.Time, stdout io.Writer) error {
	created := false
	st, err := os.Lstat(out)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("build: -split: %s is not a directory", out)
	case err == nil:
		files, err := buildFiles(out)
		if err != nil {
			return cmdErr("build", err)
		}
		if len(files) > 0 && !force {
			return fmt.Errorf("build: %s already holds %s from an earlier build (use -f to replace it)", out, files[0])
		}
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(out, 0o777); err != nil {
			return cmdErr("build", err)
		}
		created = true
	default:
		return cmdErr("build", err)
	}
	tables, err := buildSplit(out, cfg, inputs)
	if err != nil {
		if created {
			os.Remove(out) // created for this build, and empty after the failure
		}
		return cmdErr("build", err)
	}
	var entries, size int64
	for _, t := range tables {
		entries += t.Entries
		size += t.Size
	}
	fmt.Fprintf(stdout, "wrote %d tables to %s (%s)\n", len(tables), out, filepath.Join(out, bulk.ManifestName))
	fmt.Fprintf(stdout, "entries:           %d\n", entries)
	fmt.Fprintf(stdout, "bytes out:         %d (%s)\n", size, humanBytes(uint64(size)))
	form := keyForm{hex: cfg.hex}
	for _, t := range tables {
		fmt.Fprintf(stdout, "  %s  %d entries  %s  %s .. %s\n", filepath.Base(t.Path), t.Entries, humanBytes(uint64(t.Size)), form.show(t.Smallest), form.show(t.Largest))
	}
	fmt.Fprintf(stdout, "elapsed:           %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// walkInput lists the regular files under root as entries sorted by key,
// without reading them. The files and directories at the paths in skip
// that lie under root (the output, the working directory) are skipped.
func walkInput(root string, skip []string) ([]buildEntry, error) {
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a symlinked root; walk its target.
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, err
		}
	}
	// By base name first, to stat only the candidates.
	skipped := map[string][]os.FileInfo{}
	for _, p := range skip {
		if st, err := os.Stat(p); err == nil {
			skipped[filepath.Base(p)] = append(skipped[filepath.Base(p)], st)
		}
	}
	isSkipped := func(d fs.DirEntry) bool {
		for _, st := range skipped[d.Name()] {
			if info, err := d.Info(); err == nil && os.SameFile(info, st) {
				return true
			}
		}
		return false
	}
	var entries []buildEntry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && isSkipped(d) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || isSkipped(d) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		entries = append(entries, buildEntry{key: []byte(filepath.ToSlash(rel)), path: path})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b buildEntry) int { return bytes.Compare(a.key, b.key) })
	return entries, nil
}

// readRegular reads the regular file at path into buf, reusing its
// capacity, and returns the contents.
func readRegular(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return buf, err
	}
	if !st.Mode().IsRegular() {
		return buf, fmt.Errorf("%s: no longer a regular file", path)
	}
	// One spare byte lets a file of the expected size end without a regrow.
	if want := st.Size() + 1; int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// humanBytes renders n bytes in binary units, e.g. "1.5 MiB".
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// tableFlags are the flags that choose how the tables a command writes
// are laid out: build's and compact's.
type tableFlags struct {
	blockSize, bitsPerKey            *int
	compression, level, dict, filter *string
}

// addTableFlags defines the table flags in fset.
func addTableFlags(fset *flag.FlagSet) *tableFlags {
	return &tableFlags{
		blockSize:   fset.Int("block-size", builder.DefaultBlockSize, "target data block size in bytes"),
		compression: fset.String("compression", "snappy", "snappy, minlz, zstd or none"),
		level:       fset.String("compression-level", "default", "zstd or minlz level: fastest, default, better or best"),
		dict:        fset.String("dict", "0", "zstd dictionary size trained from the table's first blocks (e.g. 16KiB; 0 for none); with -compression zstd"),
		filter:      fset.String("filter", "bloom", "filter policy: bloom or fuse8 (binary fuse, 8-bit fingerprints)"),
		bitsPerKey:  fset.Int("bits-per-key", builder.DefaultBitsPerKey, "bloom filter bits per key"),
	}
}

// options returns the builder options the table flags of fset ask for,
// or a usage error of the command cmd.
func (f *tableFlags) options(cmd string, fset *flag.FlagSet) (*builder.Options, error) {
	switch {
	case *f.blockSize < 1 || *f.blockSize > maxBlockSize:
		return nil, usagef("%s: -block-size %d out of range [1, %d]", cmd, *f.blockSize, maxBlockSize)
	case *f.bitsPerKey < 1 || *f.bitsPerKey > maxBitsPerKey:
		return nil, usagef("%s: -bits-per-key %d out of range [1, %d]", cmd, *f.bitsPerKey, maxBitsPerKey)
	}
	opts := &builder.Options{
		BlockSize: *f.blockSize,
		Filter:    filterblock.Bloom(float64(*f.bitsPerKey)),
	}
	switch *f.compression {
	case "snappy":
		opts.Compression = format.SnappyCompression
	case "none":
		opts.Compression = format.NoCompression
	case "zstd":
		opts.Compression = format.ZstdCompression
	case "minlz":
		opts.Compression = format.MinLZCompression
	default:
		return nil, usagef("%s: unknown -compression %q (want snappy, minlz, zstd or none)", cmd, *f.compression)
	}
	if d, err := parseBytes(*f.dict); err != nil || d < 0 || d > builder.MaxDictionarySize {
		return nil, usagef("%s: bad -dict %q (want a size such as 16KiB, at most %d bytes, or 0 for none)", cmd, *f.dict, builder.MaxDictionarySize)
	} else {
		opts.DictionarySize = int(d)
	}
	if opts.DictionarySize != 0 && opts.Compression != format.ZstdCompression {
		return nil, usagef("%s: -dict applies to zstd only; add -compression zstd (compression is %s)", cmd, *f.compression)
	}
	var err error
	if opts.CompressionLevel, err = format.ParseCompressionLevel(*f.level); err != nil {
		return nil, usagef("%s: unknown -compression-level %q (want fastest, default, better or best)", cmd, *f.level)
	}
	if flagSet(fset, "compression-level") && opts.Compression != format.ZstdCompression && opts.Compression != format.MinLZCompression {
		// The level is zstd's and MinLZ's alone: silently writing a
		// snappy table would hide a forgotten -compression zstd.
		return nil, usagef("%s: -compression-level applies to zstd and minlz only; add -compression zstd (compression is %s)", cmd, *f.compression)
	}
	switch *f.filter {
	case "bloom":
	case "fuse8":
		opts.Filter = filterblock.BinaryFuse8()
	default:
		return nil, usagef("%s: unknown -filter %q (want bloom or fuse8)", cmd, *f.filter)
	}
	return opts, nil
}
