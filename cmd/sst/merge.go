package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// prefixList is the value of -tombstone and -range-tombstone: byte
// prefixes, each given as hex digits, the flag repeated for several.
type prefixList struct {
	prefixes [][]byte
	set      bool // given at least once (an empty prefix counts)
	noEmpty  bool // an empty prefix is refused (-tombstone: it would match every value)
}

func (p *prefixList) String() string {
	var s []string
	for _, b := range p.prefixes {
		s = append(s, hex.EncodeToString(b))
	}
	return strings.Join(s, ",")
}

// Set adds a prefix. parseArgs may parse a flag twice (endsFlags): a
// prefix given again is not added again.
func (p *prefixList) Set(arg string) error {
	b, err := decodeHex([]byte(arg))
	if err != nil {
		return fmt.Errorf("want hex digits: %v", err)
	}
	if len(b) == 0 && p.noEmpty {
		// Most often an unset shell variable: every value would read as
		// a deletion, and the view as empty.
		return errors.New("an empty marker begins every value, so every entry would read as deleted (give the marker's bytes as hex digits)")
	}
	p.set = true
	for _, q := range p.prefixes {
		if bytes.Equal(q, b) {
			return nil
		}
	}
	p.prefixes = append(p.prefixes, b)
	return nil
}

// match reports whether v begins with one of the prefixes.
func (p *prefixList) match(v []byte) bool {
	for _, q := range p.prefixes {
		if bytes.HasPrefix(v, q) {
			return true
		}
	}
	return false
}

// deletionFlags are the flags that say which values of a merged view
// delete: -tombstone and -range-tombstone.
type deletionFlags struct {
	tombstone, rangeTombstone prefixList
}

// addDeletionFlags defines -tombstone and -range-tombstone in fset.
func addDeletionFlags(fset *flag.FlagSet) *deletionFlags {
	d := &deletionFlags{tombstone: prefixList{noEmpty: true}}
	fset.Var(&d.tombstone, "tombstone", "a point value beginning with these bytes (hex digits) is a deletion; repeatable")
	fset.Var(&d.rangeTombstone, "range-tombstone", "a span value beginning with these bytes (hex digits) is a range deletion (default: every span); repeatable")
	return d
}

// given returns the name of a deletion flag given on the command line, or
// "" if none was.
func (d *deletionFlags) given() string {
	switch {
	case d.tombstone.set:
		return "-tombstone"
	case d.rangeTombstone.set:
		return "-range-tombstone"
	}
	return ""
}

// options returns the merge options the flags ask for: no point
// deletions without -tombstone, every span a range deletion without
// -range-tombstone.
func (d *deletionFlags) options() merge.Options {
	var o merge.Options
	if d.tombstone.set {
		o.IsDeletion = d.tombstone.match
	}
	if d.rangeTombstone.set {
		o.IsRangeDeletion = d.rangeTombstone.match
	}
	return o
}

// openLevels opens the tables in files, newest first, and returns them
// and the stack of levels over them, each table its own level. On error
// the tables opened so far are closed and the error names the command
// and the file.
func openLevels(cmd string, files []string) ([]*reader.Reader, []merge.Level, error) {
	if err := checkDistinct(cmd, files); err != nil {
		return nil, nil, err
	}
	rs := make([]*reader.Reader, 0, len(files))
	levels := make([]merge.Level, 0, len(files))
	for _, file := range files {
		r, err := reader.Open(file, nil)
		if err != nil {
			closeAll(rs)
			return nil, nil, tableErr(cmd, file, err)
		}
		rs = append(rs, r)
		levels = append(levels, merge.Tables(r))
	}
	return rs, levels, nil
}

// checkDistinct refuses a table given twice to a merged view (for cmd):
// by the same path, or by two paths to the same file (os.SameFile), as a
// usage error. Read twice, a table would shadow itself and change
// nothing, so the repeat is most likely a typo for another table. Files
// that cannot be stat'ed are left to the open that follows.
func checkDistinct(cmd string, files []string) error {
	stats := make([]os.FileInfo, len(files))
	for i, f := range files {
		if j := slices.Index(files[:i], f); j >= 0 {
			return usagef("%s: %s is given twice: give each table of a merged view once", cmd, f)
		}
		st, err := os.Stat(f)
		if err != nil {
			continue
		}
		for j, prev := range stats[:i] {
			if prev != nil && os.SameFile(prev, st) {
				return usagef("%s: %s and %s are the same file: give each table of a merged view once", cmd, files[j], f)
			}
		}
		stats[i] = st
	}
	return nil
}

// closeAll closes the readers.
func closeAll(rs []*reader.Reader) {
	for _, r := range rs {
		r.Close()
	}
}

// mergeErr is cmdErr for an error of package merge, whose messages begin
// "merge: " (a prefix internal/errmsg does not know) and name the table
// when a table failed.
func mergeErr(cmd string, err error) error {
	return cmdErr(cmd, trimMergePrefix{err})
}

// trimMergePrefix is an error whose message drops a leading "merge: ".
type trimMergePrefix struct{ err error }

func (e trimMergePrefix) Error() string { return strings.TrimPrefix(e.err.Error(), "merge: ") }
func (e trimMergePrefix) Unwrap() error { return e.err }

// fileList renders the files of a merged view for messages.
func fileList(files []string) string { return strings.Join(files, ", ") }
