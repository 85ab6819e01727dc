package main

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"strings"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// prefixList is the value of -tombstone and -range-tombstone: byte
// prefixes, each given as hex digits, the flag repeated for several.
type prefixList struct {
	prefixes [][]byte
	set      bool // given at least once (an empty prefix counts)
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
	d := &deletionFlags{}
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
	rs := make([]*reader.Reader, 0, len(files))
	levels := make([]merge.Level, 0, len(files))
	for _, file := range files {
		r, err := reader.Open(file, nil)
		if err != nil {
			closeAll(rs)
			return nil, nil, fileErr(cmd, file, err)
		}
		rs = append(rs, r)
		levels = append(levels, merge.Tables(r))
	}
	return rs, levels, nil
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
