package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/reader"
)

// runScan implements "sst scan": it prints the entries in [start, end),
// at most limit of them.
func runScan(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("scan", flag.ContinueOnError)
	start := fset.String("start", "", "first key")
	end := fset.String("end", "", "stop before this key")
	limit := fset.Int("limit", 0, "maximum number of entries; 0 means no limit")
	keysOnly := fset.Bool("keys-only", false, "print keys only")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("scan: want exactly one FILE, got %d arguments (usage: sst scan FILE [-start K] [-end K] [-limit N] [-keys-only])", len(pos))
	}
	if *limit < 0 {
		return usagef("scan: -limit %d is negative", *limit)
	}
	// An explicitly empty -end excludes every key; an absent one none.
	haveEnd := false
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "end" {
			haveEnd = true
		}
	})

	r, err := reader.Open(pos[0], nil)
	if err != nil {
		return fileErr("scan", pos[0], err)
	}
	defer r.Close()
	it := r.NewIterator()
	defer it.Close()

	w := bufio.NewWriterSize(stdout, 64<<10)
	endKey := []byte(*end)
	n := 0
	for ok := it.SeekGE([]byte(*start)); ok; ok = it.Next() {
		k := it.Key()
		if haveEnd && bytes.Compare(k, endKey) >= 0 {
			break
		}
		w.Write(k)
		if !*keysOnly {
			w.WriteByte('\t')
			w.Write(it.Value())
		}
		if err := w.WriteByte('\n'); err != nil {
			return fmt.Errorf("scan: write: %w", err)
		}
		if n++; n == *limit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("scan: write: %w", err)
	}
	if err := it.Err(); err != nil {
		return fileErr("scan", pos[0], err)
	}
	return nil
}
