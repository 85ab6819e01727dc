package format_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sstkit/sstable/format"
)

func TestCorruptf(t *testing.T) {
	err := format.Corruptf(format.SectionDataBlock, 42, "bad %s %d", "thing", 7)
	if got, want := err.Error(), "sstable: corrupt data block at offset 42: bad thing 7"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Corruptf error does not wrap ErrCorrupt")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Corruptf error matches an unrelated sentinel")
	}
	wrapped := fmt.Errorf("opening t.sst: %w", err)
	var ce *format.CorruptError
	if !errors.As(wrapped, &ce) || !errors.Is(wrapped, format.ErrCorrupt) {
		t.Fatalf("wrapped corruption error lost its identity")
	}
	if ce.Section != "data block" || ce.Offset != 42 || ce.Msg != "bad thing 7" {
		t.Fatalf("CorruptError = %+v", *ce)
	}
}

// TestCorruptErrorFile checks that a named CorruptError puts the file
// first, as "path: sstable: ...", and keeps its identity.
func TestCorruptErrorFile(t *testing.T) {
	err := &format.CorruptError{Section: format.SectionIndex, Offset: 7, Msg: "bad", File: "/d/000042.sst"}
	if got, want := err.Error(), "/d/000042.sst: sstable: corrupt index block at offset 7: bad"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	var ce *format.CorruptError
	if !errors.Is(err, format.ErrCorrupt) || !errors.As(fmt.Errorf("x: %w", err), &ce) || ce.File != "/d/000042.sst" {
		t.Fatalf("named corruption error lost its identity: %v", ce)
	}
}

func TestSectionNames(t *testing.T) {
	for got, want := range map[string]string{
		format.SectionFile:       "file",
		format.SectionFooter:     "footer",
		format.SectionIndex:      "index block",
		format.SectionDataBlock:  "data block",
		format.SectionFilter:     "filter section",
		format.SectionProperties: "properties",
	} {
		if got != want {
			t.Errorf("section name %q, want %q", got, want)
		}
	}
}
