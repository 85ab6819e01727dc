package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// runVerify implements "sst verify": it checks each table with
// Reader.Verify, reporting every failure and going on to the next file.
func runVerify(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("verify", flag.ContinueOnError)
	mergeFlag := fset.Bool("merge", false, "also read the FILEs, newest first, as one merged view")
	leveldbFlag := fset.Bool("leveldb", false, "FILE is a LevelDB database directory")
	addLevelDBFlags(fset, stderr)
	rocksdbFlag := fset.Bool("rocksdb", false, "FILE is a RocksDB database directory")
	dels := addDeletionFlags(fset)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if err := checkDBFlags("verify", fset); err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("verify: want at least one FILE (usage: sst verify [-merge] FILE...)")
	case !*mergeFlag && dels.given() != "":
		return usagef("verify: %s applies to a merged view: add -merge", dels.given())
	case *leveldbFlag && (*mergeFlag || len(pos) != 1):
		return usagef("verify: -leveldb: want one DIR and no -merge (usage: sst verify -leveldb DIR)")
	case *leveldbFlag:
		return verifyLevelDB(pos[0], stdout)
	case *rocksdbFlag && (*mergeFlag || len(pos) != 1):
		return usagef("verify: -rocksdb: want one DIR and no -merge (usage: sst verify -rocksdb DIR)")
	case *rocksdbFlag:
		return verifyRocksDB(pos[0], stdout)
	}
	if *mergeFlag {
		// Before any table is checked, as the other commands refuse it.
		if err := checkDistinct("verify", pos); err != nil {
			return err
		}
	}
	failed := 0
	for _, file := range pos {
		ok, err := verifyFile(file)
		if err != nil {
			report(stderr, dirHint("verify", file, err))
			failed++
			continue
		}
		// One file: the line alone, as ever; several, or a merged view
		// after it: each named.
		if len(pos) > 1 || *mergeFlag {
			ok = file + ": " + ok
		}
		if _, err := fmt.Fprintln(stdout, ok); err != nil {
			return cmdErr("verify", err)
		}
	}
	if failed > 0 {
		if len(pos) > 1 {
			report(stderr, fmt.Errorf("verify: %d of %d files failed", failed, len(pos)))
		}
		if *mergeFlag {
			report(stderr, fmt.Errorf("verify: -merge: merged view not read, since a table failed"))
		}
		return &exitError{status: 1}
	}
	if *mergeFlag {
		ok, err := verifyMerged(pos, dels)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintln(stdout, ok); err != nil {
			return cmdErr("verify", err)
		}
	}
	return nil
}

// verifyMerged reads the merged view of the tables in files, newest first
// (each its own level), from its first key to its last, checks that its
// keys come in strictly increasing order, and returns its "merged view:
// ok: ..." line.
func verifyMerged(files []string, dels *deletionFlags) (string, error) {
	rs, levels, err := openLevels("verify", files)
	if err != nil {
		return "", err
	}
	defer closeAll(rs)
	var total uint64
	for _, r := range rs {
		total += r.Properties().NumEntries
	}
	o := dels.options()
	it := merge.NewIterator(levels, &o)
	defer it.Close()
	var n uint64
	var prev []byte
	for ok := it.First(); ok; ok = it.Next() {
		if n > 0 && bytes.Compare(it.Key(), prev) <= 0 {
			return "", fmt.Errorf("verify: -merge: merged view out of order: key %s after key %s", quoteKey(it.Key()), quoteKey(prev))
		}
		prev = append(prev[:0], it.Key()...)
		n++
	}
	if err := it.Close(); err != nil {
		return "", mergeErr("verify", err) // it names the table
	}
	return fmt.Sprintf("merged view: ok: %d entries (of %d in %d tables)", n, total, len(files)), nil
}

// verifyFile checks the table in file and returns its "ok: ..." line.
func verifyFile(file string) (string, error) {
	switch tableFormatOf(file) {
	case formatLevelDB:
		return verifyLevelDBFile(file)
	case formatRocksDB:
		return verifyRocksDBFile(file)
	}
	r, err := reader.Open(file, nil)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		return "", err
	}
	p := r.Properties()
	return verifiedLine(int64(p.NumEntries), int(p.NumDataBlocks)), nil
}
