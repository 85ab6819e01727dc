package main

import (
	"bufio"
	"encoding/hex"
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
	hexFlag := fset.Bool("hex", false, "keys in hex; values printed in hex, one per line")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("get: want FILE and at least one KEY (usage: sst get [-hex] FILE KEY...)")
	}
	form := keyForm{hex: *hexFlag}
	file := pos[0]
	var keys [][]byte
	for _, arg := range pos[1:] {
		k, err := form.parse("get", "KEY", arg)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	r, err := reader.Open(file, nil)
	if err != nil {
		return fileErr("get", file, err)
	}
	defer r.Close()

	w := bufio.NewWriter(stdout)
	missing := 0
	var value, line []byte
	for _, k := range keys {
		value, err = r.GetAppend(value[:0], k)
		if errors.Is(err, reader.ErrNotFound) {
			// Report in order with the values printed so far.
			if err := w.Flush(); err != nil {
				return cmdErr("get", err)
			}
			report(stderr, fmt.Errorf("get: %s: key %s not found", file, form.show(k)))
			missing++
			continue
		}
		if err != nil {
			w.Flush()
			return fileErr("get", file, fmt.Errorf("key %s: %w", form.show(k), err))
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
