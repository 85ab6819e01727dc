package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// Limits on the build flags. Larger values only waste memory: the filter
// uses at most 16 probes (about 23 bits per key), and a block is cut as
// soon as it reaches the block size anyway.
const (
	maxBlockSize  = 1 << 30
	maxBitsPerKey = 64
)

// buildEntry is one entry to add: the value is either in memory (text
// input) or in the file at path (directory input), read when it is added.
type buildEntry struct {
	key   []byte
	value []byte // text input
	path  string // directory input: the file holding the value
	line  int    // text input: 1-based line number, for messages
}

// runBuild implements "sst build": it reads INPUT, sorts the entries and
// writes the table, then prints its figures.
func runBuild(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fset.String("o", "", "output table")
	force := fset.Bool("f", false, "replace OUT if it exists")
	blockSize := fset.Int("block-size", builder.DefaultBlockSize, "target data block size in bytes")
	compression := fset.String("compression", "snappy", "snappy, zstd or none")
	level := fset.String("compression-level", "default", "zstd level: fastest, default, better or best")
	filterName := fset.String("filter", "bloom", "filter policy: bloom or fuse8 (binary fuse, 8-bit fingerprints)")
	bitsPerKey := fset.Int("bits-per-key", builder.DefaultBitsPerKey, "bloom filter bits per key")
	hashIndex := fset.Bool("hash-index", false, "add a hash index (format version 2, or 3 when partitioned) for faster Get")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usagef("build: want exactly one INPUT, got %d arguments (usage: sst build -o OUT [flags] INPUT)", len(pos))
	case *out == "":
		return usagef("build: -o OUT is required")
	case *blockSize < 1 || *blockSize > maxBlockSize:
		return usagef("build: -block-size %d out of range [1, %d]", *blockSize, maxBlockSize)
	case *bitsPerKey < 1 || *bitsPerKey > maxBitsPerKey:
		return usagef("build: -bits-per-key %d out of range [1, %d]", *bitsPerKey, maxBitsPerKey)
	}
	opts := &builder.Options{
		BlockSize: *blockSize,
		Filter:    filterblock.Bloom(*bitsPerKey),
		HashIndex: *hashIndex,
	}
	switch *compression {
	case "snappy":
		opts.Compression = format.SnappyCompression
	case "none":
		opts.Compression = format.NoCompression
	case "zstd":
		opts.Compression = format.ZstdCompression
	default:
		return usagef("build: unknown -compression %q (want snappy, zstd or none)", *compression)
	}
	if opts.CompressionLevel, err = format.ParseCompressionLevel(*level); err != nil {
		return usagef("build: unknown -compression-level %q (want fastest, default, better or best)", *level)
	}
	if flagSet(fset, "compression-level") && opts.Compression != format.ZstdCompression {
		// The level is zstd's alone: silently building a snappy table
		// would hide a forgotten -compression zstd.
		return usagef("build: -compression-level applies to zstd only; add -compression zstd (compression is %s)", *compression)
	}
	switch *filterName {
	case "bloom":
	case "fuse8":
		opts.Filter = filterblock.BinaryFuse8()
	default:
		return usagef("build: unknown -filter %q (want bloom or fuse8)", *filterName)
	}
	input := pos[0]

	start := time.Now()
	st, err := os.Stat(input)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if outSt, err := os.Stat(*out); err == nil && !st.IsDir() && os.SameFile(st, outSt) {
		return usagef("build: output %s is the input file", *out)
	}
	// OUT is checked before the work starts; a file created at OUT while
	// the build runs is replaced.
	if outSt, err := os.Lstat(*out); err == nil {
		if outSt.IsDir() {
			return fmt.Errorf("build: %s is a directory, not a table file", *out)
		}
		if !*force {
			return fmt.Errorf("build: %s already exists (use -f to replace it)", *out)
		}
	}
	var entries []buildEntry
	if st.IsDir() {
		entries, err = walkInput(input, *out)
	} else {
		entries, err = readTextInput(input)
	}
	if err != nil {
		return fmt.Errorf("build: %s: %w", input, err)
	}

	props, err := writeTable(*out, opts, entries)
	if err != nil {
		return fmt.Errorf("build: %s: %w", input, err)
	}
	outSt, err := os.Stat(*out)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	elapsed := time.Since(start)

	in := props.RawKeyBytes + props.RawValueBytes
	size := uint64(outSt.Size())
	fmt.Fprintf(stdout, "wrote %s\n", *out)
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

// walkInput lists the regular files under root as entries sorted by key,
// without reading them. The file at out, if it exists under root, is
// skipped.
func walkInput(root, out string) ([]buildEntry, error) {
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a symlinked root; walk its target.
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, err
		}
	}
	outSt, err := os.Stat(out)
	if err != nil {
		outSt = nil
	}
	outBase := filepath.Base(out)
	var entries []buildEntry
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if outSt != nil && d.Name() == outBase {
			if info, err := d.Info(); err == nil && os.SameFile(info, outSt) {
				return nil
			}
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
	return entries, checkDuplicates(entries)
}

// readTextInput reads "key<TAB>value" lines from the file at path and
// returns them as entries sorted by key.
func readTextInput(path string) ([]buildEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []buildEntry
	for n := 1; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else {
			line, data = data, nil
		}
		key, value, _ := bytes.Cut(line, []byte("\t"))
		entries = append(entries, buildEntry{key: key, value: value, line: n})
	}
	slices.SortStableFunc(entries, func(a, b buildEntry) int { return bytes.Compare(a.key, b.key) })
	return entries, checkDuplicates(entries)
}

// checkDuplicates returns an error naming the first key that occurs twice
// in the sorted entries.
func checkDuplicates(entries []buildEntry) error {
	for i := 1; i < len(entries); i++ {
		a, b := &entries[i-1], &entries[i]
		if !bytes.Equal(a.key, b.key) {
			continue
		}
		if a.line > 0 {
			return fmt.Errorf("duplicate key %s (lines %d and %d)", quoteKey(b.key), a.line, b.line)
		}
		return fmt.Errorf("duplicate key %s", quoteKey(b.key))
	}
	return nil
}

// writeTable builds the table at out from the sorted entries, reading
// directory entries one file at a time. On any error, or on an interrupt
// signal, it aborts the build so that no file is left at out.
func writeTable(out string, opts *builder.Options, entries []buildEntry) (format.Properties, error) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)

	b, err := builder.Create(out, opts)
	if err != nil {
		return format.Properties{}, err
	}
	var buf []byte
	for i := range entries {
		select {
		case s := <-sig:
			b.Abort()
			return format.Properties{}, fmt.Errorf("interrupted (%v)", s)
		default:
		}
		e := &entries[i]
		value := e.value
		if e.path != "" {
			if buf, err = readRegular(e.path, buf); err != nil {
				b.Abort()
				return format.Properties{}, err
			}
			value = buf
		}
		if err := b.Add(e.key, value); err != nil {
			b.Abort()
			if errors.Is(err, builder.ErrKeyOrder) {
				return format.Properties{}, fmt.Errorf("duplicate key %s", quoteKey(e.key))
			}
			return format.Properties{}, err
		}
	}
	if err := b.Finish(); err != nil {
		return format.Properties{}, err
	}
	return b.Properties(), nil
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
