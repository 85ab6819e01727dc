package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
)

// buildLevelDB implements "sst build -leveldb DIR": it writes the live
// view of the LevelDB database in DIR (pos[0]) into one table at out, or
// with split > 0 into tables of about split bytes and a manifest in the
// directory out, through convertLevels.
func buildLevelDB(fset *flag.FlagSet, pos []string, out string, force bool, split int64, opts *builder.Options, hexKeys bool, start time.Time, stdout io.Writer) error {
	switch {
	case len(pos) != 1:
		return usagef("build: -leveldb: want exactly one DIR, got %d arguments (usage: sst build -leveldb DIR -o OUT [-split BYTES] [flags])", len(pos))
	case out == "":
		return usagef("build: -o OUT is required")
	case flagSet(fset, "spans"):
		return usagef("build: -spans does not go with -leveldb: a LevelDB database holds no spans")
	}
	dir := pos[0]
	if err := checkOutOutsideDB("-leveldb", out, dir); err != nil {
		return err
	}
	if err := checkConvertOut(out, force, split); err != nil {
		return err
	}
	db, err := openLevelDB("build", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	return convertLevels(db.Levels(), db.MergeOptions(), "-leveldb", func(err error) error { return ldbErr("build", dir, err) },
		out, split, opts, hexKeys, start, stdout)
}

// checkOutOutsideDB refuses an output (of build flag) that is the
// database directory dir or lies in it, where the database's engine
// would take it for one of its files.
func checkOutOutsideDB(flag, out, dir string) error {
	if abs, err := filepath.Abs(out); err == nil {
		if dabs, err := filepath.Abs(dir); err == nil && (abs == dabs || filepath.Dir(abs) == dabs) {
			return usagef("build: %s: output %s lies in the database directory %s: write it elsewhere", flag, out, dir)
		}
	}
	return nil
}

// checkConvertOut checks, before a conversion (build -leveldb, -rocksdb)
// opens its input, that out may be written: a table file that does not
// exist yet (or, with force, does), or with split a directory holding no
// earlier build (or, with force, one).
func checkConvertOut(out string, force bool, split int64) error {
	if split > 0 {
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
		case !errors.Is(err, os.ErrNotExist):
			return cmdErr("build", err)
		}
	} else if st, err := os.Lstat(out); err == nil {
		if st.IsDir() {
			return fmt.Errorf("build: %s is a directory, not a table file (use -split to write a directory of tables)", out)
		}
		if !force {
			return fmt.Errorf("build: %s already exists (use -f to replace it)", out)
		}
	}
	return nil
}

// convertLevels writes the view of levels (newest first) under mo into
// one table at out, or with split > 0 into tables of about split bytes
// and a manifest in the directory out, through merge.Compact (its
// deletions dropped, as nothing lies below them), and prints their
// figures as build does; flag names the conversion in messages, and
// srcErr words the errors of the levels. The tables are written in a
// working directory (beside out, or inside it with split) and renamed
// into place once complete, so that a failed conversion leaves no table
// at out and an earlier build as it was.
func convertLevels(levels []merge.Level, mo *merge.Options, flag string, srcErr func(error) error, out string, split int64, opts *builder.Options, hexKeys bool, start time.Time, stdout io.Writer) error {
	created := false
	if split > 0 {
		if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(out, 0o777); err != nil {
				return cmdErr("build", err)
			}
			created = true
		}
	}

	// The working directory: beside OUT, or inside DIR with -split.
	parent, name := filepath.Dir(out), filepath.Base(out)
	if split > 0 {
		parent = out
		if abs, err := filepath.Abs(out); err == nil {
			name = filepath.Base(abs) // "." names no directory
		}
	}
	removeStale(parent, name)
	wd, err := newWorkDir(parent, name)
	if err != nil {
		if created {
			os.Remove(out)
		}
		return cmdErr("build", userPathErr("create tables in", parent, err))
	}
	defer wd.remove()
	tables, err := merge.Compact(levels, &merge.CompactOptions{
		Options:         *mo,
		Dir:             wd.path,
		TargetTableSize: split,
		Bottom:          true,
		Builder:         opts,
	})
	if err != nil {
		wd.remove()
		if created {
			os.Remove(out) // created for this build, and empty after the failure
		}
		return srcErr(err)
	}

	if split > 0 {
		if tables, err = install(out, wd.path, tables); err != nil {
			return cmdErr("build", err)
		}
		// Before the first line of output: a reader that has gone (sst
		// build | head -1) ends the process with SIGPIPE at that write,
		// and deferred calls do not run then.
		wd.remove()
		var entries, size int64
		for _, t := range tables {
			entries += t.Entries
			size += t.Size
		}
		fmt.Fprintf(stdout, "wrote %d tables to %s (%s)\n", len(tables), out, filepath.Join(out, bulk.ManifestName))
		fmt.Fprintf(stdout, "entries:           %d\n", entries)
		fmt.Fprintf(stdout, "bytes out:         %d (%s)\n", size, humanBytes(uint64(size)))
		form := keyForm{hex: hexKeys}
		for _, t := range tables {
			line := fmt.Sprintf("  %s  %d entries  %s", filepath.Base(t.Path), t.Entries, humanBytes(uint64(t.Size)))
			if t.Entries > 0 {
				line += fmt.Sprintf("  %s .. %s", form.show(t.Smallest), form.show(t.Largest))
			}
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintf(stdout, "elapsed:           %s\n", time.Since(start).Round(time.Millisecond))
		return nil
	}

	if len(tables) == 0 {
		// No live key: an empty table, written as builder.Create does
		// (a temporary file renamed into place).
		b, err := builder.Create(out, opts)
		if err != nil {
			return cmdErr("build", err)
		}
		defer b.Abort()
		if err := b.Finish(); err != nil {
			return cmdErr("build", err)
		}
	} else {
		if len(tables) != 1 {
			return fmt.Errorf("build: %s: internal error: %d tables written, want 1", flag, len(tables))
		}
		if err := os.Rename(tables[0].Path, out); err != nil {
			return cmdErr("build", userPathErr("rename into", out, err))
		}
		if err := syncDir(parent); err != nil {
			return cmdErr("build", userPathErr("fsync directory", parent, err))
		}
	}
	wd.remove() // before any output, as above
	return printBuilt(out, start, stdout)
}
