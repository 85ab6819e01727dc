package format

import (
	"errors"
	"fmt"
)

// ErrCorrupt is the sentinel wrapped by every error that reports a damaged,
// truncated or foreign file. Test for it with errors.Is(err, format.ErrCorrupt).
var ErrCorrupt = errors.New("sstable: corrupt table")

// Section names used in corruption errors. They name the part of the file
// whose bytes failed a check.
const (
	SectionFile       = "file"
	SectionFooter     = "footer"
	SectionIndex      = "index block"
	SectionDataBlock  = "data block"
	SectionFilter     = "filter section"
	SectionProperties = "properties"
	SectionHashIndex  = "hash index"
	SectionSpans      = "span block" // Version5

	// Sections of a Version3 (partitioned) table.
	SectionTopIndex        = "top-level index"
	SectionIndexPartition  = "index partition"
	SectionFilterPartition = "filter partition"
)

// CorruptError describes a corruption found at a byte offset of a table
// file, in the manner of debug/elf's FormatError. It wraps ErrCorrupt.
type CorruptError struct {
	Section string // which part of the file, one of the Section* names
	Offset  int64  // byte offset in the file where the bad bytes start
	Msg     string // what is wrong

	// File names the table: package reader sets it, on every
	// CorruptError a Reader returns, to the path given to reader.Open
	// or to reader.Options.Name for reader.New; "" when the table has
	// no name. Corruptf leaves it "".
	File string
}

// Error formats the error as "sstable: corrupt <section> at offset N: msg",
// preceded by "<file>: " when File is set.
func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("sstable: corrupt %s at offset %d: %s", e.Section, e.Offset, e.Msg)
	if e.File != "" {
		return e.File + ": " + msg
	}
	return msg
}

// Unwrap returns ErrCorrupt, so errors.Is(err, ErrCorrupt) holds.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Corruptf returns a *CorruptError for section at file offset off, with a
// message formatted by fmt.Sprintf(format, args...).
func Corruptf(section string, off int64, format string, args ...any) error {
	return &CorruptError{Section: section, Offset: off, Msg: fmt.Sprintf(format, args...)}
}
