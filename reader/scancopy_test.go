//go:build unix

package reader_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// scanCopyTable writes n raw (uncompressed) entries to a file and opens
// it mapped.
func scanCopyTable(t *testing.T, n int) (string, []entry, *reader.Reader) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %080d", i, i) })
	data, props := build(t, es, &builder.Options{Compression: format.NoCompression})
	if props.NumDataBlocks < 10 {
		t.Fatalf("only %d data blocks", props.NumDataBlocks)
	}
	path := writeFile(t, t.TempDir(), data)
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if !r.Mapped() {
		t.Skip("file not memory-mapped on this platform")
	}
	return path, es, r
}

// TestScanCopiesMappedBlocks checks where an iterator over a mapped raw
// table reads its blocks: a walk (First, Next into the following block)
// from a copy, whose Nexts need no fault guard; a seek in place. Either
// way every entry is right.
func TestScanCopiesMappedBlocks(t *testing.T) {
	_, es, r := scanCopyTable(t, 3000)
	it := r.NewIterator()
	defer it.Close()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if reader.IterInPlace(it) {
			t.Fatalf("entry %d of a full scan read in place", i)
		}
		if string(it.Key()) != es[i].Key || string(it.Value()) != es[i].Value {
			t.Fatalf("entry %d: %q=%q, want %q=%q", i, it.Key(), it.Value(), es[i].Key, es[i].Value)
		}
		i++
	}
	if err := it.Err(); err != nil || i != len(es) {
		t.Fatalf("scan saw %d of %d entries: %v", i, len(es), err)
	}

	// A seek serves its block in place; the walk past it copies.
	i = 1500
	if !it.SeekGE([]byte(es[i].Key)) || !reader.IterInPlace(it) {
		t.Fatalf("SeekGE(%s): valid %v, in place %v, want both", es[i].Key, it.Valid(), reader.IterInPlace(it))
	}
	for reader.IterInPlace(it) {
		if string(it.Key()) != es[i].Key || string(it.Value()) != es[i].Value {
			t.Fatalf("entry %d: %q, want %q", i, it.Key(), es[i].Key)
		}
		if !it.Next() {
			t.Fatalf("Next from entry %d: %v", i, it.Err())
		}
		i++
	}
	if string(it.Key()) != es[i].Key || string(it.Value()) != es[i].Value {
		t.Fatalf("first entry of the next block: %q, want %q", it.Key(), es[i].Key)
	}
	// Prev back into the seek's block.
	if !it.Prev() || string(it.Key()) != es[i-1].Key {
		t.Fatalf("Prev: %q, %v, want %q", it.Key(), it.Err(), es[i-1].Key)
	}
}

// TestScanCopyAllocs checks that a full scan of a mapped raw table
// allocates nothing once its iterator holds a copy buffer: Nexts within
// a block, and the copies of the blocks after it.
func TestScanCopyAllocs(t *testing.T) {
	_, es, r := scanCopyTable(t, 3000)
	it := r.NewIterator()
	defer it.Close()
	n := 0
	scan := func() {
		n = 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
	}
	scan() // grows the copy buffer
	if a := testing.AllocsPerRun(20, scan); a != 0 {
		t.Errorf("a full scan of %d entries allocates %v times", len(es), a)
	}
	if n != len(es) || it.Err() != nil {
		t.Fatalf("scan saw %d of %d entries: %v", n, len(es), it.Err())
	}
}

// TestTruncatedMidScan shrinks the file under a full scan of a mapped
// raw table. The block already copied is served whole, from the copy;
// the move to the next block faults (on the index entry, which lies past
// the data blocks, or the block's copy), which must stop the scan with a
// format.ErrCorrupt error, not crash the process.
func TestTruncatedMidScan(t *testing.T) {
	path, es, r := scanCopyTable(t, 3000)
	it := r.NewIterator()
	if !it.First() {
		t.Fatal(it.Err())
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	n := 1
	for it.Next() {
		if string(it.Key()) != es[n].Key || string(it.Value()) != es[n].Value {
			t.Fatalf("entry %d: %q=%q, want %q=%q", n, it.Key(), it.Value(), es[n].Key, es[n].Value)
		}
		n++
	}
	if err := it.Close(); !errors.Is(err, format.ErrCorrupt) || n >= len(es) || n < 2 {
		t.Fatalf("scan after truncation: %d entries, Close() = %v; want the first block's and a format.ErrCorrupt error", n, err)
	}
}
