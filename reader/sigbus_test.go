//go:build unix

package reader_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestTruncatedWhileMapped shrinks a table file while a Reader has it
// mapped. Touching the pages past the new end raises SIGBUS; the reader
// must turn every such fault into an error wrapping format.ErrCorrupt
// (MayContain into true) and the process must survive. Both format
// versions: a version 2 Get reads the hash index's slots and the entry
// straight from the mapping. The reader has either served a Get before the
// truncation (sections loaded, blocks checked) or is fresh (the first
// loads fault). Raw and snappy tables: a compressed table's blocks are
// decoded from the mapping into the cache, block by block, on first use.
func TestTruncatedWhileMapped(t *testing.T) {
	for _, v := range tableVersions {
		for _, comp := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			for _, warm := range []bool{true, false} {
				for _, c := range []struct {
					name   string
					newLen func(r *reader.Reader) int64
					// Some Get must fault: it needs bytes past the new end.
					mustFault bool
				}{
					{"to zero", func(*reader.Reader) int64 { return 0 }, true},
					{"to half", func(r *reader.Reader) int64 { return r.Size() / 2 }, true},
					// The data blocks (and a version 2 table's hash index)
					// stay; the filter and everything after it go. Whether a
					// Get faults depends on whether it reads the filter or
					// the index block; either way it must not crash or lie.
					{"to the filter", func(r *reader.Reader) int64 { return int64(r.Footer().Filter.Offset) }, false},
				} {
					name := v.name + "/" + comp.String() + "/" + c.name + map[bool]string{true: "", false: "/fresh"}[warm]
					t.Run(name, func(t *testing.T) { truncatedWhileMapped(t, v, comp, warm, c.mustFault, c.newLen) })
				}
			}
		}
	}
}

func truncatedWhileMapped(t *testing.T, tv tableVersion, comp format.Compression, warm, mustFault bool, newLen func(*reader.Reader) int64) {
	path := filepath.Join(t.TempDir(), "t.sst")
	b, err := builder.Create(path, &builder.Options{Compression: comp, HashIndex: tv.hash, FormatVersion: tv.fv})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	key := func(i int) []byte { return fmt.Appendf(nil, "key%08d", i) }
	val := func(i int) []byte { return fmt.Appendf(nil, "value %d %0100d", i, i) }
	for i := 0; i < n; i++ {
		if err := b.Add(key(i), val(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Mapped() {
		t.Skip("file not memory-mapped on this platform")
	}
	if p := r.Properties(); p.FormatVersion != tv.version || (p.HashIndexSize != 0) != tv.hasHashIndex() {
		t.Fatalf("table built as %s has format version %d, a %d-byte hash index", tv.name, p.FormatVersion, p.HashIndexSize)
	}
	if warm {
		if v, err := r.Get(key(1)); err != nil || string(v) != string(val(1)) {
			t.Fatalf("Get before truncation: %q, %v", v, err)
		}
		if want := comp == format.SnappyCompression; reader.CachedBlock(r, 0) != want {
			t.Fatalf("CachedBlock(0) = %v, want %v", reader.CachedBlock(r, 0), want)
		}
	}
	if err := os.Truncate(path, newLen(r)); err != nil {
		t.Fatal(err)
	}

	faults := 0
	for i := 0; i < n; i += 97 {
		v, err := r.Get(key(i))
		switch {
		case err == nil:
			if string(v) != string(val(i)) {
				t.Fatalf("Get(%s) after truncation = %q, want %q or an error", key(i), v, val(i))
			}
		case errors.Is(err, format.ErrCorrupt):
			faults++
		default:
			t.Fatalf("Get(%s) after truncation: %v, want a format.ErrCorrupt error", key(i), err)
		}
	}
	if faults == 0 && mustFault {
		t.Fatal("no Get saw the truncation")
	}
	r.MayContain(key(3)) // must not crash; any answer is acceptable

	it := r.NewIterator()
	count := 0
	for ok := it.First(); ok; ok = it.Next() {
		count++
	}
	if err := it.Close(); !errors.Is(err, format.ErrCorrupt) || count >= n {
		t.Fatalf("scan after truncation: %d entries, Close() = %v; want fewer than %d and a format.ErrCorrupt error", count, err, n)
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	err = r.Verify()
	var ce *format.CorruptError
	if !errors.As(err, &ce) || ce.Section != format.SectionFile {
		t.Fatalf("Verify after truncation = %v, want a corruption error in section %q", err, format.SectionFile)
	}
	t.Logf("%d of %d Gets faulted; scan stopped after %d entries; Verify: %v", faults, (n+96)/97, count, err)
}

// TestSpanIteratorTruncatedNamesTable truncates a mapped table with spans
// before its span block is first read: NewSpanIterator's load faults, and
// its error must wrap format.ErrCorrupt and name the table as every other
// error of the reader does (the fault is recovered after load returns,
// so the naming must not happen inside load).
func TestSpanIteratorTruncatedNamesTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans.sst")
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if err := b.Add(fmt.Appendf(nil, "key%06d", i), make([]byte, 50)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		if err := b.AddSpan(fmt.Appendf(nil, "key%06d", i*10), fmt.Appendf(nil, "key%06d", i*10+5), []byte("del")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Mapped() {
		t.Skip("file not memory-mapped on this platform")
	}
	if err := os.Truncate(path, r.Size()/2); err != nil {
		t.Fatal(err)
	}
	it := r.NewSpanIterator()
	defer it.Close()
	if it.First() {
		t.Fatal("a span iterator over a truncated span block moved")
	}
	if err := it.Err(); !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("NewSpanIterator after truncation: %v, want a corruption naming %s", err, path)
	}
}
