package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/reader"
)

// runGet implements "sst get": it prints the value of each KEY and
// reports absent keys on stderr with exit status 1.
func runGet(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("get", flag.ContinueOnError)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("get: want FILE and at least one KEY (usage: sst get FILE KEY...)")
	}
	file := pos[0]
	r, err := reader.Open(file, nil)
	if err != nil {
		return fileErr("get", file, err)
	}
	defer r.Close()

	keys := pos[1:]
	w := bufio.NewWriter(stdout)
	missing := 0
	var value []byte
	for _, k := range keys {
		value, err = r.GetAppend(value[:0], []byte(k))
		if errors.Is(err, reader.ErrNotFound) {
			// Report in order with the values printed so far.
			if err := w.Flush(); err != nil {
				return fmt.Errorf("get: write: %w", err)
			}
			report(stderr, fmt.Errorf("get: %s: key %s not found", file, quoteKey([]byte(k))))
			missing++
			continue
		}
		if err != nil {
			w.Flush()
			return fileErr("get", file, fmt.Errorf("key %s: %w", quoteKey([]byte(k)), err))
		}
		w.Write(value)
		if len(keys) > 1 {
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("get: write: %w", err)
	}
	if missing > 0 {
		return &exitError{status: 1}
	}
	return nil
}
