package main

import (
	"flag"
	"io"
	"os"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/rocksdb"
)

// buildRocksDB implements "sst build -rocksdb NEWEST.sst ... OLDEST.sst",
// and for a directory "sst build -rocksdb DIR [-cf NAME]" (buildRocksDBDir):
// it writes the view of the RocksDB tables in pos, newest first, each its
// own level (Table.Level, with RocksDB's sequence number rules), into one
// table at out, or with split > 0 into tables of about split bytes and a
// manifest in the directory out, through convertLevels: each user key's
// newest value, unless a deletion or a range deletion of the same or a
// newer table hides it. A merge operand or blob index that is a key's
// newest version fails the conversion (rocksdb.UnresolvedError): the
// tables alone do not hold its value.
func buildRocksDB(fset *flag.FlagSet, pos []string, out string, force bool, split int64, opts *builder.Options, hexKeys bool, start time.Time, stdout io.Writer) error {
	switch {
	case len(pos) == 0:
		return usagef("build: -rocksdb: want at least one RocksDB table (usage: sst build -rocksdb NEWEST.sst ... OLDEST.sst -o OUT [-split BYTES] [flags])")
	case out == "":
		return usagef("build: -o OUT is required")
	case flagSet(fset, "spans"):
		return usagef("build: -spans does not go with -rocksdb: the tables' range deletions are applied, not added")
	case flagSet(fset, "leveldb"):
		return usagef("build: -leveldb and -rocksdb do not go together")
	}
	// A database directory or table files: told apart by os.Stat.
	if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
		if len(pos) != 1 {
			return usagef("build: -rocksdb: want one database DIR or RocksDB table files, not both (usage: sst build -rocksdb DIR [-cf NAME] -o OUT [-split BYTES] [flags])")
		}
		return buildRocksDBDir(pos[0], fset.Lookup("cf").Value.String(), out, force, split, opts, hexKeys, start, stdout)
	}
	if flagSet(fset, "cf") {
		return usagef("build: -cf names a column family of a RocksDB database DIR; %s is not a directory", pos[0])
	}
	if outSt, err := os.Stat(out); err == nil && split == 0 {
		for _, in := range pos {
			if st, err := os.Stat(in); err == nil && os.SameFile(st, outSt) {
				return usagef("build: output %s is an input table", out)
			}
		}
	}
	if err := checkDistinct("build", pos); err != nil {
		return err
	}
	if err := checkConvertOut(out, force, split); err != nil {
		return err
	}
	var levels []merge.Level
	for _, file := range pos {
		if tableFormatOf(file) != formatRocksDB {
			if _, err := os.Stat(file); err != nil {
				return cmdErr("build", err)
			}
			return usagef("build: -rocksdb: %s is not a RocksDB table", file)
		}
		t, err := openRocksDBTable("build", file)
		if err != nil {
			return err
		}
		defer t.Close()
		lvl, err := t.Level()
		if err != nil {
			return ldbErr("build", file, err)
		}
		levels = append(levels, lvl)
	}
	return convertLevels(levels, rocksdb.MergeOptions(), "-rocksdb", func(err error) error { return ldbErr("build", "", err) },
		out, split, opts, hexKeys, start, stdout)
}
