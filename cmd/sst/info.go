package main

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// runInfo implements "sst info": it prints the properties and the
// offset and size of every section of the file.
func runInfo(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("info", flag.ContinueOnError)
	hexFlag := fset.Bool("hex", false, "print the smallest and largest keys in hex")
	leveldbFlag := fset.Bool("leveldb", false, "FILE is a LevelDB database directory: print its levels and tables")
	addLevelDBFlags(fset, stderr)
	rocksdbFlag := fset.Bool("rocksdb", false, "FILE is a RocksDB database directory: print its column families, levels and tables")
	cfFlag := addColumnFamilyFlag(fset)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if err := checkDBFlags("info", fset); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("info: want exactly one FILE, got %d arguments (usage: sst info [-hex] FILE)", len(pos))
	}
	if *leveldbFlag {
		return infoLevelDBDir(pos[0], *hexFlag, stdout)
	}
	if *rocksdbFlag {
		return infoRocksDBDir(pos[0], *cfFlag, flagSet(fset, "cf"), *hexFlag, stdout)
	}
	switch tableFormatOf(pos[0]) {
	case formatLevelDB:
		return infoLevelDB(pos[0], *hexFlag, stdout)
	case formatRocksDB:
		return infoRocksDB(pos[0], *hexFlag, stdout)
	}
	r, err := reader.Open(pos[0], nil)
	if err != nil {
		return dirHint("info", pos[0], err)
	}
	defer r.Close()
	p := r.Properties()
	f := r.Footer()
	size := uint64(r.Size())

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "file: %s\n\nproperties:\n", pos[0])
	// Properties.String quotes keys with %q, which shows valid UTF-8 as
	// runes and other bytes as escapes: the two key lines are redone with
	// quoteBytes (byte by byte), or in hex.
	showKey := quoteBytes
	if *hexFlag {
		showKey = hex.EncodeToString
	}
	keyLines := map[string][]byte{"smallest key:": p.SmallestKey, "largest key:": p.LargestKey, "smallest span key:": p.SmallestSpanKey, "largest span end:": p.LargestSpanKey}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(p.String(), "\n"), "\n") {
		label, _, _ := strings.Cut(line, ":")
		if k, ok := keyLines[label+":"]; ok {
			line = fmt.Sprintf("%-20s%s\n", label+":", showKey(k))
		}
		fmt.Fprintf(w, "  %s", line)
	}
	fmt.Fprintf(w, "\n\nlayout (bytes; sizes include the %d-byte block trailers):\n", format.BlockTrailerLen)
	fmt.Fprintf(w, "  %-18s %12s %12s %12s\n", "section", "offset", "size", "end")
	section := func(name string, off, n uint64) {
		fmt.Fprintf(w, "  %-18s %12d %12d %12d\n", name, off, n, off+n)
	}
	onDisk := func(h format.BlockHandle) uint64 { return h.Length + format.BlockTrailerLen }
	section("data blocks", 0, p.DataSize)
	if p.HashIndexSize > 0 {
		section("hash index", p.DataSize, p.HashIndexSize)
	}
	if f.Version == format.Version3 || p.Partitioned {
		section("partitions", f.Filter.Offset, onDisk(f.Filter))
		section("top-level index", f.Index.Offset, onDisk(f.Index))
	} else {
		section("filter section", f.Filter.Offset, onDisk(f.Filter))
		section("index block", f.Index.Offset, onDisk(f.Index))
	}
	if p.SpanBlockSize > 0 {
		section("span block", f.Index.End(), p.SpanBlockSize)
	}
	section("properties block", f.Properties.Offset, onDisk(f.Properties))
	section("footer", size-footer.Size, footer.Size)
	fmt.Fprintf(w, "  %-18s %12s %12d\n", "file size", "", size)
	known := "yes"
	if !r.FilterKnown() {
		known = "no (lookups cannot skip absent keys)"
	}
	fmt.Fprintf(w, "\nfilter policy known: %s\n", known)
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}
