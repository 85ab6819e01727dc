package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"io"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// runScan implements "sst scan": it prints the entries in [start, end)
// whose keys begin with the prefix, at most limit of them.
func runScan(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("scan", flag.ContinueOnError)
	startFlag := fset.String("start", "", "first key")
	endFlag := fset.String("end", "", "stop before this key")
	prefixFlag := fset.String("prefix", "", "only keys beginning with this")
	limit := fset.Int("limit", 0, "maximum number of entries; 0 means no limit")
	keysOnly := fset.Bool("keys-only", false, "print keys only")
	hexFlag := fset.Bool("hex", false, "keys given and printed in hex, values printed in hex")
	spansFlag := fset.Bool("spans", false, "print the span fragments (range deletions) instead of the entries")
	mergeFlag := fset.Bool("merge", false, "read the FILEs, newest first, as one merged view")
	leveldbFlag := fset.Bool("leveldb", false, "FILE is a LevelDB database directory: print its live view")
	addLevelDBFlags(fset, stderr)
	rocksdbFlag := fset.Bool("rocksdb", false, "FILE is a RocksDB database directory: print a column family's live view")
	cfFlag := addColumnFamilyFlag(fset)
	dels := addDeletionFlags(fset)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if err := checkDBFlags("scan", fset); err != nil {
		return err
	}
	switch {
	case *mergeFlag && len(pos) == 0:
		return usagef("scan: -merge: want at least one FILE (usage: sst scan -merge [flags] FILE...)")
	case (*leveldbFlag || *rocksdbFlag) && (*mergeFlag || *spansFlag):
		return usagef("scan: -leveldb and -rocksdb read one database's live view; they do not go with -merge or -spans")
	case *mergeFlag && *spansFlag:
		return usagef("scan: -spans lists one table's span fragments; it does not go with -merge")
	case !*mergeFlag && dels.given() != "":
		return usagef("scan: %s applies to a merged view: add -merge", dels.given())
	case !*mergeFlag && len(pos) != 1:
		hint := ""
		if len(pos) > 1 {
			hint = "; to read several tables as one, add -merge"
		}
		return usagef("scan: want exactly one FILE, got %d arguments (usage: sst scan FILE [-start K] [-end K] [-prefix P] [-limit N] [-keys-only] [-spans] [-hex]%s)", len(pos), hint)
	}
	if *limit < 0 {
		return usagef("scan: -limit %d is negative", *limit)
	}
	form := keyForm{hex: *hexFlag}
	start, err := form.parse("scan", "-start", *startFlag)
	if err != nil {
		return err
	}
	end, err := form.parse("scan", "-end", *endFlag)
	if err != nil {
		return err
	}
	prefix, err := form.parse("scan", "-prefix", *prefixFlag)
	if err != nil {
		return err
	}
	// An explicitly empty -end excludes every key; an absent one none.
	haveEnd := flagSet(fset, "end")
	// -prefix narrows [start, end) to the keys beginning with it: from the
	// greater of start and the prefix, to the lesser of end and the first
	// key after every key with the prefix.
	if bytes.Compare(prefix, start) > 0 {
		start = prefix
	}
	if pend := prefixEnd(prefix); pend != nil && (!haveEnd || bytes.Compare(pend, end) < 0) {
		end, haveEnd = pend, true
	}

	if *mergeFlag {
		return scanMerged(pos, dels, start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout)
	}
	if *leveldbFlag {
		return scanLevelDB(pos[0], start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout)
	}
	if *rocksdbFlag {
		return scanRocksDB(pos[0], *cfFlag, start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout)
	}
	switch tableFormatOf(pos[0]) {
	case formatLevelDB:
		if *spansFlag {
			return usagef("scan: -spans: %s is a LevelDB table, which holds no spans", pos[0])
		}
		return scanLevelDBTable(pos[0], start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout)
	case formatRocksDB:
		return scanRocksDBTable(pos[0], *spansFlag, start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout)
	}
	r, err := reader.Open(pos[0], nil)
	if err != nil {
		return dirHint("scan", pos[0], err)
	}
	defer r.Close()
	if *spansFlag {
		return scanSpans(r, pos[0], start, end, haveEnd, *limit, *hexFlag, stdout)
	}
	it := r.NewIterator()
	defer it.Close()
	if err := printEntries(it, start, end, haveEnd, *limit, *keysOnly, *hexFlag, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return fileErr("scan", pos[0], err)
	}
	return nil
}

// scanMerged prints the entries of the merged view of the tables in
// files, newest first (each its own level), as runScan prints a table's.
func scanMerged(files []string, dels *deletionFlags, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	rs, levels, err := openLevels("scan", files)
	if err != nil {
		return err
	}
	defer closeAll(rs)
	o := dels.options()
	if len(start) > 0 {
		o.LowerBound = start
	}
	if haveEnd {
		o.UpperBound = end
	}
	it := merge.NewIterator(levels, &o)
	defer it.Close()
	if err := printEntries(it, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return mergeErr("scan", err) // it names the table
	}
	return nil
}

// entryIterator is what printEntries reads: a table's iterator or a
// merged view's.
type entryIterator interface {
	SeekGE(key []byte) bool
	Next() bool
	Key() []byte
	Value() []byte
}

// printEntries prints the entries of it in [start, end) (end only with
// haveEnd), at most limit of them (0: no limit), one per line: the key,
// then unless keysOnly a TAB and the value; raw bytes, or hex digits with
// hexOut. The caller checks the iterator's error.
func printEntries(it entryIterator, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	var line []byte
	for ok := it.SeekGE(start); ok; ok = it.Next() {
		k := it.Key()
		if haveEnd && bytes.Compare(k, end) >= 0 {
			break
		}
		line = line[:0]
		if hexOut {
			line = hex.AppendEncode(line, k)
		} else {
			line = append(line, k...)
		}
		if !keysOnly {
			line = append(line, '\t')
			if hexOut {
				line = hex.AppendEncode(line, it.Value())
			} else {
				line = append(line, it.Value()...)
			}
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return cmdErr("scan", err)
		}
		if n++; n == limit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("scan", err)
	}
	return nil
}

// scanSpans prints the span fragments of r that overlap [start, end) (end
// only with haveEnd), at most limit of them (0: no limit), one per line:
// start, TAB, end, then TAB and each value, in the order the spans were
// added; raw bytes, or hex digits with hexOut.
func scanSpans(r *reader.Reader, file string, start, end []byte, haveEnd bool, limit int, hexOut bool, stdout io.Writer) error {
	it := r.NewSpanIterator()
	defer it.Close()
	w := bufio.NewWriterSize(stdout, 64<<10)
	field := func(line, b []byte) []byte {
		if hexOut {
			return hex.AppendEncode(line, b)
		}
		return append(line, b...)
	}
	var line []byte
	n := 0
	for ok := it.SeekGE(start); ok; ok = it.Next() {
		sp := it.Span()
		if haveEnd && bytes.Compare(sp.Start, end) >= 0 {
			break
		}
		line = field(line[:0], sp.Start)
		line = field(append(line, '\t'), sp.End)
		for _, v := range sp.Values {
			line = field(append(line, '\t'), v)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return cmdErr("scan", err)
		}
		if n++; n == limit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("scan", err)
	}
	if err := it.Close(); err != nil {
		return fileErr("scan", file, err)
	}
	return nil
}

// prefixEnd returns the least key greater than every key beginning with
// prefix, or nil if there is none (prefix empty or all 0xff bytes).
func prefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := bytes.Clone(prefix[:i+1])
			end[i]++
			return end
		}
	}
	return nil
}
