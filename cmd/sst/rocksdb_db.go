package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/rocksdb"
)

// RocksDB databases in sst: with -rocksdb DIR, scan, get, verify and info
// read a RocksDB database directory (rocksdb.OpenDB, read-only), scan and
// get one column family's live view (-cf NAME, "default" unless given),
// printed as for a table of this package; build -rocksdb DIR converts that
// view into tables of this package. Merge operands read through the
// built-in operator the directory's OPTIONS file names for the family
// (DBOptions.OptionsMergeOperators): StringAppendOperator or
// UInt64AddOperator; a key needing another is an error naming it.

// isRocksDBDir reports whether path holds a database with an OPTIONS-NNNNNN
// or IDENTITY file beside its CURRENT: RocksDB writes an OPTIONS file at
// every open (since 4.x) and IDENTITY when it creates a database, LevelDB
// neither (a copy may lack the OPTIONS files). A hint for a FILE given
// without -rocksdb; OpenDB tells the two apart by the MANIFEST's version
// edits.
func isRocksDBDir(path string) bool {
	if !isLevelDBDir(path) {
		return false
	}
	if st, err := os.Stat(filepath.Join(path, "IDENTITY")); err == nil && st.Mode().IsRegular() {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(path, "OPTIONS-*"))
	return len(m) > 0
}

// addColumnFamilyFlag defines -cf for a command that reads a RocksDB
// database.
func addColumnFamilyFlag(fset *flag.FlagSet) *string {
	return fset.String("cf", rocksdb.DefaultColumnFamily, "with -rocksdb: the column family to read")
}

// checkDBFlags checks the flags choosing what a FILE argument is: -leveldb
// and -rocksdb exclude each other, and -cf needs -rocksdb.
func checkDBFlags(cmd string, fset *flag.FlagSet) error {
	switch {
	case flagSet(fset, "leveldb") && flagSet(fset, "rocksdb"):
		return usagef("%s: -leveldb and -rocksdb do not go together", cmd)
	case flagSet(fset, "cf") && flagSet(fset, "leveldb"):
		return usagef("%s: -cf names a column family of a RocksDB database; a LevelDB database has none: drop -cf", cmd)
	case flagSet(fset, "cf") && !flagSet(fset, "rocksdb"):
		return usagef("%s: -cf names a column family of a RocksDB database: add -rocksdb DIR", cmd)
	}
	return nil
}

// openRocksDB opens the RocksDB database in dir read-only for cmd, merge
// operands reading through the built-in operators its OPTIONS file names.
// A table file, a LevelDB database and a database a RocksDB process holds
// are refused with messages saying so.
func openRocksDB(cmd, dir string) (*rocksdb.DB, error) {
	switch tableFormatOf(dir) {
	case formatLevelDB:
		return nil, usagef("%s: -rocksdb reads a database directory; %s is a LevelDB table file: drop -rocksdb to read it", cmd, dir)
	case formatRocksDB:
		return nil, usagef("%s: -rocksdb reads a database directory; %s is a RocksDB table file: drop -rocksdb to read it", cmd, dir)
	}
	db, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{OptionsMergeOperators: true})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, rocksdb.ErrLevelDB):
		return nil, usagef("%s: %s holds a LevelDB database, not RocksDB's: read it with -leveldb instead of -rocksdb", cmd, dir)
	case errors.Is(err, rocksdb.ErrLocked):
		// ErrLocked's text is followed by ": PATH (KIND)", the lock held.
		lock := strings.TrimPrefix(strings.TrimPrefix(err.Error(), rocksdb.ErrLocked.Error()), ": ")
		if path, kind, ok := strings.Cut(lock, " ("); ok {
			lock = path + ", " + strings.TrimSuffix(kind, ")")
		}
		return nil, &ldbError{msg: fmt.Sprintf("%s: %s is held by a RocksDB process (a lock on %s), which rewrites and deletes its files as it runs: stop it, or read a checkpoint or copy of the database", cmd, dir, lock), err: err}
	case errors.Is(err, os.ErrNotExist) && !isLevelDBDir(dir):
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%s: %s holds no RocksDB database (no CURRENT file)", cmd, dir)
		}
	}
	return nil, ldbErr(cmd, dir, err)
}

// levelDBRocksHint returns the usage error of cmd -leveldb for a RocksDB
// directory: one with RocksDB's own files (isRocksDBDir), or whose
// MANIFEST leveldb.OpenDB found RocksDB's (err wraps leveldb.ErrRocksDB);
// nil for another directory and error. The files decide first: until
// RocksDB has flushed, its MANIFEST holds nothing LevelDB lacks, and its
// log may hold what LevelDB cannot read ("unknown kind 7", a single
// deletion) or, read as LevelDB's, mean something else.
func levelDBRocksHint(cmd, dir string, err error) error {
	if !isRocksDBDir(dir) && !errors.Is(err, leveldb.ErrRocksDB) {
		return nil
	}
	return usagef("%s: %s holds a RocksDB database, not LevelDB's: read it with -rocksdb instead of -leveldb", cmd, dir)
}

// rocksdbPlace names column family cf of the database in dir in messages:
// the directory alone for the default family.
func rocksdbPlace(dir, cf string) string {
	if cf == rocksdb.DefaultColumnFamily {
		return dir
	}
	return fmt.Sprintf("%s: column family %q", dir, cf)
}

// rocksdbViewErr words an error met reading column family cf of db (in
// dir) for cmd: a key whose merge operands need a merge operator sst does
// not have names the key (as form shows it) and what the family's OPTIONS
// file names; any other error is ldbErr's.
func rocksdbViewErr(cmd, dir, cf string, db *rocksdb.DB, form keyForm, err error) error {
	var ue *rocksdb.UnresolvedError
	if !errors.As(err, &ue) || ue.Kind != rocksdb.KindMerge {
		return ldbErr(cmd, dir, err)
	}
	opts := db.ColumnFamilyOptions(cf)
	named := "the directory has no OPTIONS file naming it"
	switch v := opts["merge_operator"]; {
	case opts == nil:
	case v == "" || v == "nullptr":
		named = "its OPTIONS file names none"
	default:
		named = fmt.Sprintf("its OPTIONS file names %s, which sst does not have", v)
	}
	return &ldbError{msg: fmt.Sprintf("%s: %s: key %s holds merge operands, whose value needs the column family's merge operator: %s (sst merges through RocksDB's built-in StringAppendOperator and UInt64AddOperator)",
		cmd, rocksdbPlace(dir, cf), form.show(ue.Key), named), err: err}
}

// checkFamily returns an error (ldbErr's) unless db has column family cf.
func checkFamily(cmd, dir, cf string, db *rocksdb.DB) error {
	if _, err := db.Levels(cf); err != nil {
		return ldbErr(cmd, dir, err)
	}
	return nil
}

// scanRocksDB prints column family cf's live view of the RocksDB database
// in dir exactly as runScan prints a table of this package: each live user
// key once, with its value.
func scanRocksDB(dir, cf string, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	db, err := openRocksDB("scan", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	o := &rocksdb.IterOptions{LowerBound: start}
	if haveEnd {
		o.UpperBound = end
	}
	it, err := db.NewIterator(cf, o)
	if err != nil {
		return ldbErr("scan", dir, err)
	}
	defer it.Close()
	if err := printEntries(it, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return rocksdbViewErr("scan", dir, cf, db, keyForm{hex: hexOut}, err)
	}
	return nil
}

// openRocksDBDirGetter opens the RocksDB database in dir for get: its
// lookups read column family cf's live view (DB.Get).
func openRocksDBDirGetter(dir, cf string, form keyForm) (*levelDBGetter, error) {
	db, err := openRocksDB("get", dir)
	if err != nil {
		return nil, err
	}
	if err := checkFamily("get", dir, cf, db); err != nil {
		db.Close()
		return nil, err
	}
	place := rocksdbPlace(dir, cf)
	return &levelDBGetter{
		close: db.Close,
		lookup: func(buf, key []byte) ([]byte, error) {
			v, err := db.Get(cf, key)
			return append(buf, v...), err
		},
		errFailed: func(key []byte, err error) error {
			var ue *rocksdb.UnresolvedError
			if errors.As(err, &ue) {
				return rocksdbViewErr("get", dir, cf, db, form, err)
			}
			return ldbErr("get", dir, fmt.Errorf("key %s: %w", form.show(key), err))
		},
		errMissing: func(key []byte) error {
			return fmt.Errorf("get: %s: key %s not found", place, form.show(key))
		},
	}, nil
}

// verifyRocksDB checks every live table and blob file of the RocksDB
// database in dir (DB.Verify), then reads every column family's live view
// from first key to last, checking that its keys rise strictly, and
// prints one "ok: ..." line.
func verifyRocksDB(dir string, stdout io.Writer) error {
	db, err := openRocksDB("verify", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := db.Verify()
	if err != nil {
		return ldbErr("verify", dir, err)
	}
	var tables, blobs, logged int
	var live int64
	cfs := db.ColumnFamilies()
	for _, cf := range cfs {
		files, err := db.Files(cf)
		if err != nil {
			return ldbErr("verify", dir, err)
		}
		nums, err := db.BlobFiles(cf)
		if err != nil {
			return ldbErr("verify", dir, err)
		}
		tables, blobs, logged = tables+len(files), blobs+len(nums), logged+db.LogEntries(cf)
		it, err := db.NewIterator(cf, nil)
		if err != nil {
			return ldbErr("verify", dir, err)
		}
		var prev []byte
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n > 0 && bytes.Compare(it.Key(), prev) <= 0 {
				it.Close()
				return fmt.Errorf("verify: %s: live view out of order: key %s after key %s", rocksdbPlace(dir, cf), quoteKey(it.Key()), quoteKey(prev))
			}
			prev = append(prev[:0], it.Key()...)
			n++
		}
		if err := it.Close(); err != nil {
			return rocksdbViewErr("verify", dir, cf, db, keyForm{}, err)
		}
		live += int64(n)
	}
	_, err = fmt.Fprintf(stdout, "ok: %d entries in %d tables, %d blob files, %d writes replayed from the logs; live view: %d keys in %d column families, last sequence %d\n",
		entries, tables, blobs, logged, live, len(cfs), db.LastSequence())
	if err != nil {
		return cmdErr("verify", err)
	}
	return nil
}

// showInternalKey renders an internal key of the MANIFEST (the user key,
// then 8 bytes: seq<<8 | kind, little-endian) as info shows a version.
func showInternalKey(k []byte, hexOut bool) string {
	if len(k) < 8 {
		return showVersion(k, 0, 0, hexOut) + " (no sequence number)"
	}
	n := len(k) - 8
	x := binary.LittleEndian.Uint64(k[n:])
	return showVersion(k[:n], x>>8, rocksdb.Kind(x&0xff), hexOut)
}

// infoRocksDBDir prints what the RocksDB database in dir holds: its last
// sequence number and column families (only cf, when only is set), each
// with the comparator and merge operator its OPTIONS file names, the
// writes replayed from the logs, its blob files, and its tables level by
// level with their sizes and smallest and largest keys.
func infoRocksDBDir(dir, cf string, only, hexOut bool, stdout io.Writer) error {
	db, err := openRocksDB("info", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	cfs := db.ColumnFamilies()
	if only {
		if err := checkFamily("info", dir, cf, db); err != nil {
			return err
		}
		cfs = []string{cf}
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "database: %s\n", dir)
	current, _ := os.ReadFile(filepath.Join(dir, "CURRENT"))
	fmt.Fprintf(w, "format: RocksDB database (CURRENT names %s)\n", strings.TrimSpace(string(current)))
	fmt.Fprintf(w, "last sequence: %d\n", db.LastSequence())
	fmt.Fprintf(w, "column families: %d (%s)\n", len(db.ColumnFamilies()), strings.Join(db.ColumnFamilies(), ", "))
	for _, name := range cfs {
		files, err := db.Files(name)
		if err != nil {
			return ldbErr("info", dir, err)
		}
		blobs, err := db.BlobFiles(name)
		if err != nil {
			return ldbErr("info", dir, err)
		}
		fmt.Fprintf(w, "\ncolumn family %q:\n", name)
		opts := db.ColumnFamilyOptions(name)
		comparator, op := rocksdb.BytewiseComparator+" (the MANIFEST's)", "none"
		switch {
		case opts == nil:
			op = "unknown: no OPTIONS file (merge operands cannot be read)"
		default:
			if c := opts["comparator"]; c != "" {
				comparator = c
			}
			if v := opts["merge_operator"]; v != "" && v != "nullptr" {
				if db.MergeOperator(name) != nil {
					op = v + " (built in: merges read through it)"
				} else {
					op = v + " (sst does not have it: merge operands cannot be read)"
				}
			}
		}
		fmt.Fprintf(w, "  %-20s%s\n", "comparator:", comparator)
		fmt.Fprintf(w, "  %-20s%s\n", "merge operator:", op)
		fmt.Fprintf(w, "  %-20s%d (writes replayed from the write-ahead logs)\n", "log entries:", db.LogEntries(name))
		var blobBytes int64
		var blobLines []string
		for _, num := range blobs {
			file := fmt.Sprintf("%06d.blob", num)
			size := "missing"
			if st, err := os.Stat(filepath.Join(dir, file)); err == nil {
				blobBytes += st.Size()
				size = fmt.Sprintf("%d bytes", st.Size())
			}
			blobLines = append(blobLines, fmt.Sprintf("    %s  %s", file, size))
		}
		fmt.Fprintf(w, "  %-20s%d (%d bytes)\n", "blob files:", len(blobs), blobBytes)
		for _, l := range blobLines {
			fmt.Fprintln(w, l)
		}
		var tableBytes uint64
		for _, f := range files {
			tableBytes += f.Size
		}
		fmt.Fprintf(w, "  %-20s%d (%d bytes)\n", "tables:", len(files), tableBytes)
		for i := 0; i < len(files); {
			j := i
			var size uint64
			for ; j < len(files) && files[j].Level == files[i].Level; j++ {
				size += files[j].Size
			}
			fmt.Fprintf(w, "  level %d: %s, %d bytes\n", files[i].Level, plural(j-i, "table"), size)
			for _, f := range files[i:j] {
				fmt.Fprintf(w, "    %06d.sst  %d bytes  %s .. %s  (sequence numbers %d .. %d)\n", f.Number, f.Size,
					showInternalKey(f.Smallest, hexOut), showInternalKey(f.Largest, hexOut), f.SmallestSeq, f.LargestSeq)
			}
			i = j
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}

// plural returns "N thing", or "N things" unless n is 1.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// buildRocksDBDir implements "sst build -rocksdb DIR [-cf NAME]": it
// writes column family cf's live view of the RocksDB database in dir into
// one table at out, or with split > 0 into tables of about split bytes and
// a manifest in the directory out, through convertLevels, as build
// -leveldb does.
func buildRocksDBDir(dir, cf, out string, force bool, split int64, opts *builder.Options, hexKeys bool, start time.Time, stdout io.Writer) error {
	if err := checkOutOutsideDB("-rocksdb", out, dir); err != nil {
		return err
	}
	if err := checkConvertOut(out, force, split); err != nil {
		return err
	}
	db, err := openRocksDB("build", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	levels, err := db.Levels(cf)
	if err != nil {
		return ldbErr("build", dir, err)
	}
	srcErr := func(err error) error { return rocksdbViewErr("build", dir, cf, db, keyForm{hex: hexKeys}, err) }
	return convertLevels(levels, db.MergeOptions(cf), "-rocksdb", srcErr, out, split, opts, hexKeys, start, stdout)
}
