package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/reader"
)

// runVerify implements "sst verify": it checks each table with
// Reader.Verify, reporting every failure and going on to the next file.
func runVerify(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("verify", flag.ContinueOnError)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("verify: want at least one FILE (usage: sst verify FILE...)")
	}
	failed := 0
	for _, file := range pos {
		ok, err := verifyFile(file)
		if err != nil {
			report(stderr, fileErr("verify", file, err))
			failed++
			continue
		}
		// One file: the line alone, as ever; several: each named.
		if len(pos) > 1 {
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
		return &exitError{status: 1}
	}
	return nil
}

// verifyFile checks the table in file and returns its "ok: ..." line.
func verifyFile(file string) (string, error) {
	r, err := reader.Open(file, nil)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		return "", err
	}
	p := r.Properties()
	return fmt.Sprintf("ok: %d entries, %d data blocks", p.NumEntries, p.NumDataBlocks), nil
}
