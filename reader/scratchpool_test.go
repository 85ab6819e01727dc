package reader_test

import (
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestPooledScratchNeverAliasesMapping checks that a mapped reader's
// lookup leaves no slice of its file mapping in the process-wide lookup
// buffers. A mapped reader reads a block whose number has no checksum
// state word (a lying hash index can name one) through read, which
// returns the mapping itself; kept as the pooled buffer, the next reader
// without a mapping would read a block into it: a write to a read-only
// mapping, or, once the first reader has closed, to unmapped memory (a
// fatal fault, seen once in a run of the reader tests).
func TestPooledScratchNeverAliasesMapping(t *testing.T) {
	if !mmapSupported {
		t.Skip("no mmap")
	}
	es := numbered(2000, func(i int) string { return fmt.Sprintf("value-%06d", i) })
	data, _ := build(t, es, &builder.Options{Compression: format.NoCompression, FormatVersion: format.Version1})
	r := openFile(t, data, nil)
	aliased, err := reader.ScratchAliasesMapping(r)
	if err != nil {
		t.Fatal(err)
	}
	if aliased {
		t.Fatal("a mapped read left the file mapping as the pooled scratch buffer")
	}
}
