package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// absentHex is the line get -hex prints for an absent KEY: not hex digits,
// and not the empty line of an empty value.
const absentHex = "-"

// runGet implements "sst get": it prints the value of each KEY and
// reports absent keys on stderr with exit status 1 (with -hex, a line
// "-" in the absent KEY's place on stdout too). With -merge the
// FILEs before "--" are read as one merged view, newest first, and the
// KEYs come after it.
func runGet(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("get", flag.ContinueOnError)
	hexFlag := fset.Bool("hex", false, "keys in hex; values printed in hex, one per line")
	mergeFlag := fset.Bool("merge", false, "read the FILEs before \"--\", newest first, as one merged view")
	leveldbFlag := fset.Bool("leveldb", false, "FILE is a LevelDB database directory: read its live view")
	addLevelDBFlags(fset, stderr)
	rocksdbFlag := fset.Bool("rocksdb", false, "FILE is a RocksDB database directory: read a column family's live view")
	cfFlag := addColumnFamilyFlag(fset)
	seqFlag := fset.Uint64("seq", leveldb.MaxSequence, "for a LevelDB or RocksDB table: the newest version at or below this sequence number")
	dels := addDeletionFlags(fset)
	pos, dash, err := parseArgsDash(fset, args)
	if err != nil {
		return err
	}
	if err := checkDBFlags("get", fset); err != nil {
		return err
	}
	var files, keyArgs []string
	switch {
	case (*leveldbFlag || *rocksdbFlag) && *mergeFlag:
		return usagef("get: -leveldb and -rocksdb read one database's live view; they do not go with -merge")
	case *mergeFlag && flagSet(fset, "seq"):
		return usagef("get: -seq applies to a LevelDB table or a RocksDB table file, not a merged view")
	case *mergeFlag && dash < 0:
		return usagef("get: -merge: put \"--\" between the FILEs and the KEYs (usage: sst get -merge [-hex] [flags] FILE... -- KEY...)")
	case *mergeFlag && (dash == 0 || dash == len(pos)):
		return usagef("get: -merge: want at least one FILE before \"--\" and one KEY after it (usage: sst get -merge [-hex] [flags] FILE... -- KEY...)")
	case *mergeFlag:
		files, keyArgs = pos[:dash], pos[dash:]
	case dels.given() != "":
		return usagef("get: %s applies to a merged view: add -merge, and \"--\" between the FILEs and the KEYs", dels.given())
	case len(pos) < 2:
		return usagef("get: want FILE and at least one KEY (usage: sst get [-hex] FILE KEY...)")
	default:
		files, keyArgs = pos[:1], pos[1:]
	}
	form := keyForm{hex: *hexFlag}
	var keys [][]byte
	for _, arg := range keyArgs {
		k, err := form.parse("get", "KEY", arg)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}

	// lookup appends key's value to buf; errFailed describes its errors
	// other than reader.ErrNotFound, errMissing an absent key.
	var (
		lookup     func(buf, key []byte) ([]byte, error)
		errFailed  func(key []byte, err error) error
		errMissing func(key []byte) error
	)
	if *mergeFlag {
		rs, levels, err := openLevels("get", files)
		if err != nil {
			return err
		}
		defer closeAll(rs)
		o := dels.options()
		lookup = func(buf, key []byte) ([]byte, error) {
			v, err := merge.Get(levels, key, &o)
			return append(buf, v...), err
		}
		errFailed = func(key []byte, err error) error {
			return mergeErr("get", fmt.Errorf("key %s: %w", form.show(key), err)) // err names the table
		}
		errMissing = func(key []byte) error {
			return fmt.Errorf("get: key %s not found in %s", form.show(key), fileList(files))
		}
	} else if tf := tableFormatOf(files[0]); *leveldbFlag || *rocksdbFlag || tf != formatOther {
		var g *levelDBGetter
		switch {
		case (*leveldbFlag || *rocksdbFlag) && flagSet(fset, "seq"):
			return usagef("get: -seq applies to a LevelDB table or a RocksDB table file (a database's live view is read at its last sequence number)")
		case *rocksdbFlag:
			g, err = openRocksDBDirGetter(files[0], *cfFlag, form)
		case tf == formatRocksDB && !*leveldbFlag:
			g, err = openRocksDBGetter(files[0], *seqFlag, flagSet(fset, "seq"), form)
		default:
			g, err = openLevelDBGetter(files[0], *leveldbFlag, *seqFlag, form)
		}
		if err != nil {
			return err
		}
		defer g.close()
		lookup, errFailed, errMissing = g.lookup, g.errFailed, g.errMissing
	} else {
		file := files[0]
		if flagSet(fset, "seq") {
			return usagef("get: -seq applies to a LevelDB table or a RocksDB table file; %s is not one", file)
		}
		r, err := reader.Open(file, nil)
		if err != nil {
			return dirHint("get", file, err)
		}
		defer r.Close()
		lookup = r.GetAppend
		errFailed = func(key []byte, err error) error {
			return fileErr("get", file, fmt.Errorf("key %s: %w", form.show(key), err))
		}
		errMissing = func(key []byte) error {
			return fmt.Errorf("get: %s: key %s not found", file, form.show(key))
		}
	}

	w := bufio.NewWriter(stdout)
	missing := 0
	var value, line []byte
	for _, k := range keys {
		value, err = lookup(value[:0], k)
		if errors.Is(err, reader.ErrNotFound) {
			// Report in order with the values printed so far.
			if err := w.Flush(); err != nil {
				return cmdErr("get", err)
			}
			report(stderr, errMissing(k))
			missing++
			if *hexFlag {
				// One line per KEY, so that the output pairs with the
				// KEYs: "-", not hex, for an absent one ("" would be
				// an empty value).
				w.WriteString(absentHex + "\n")
			}
			continue
		}
		if err != nil {
			w.Flush()
			return errFailed(k, err)
		}
		switch {
		case *hexFlag:
			// Text: every value on a line of its own, even a single one.
			line = append(hex.AppendEncode(line[:0], value), '\n')
			w.Write(line)
		case len(keys) > 1:
			w.Write(value)
			w.WriteByte('\n')
		default:
			w.Write(value)
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("get", err)
	}
	if missing > 0 {
		return &exitError{status: 1}
	}
	return nil
}
