package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
)

// runCompact implements "sst compact": it writes the merged view of the
// tables given, newest first (each its own level), into new
// non-overlapping tables and a manifest in a new or empty directory,
// through merge.Compact, and prints their figures as build -split does.
func runCompact(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("compact", flag.ContinueOnError)
	out := fset.String("o", "", "output directory, new or empty")
	splitFlag := fset.String("split", "", "write tables of about this size (default: one table)")
	bottom := fset.Bool("bottom", false, "nothing older lies below the tables: drop deletions and range deletions")
	hexFlag := fset.Bool("hex", false, "print the tables' smallest and largest keys as hex digits")
	dels := addDeletionFlags(fset)
	table := addTableFlags(fset)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	var split int64
	if *splitFlag != "" {
		if split, err = parseBytes(*splitFlag); err != nil || split < 1 {
			return usagef("compact: bad -split %q (want a size such as 64MiB)", *splitFlag)
		}
	}
	switch {
	case len(pos) == 0:
		return usagef("compact: want at least one FILE (usage: sst compact -o DIR [-split BYTES] [-bottom] [flags] FILE...)")
	case *out == "":
		return usagef("compact: -o DIR is required")
	}
	opts, err := table.options("compact", fset)
	if err != nil {
		return err
	}
	start := time.Now()

	// DIR must be new or empty: compact writes no table over another
	// and mixes its tables with nothing else.
	created := false
	st, err := os.Stat(*out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		created = true
	case err != nil:
		return cmdErr("compact", err)
	case !st.IsDir():
		return fmt.Errorf("compact: %s is not a directory", *out)
	default:
		ents, err := os.ReadDir(*out)
		if err != nil {
			return cmdErr("compact", err)
		}
		if len(ents) > 0 {
			name := ents[0].Name()
			if bulk.IsTempDir(name) {
				return fmt.Errorf("compact: %s is not empty: it holds %s, left by an interrupted build or compaction (remove it, or compact into a new or empty directory)", *out, name)
			}
			return fmt.Errorf("compact: %s is not empty: it holds %s (compact into a new or empty directory)", *out, name)
		}
	}

	rs, levels, err := openLevels("compact", pos)
	if err != nil {
		return err
	}
	defer closeAll(rs)
	var entriesIn, sizeIn uint64
	for _, r := range rs {
		entriesIn += r.Properties().NumEntries
		sizeIn += uint64(r.Size())
	}
	tables, err := merge.Compact(levels, &merge.CompactOptions{
		Options:         dels.options(),
		Dir:             *out,
		TargetTableSize: split,
		Bottom:          *bottom,
		Builder:         opts,
	})
	if err != nil {
		if created {
			os.Remove(*out) // created for this compaction, and empty after the failure
		}
		return mergeErr("compact", err)
	}
	var entries, spans, size int64
	for _, t := range tables {
		entries += t.Entries
		spans += t.Spans
		size += t.Size
	}
	fmt.Fprintf(stdout, "wrote %d tables to %s (%s)\n", len(tables), *out, filepath.Join(*out, bulk.ManifestName))
	fmt.Fprintf(stdout, "tables in:         %d (%d entries, %s)\n", len(pos), entriesIn, humanBytes(sizeIn))
	fmt.Fprintf(stdout, "entries:           %d\n", entries)
	fmt.Fprintf(stdout, "span fragments:    %d\n", spans)
	fmt.Fprintf(stdout, "bytes out:         %d (%s)\n", size, humanBytes(uint64(size)))
	form := keyForm{hex: *hexFlag}
	for _, t := range tables {
		line := fmt.Sprintf("  %s  %d entries", filepath.Base(t.Path), t.Entries)
		if t.Spans > 0 {
			line += fmt.Sprintf(", %d span fragments", t.Spans)
		}
		line += "  " + humanBytes(uint64(t.Size))
		if t.Entries > 0 {
			line += fmt.Sprintf("  %s .. %s", form.show(t.Smallest), form.show(t.Largest))
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "elapsed:           %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}
