package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/sstkit/sstable/reader"
)

// runVerify implements "sst verify": it checks the whole table with
// Reader.Verify.
func runVerify(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("verify", flag.ContinueOnError)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("verify: want exactly one FILE, got %d arguments (usage: sst verify FILE)", len(pos))
	}
	r, err := reader.Open(pos[0], nil)
	if err != nil {
		return fileErr("verify", pos[0], err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		return fileErr("verify", pos[0], err)
	}
	p := r.Properties()
	_, err = fmt.Fprintf(stdout, "ok: %d entries, %d data blocks\n", p.NumEntries, p.NumDataBlocks)
	return err
}
