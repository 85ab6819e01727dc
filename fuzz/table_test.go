package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// FuzzTable reads arbitrary bytes as a whole table file, through
// reader.New or, when mmap is set, through reader.Open of a temporary file
// (the memory-mapped path). Every error must wrap format.ErrCorrupt (or
// reader.ErrNotFound, from Get), scans must end, and a table that passes
// Verify must behave like the sorted map its forward scan describes.
//
// A mutated file almost always fails a CRC check first, so a file that
// does not verify is read a second time with its checksums repaired
// (repairChecksums): that lets mutations reach the decoders behind the
// checksums, on a path real damage cannot take.
//
// The seeds are the small tables of seedTables, a few hundred bytes to
// 2 KB each, without the golden ones (most of 9 to 12 KB, an exec on
// each several times the cost): they add no layout the small ones lack,
// and TestGoldenTables puts them through the same checks.
func FuzzTable(f *testing.F) {
	for _, st := range seedTables(f) {
		if strings.HasPrefix(st.name, "golden/") {
			continue
		}
		f.Add(st.file, false)
		f.Add(st.file, true)
	}
	f.Add([]byte{}, false)
	f.Add(make([]byte, 64), true)
	scratch := newScratchFile(f, "t.sst")
	f.Fuzz(func(t *testing.T, data []byte, mmap bool) {
		var file *scratchFile
		if mmap {
			file = scratch
		}
		checkFileRepaired(t, data, file)
	})
}

// TestGoldenTables runs FuzzTable's checks on the golden tables, through
// both read paths.
func TestGoldenTables(t *testing.T) {
	scratch := newScratchFile(t, "golden.sst")
	n := 0
	for _, st := range seedTables(t) {
		if !strings.HasPrefix(st.name, "golden/") {
			continue
		}
		n++
		t.Run(st.name, func(t *testing.T) {
			checkFileRepaired(t, st.file, nil)
			checkFileRepaired(t, st.file, scratch)
		})
	}
	if n == 0 {
		t.Skipf("no golden tables in %s", goldenGlob)
	}
}

// checkFileRepaired checks data (see checkFile) and, if it does not pass
// Verify, data with its checksums repaired.
func checkFileRepaired(t *testing.T, data []byte, file *scratchFile) {
	if checkFile(t, data, file) {
		return
	}
	if fixed := repairChecksums(data); !bytes.Equal(fixed, data) {
		checkFile(t, fixed, file)
	}
}

// scratchFile is the one file a fuzz target writes its tables to for
// reader.Open: a fuzz worker runs its inputs one at a time, and a fresh
// t.TempDir would cost more than the rest. It stays open and is
// overwritten in place, never truncated to zero and closed as
// os.WriteFile does: on ext4 that makes the close start writing the new
// contents to disk (auto_da_alloc) and the next truncation wait for the
// write, 0.3 ms per input on a quiet disk (5 µs in place) and far more on
// a busy one.
type scratchFile struct {
	path string
	f    *os.File
}

// newScratchFile creates the file name in a temporary directory of tb.
func newScratchFile(tb testing.TB, name string) *scratchFile {
	path := filepath.Join(tb.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return &scratchFile{path, f}
}

// write makes the file's contents data and returns its path. Readers of
// the previous contents must be closed: the file may shrink under them.
func (s *scratchFile) write(t *testing.T, data []byte) string {
	if _, err := s.f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.f.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	return s.path
}

// readerOpts lets readers recognise the binary fuse filter, which the
// reader does not know by default, so its filters are probed too.
var readerOpts = &reader.Options{Filters: []filterblock.Policy{filterblock.BinaryFuse8()}}

// footerTailOpts is readerOpts with a tail of the footer alone. The
// tables here are smaller than the default tail, from which a reader over
// a ReaderAt would take every data block and partition: openTable uses
// these options for inputs of odd length, so that reads through ReadAt
// are fuzzed too.
var footerTailOpts = &reader.Options{Filters: readerOpts.Filters, TailSize: 64}

// checkFile opens data (see openTable) and checks the reader. It reports
// whether the table passed Verify.
func checkFile(t *testing.T, data []byte, file *scratchFile) bool {
	r := openTable(t, data, file)
	if r == nil {
		return false
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}()
	return checkTable(t, r, data)
}

// openTable opens data with reader.New (with footerTailOpts if its length
// is odd) or, if file is not nil, writes it to file and opens that with
// reader.Open. It returns nil if the table does not open.
func openTable(t *testing.T, data []byte, file *scratchFile) *reader.Reader {
	var r *reader.Reader
	var err error
	if file != nil {
		r, err = reader.Open(file.write(t, data), readerOpts)
	} else {
		opts := readerOpts
		if len(data)%2 == 1 {
			opts = footerTailOpts
		}
		r, err = reader.New(bytes.NewReader(data), int64(len(data)), opts)
	}
	wantErr(t, "Open", err, format.ErrCorrupt)
	if err != nil {
		if r != nil {
			t.Fatal("Open returned a reader and an error")
		}
		return nil
	}
	return r
}

// scanLimit bounds the entries any scan of a size-byte file can see: the
// index has at most size/9 entries (a 5-byte entry and its 4-byte restart
// point), each naming one data block, which decodes to at most 22·size+16
// bytes of 3-byte entries. Index entries may repeat a block, so the bound
// is quadratic.
func scanLimit(size int) int {
	return (size/9 + 1) * ((22*size+16)/3 + 1)
}

// checkTable checks a reader opened on data and reports whether the table
// passed Verify.
func checkTable(t *testing.T, r *reader.Reader, data []byte) bool {
	props := r.Properties()
	verr := r.Verify()
	wantErr(t, "Verify", verr, format.ErrCorrupt)
	limit := scanLimit(len(data))
	if verr == nil {
		limit = int(min(props.NumEntries, uint64(limit)))
	}

	fwd, fwdErr := scan(t, r, limit, false)
	bwd, bwdErr := scan(t, r, limit, true)
	keys := keysFrom(data, 16)
	for i, e := range fwd {
		if i < 16 || i == len(fwd)-1 {
			keys = append(keys, e.Key, successor(e.Key))
		}
	}

	if verr != nil {
		// Damaged table: only safety matters.
		for _, k := range keys {
			r.MayContain(k)
			_, err := r.Get(k)
			wantErr(t, "Get", err, format.ErrCorrupt, reader.ErrNotFound)
			it := r.NewIterator()
			if it.SeekGE(k) {
				it.Next()
				it.Prev()
			}
			wantErr(t, "SeekGE", it.Close(), format.ErrCorrupt)
		}
		return false
	}

	// The table passed Verify: it is the sorted map of its forward scan.
	if fwdErr != nil || bwdErr != nil {
		t.Fatalf("Verify passed but scans failed: forward %v, backward %v", fwdErr, bwdErr)
	}
	if uint64(len(fwd)) != props.NumEntries {
		t.Fatalf("Verify passed; forward scan saw %d entries, properties say %d", len(fwd), props.NumEntries)
	}
	if !slices.IsSortedFunc(fwd, func(a, b blockEntry) int { return bytes.Compare(a.Key, b.Key) }) {
		t.Fatal("Verify passed but keys are not sorted")
	}
	slices.Reverse(bwd)
	if diff := diffEntries(fwd, bwd); diff != "" {
		t.Fatalf("Verify passed; backward scan differs (-forward +backward):\n%s", diff)
	}
	if len(fwd) > 0 && (!bytes.Equal(fwd[0].Key, props.SmallestKey) || !bytes.Equal(fwd[len(fwd)-1].Key, props.LargestKey)) {
		t.Fatalf("Verify passed; keys span [%q, %q], properties say [%q, %q]", fwd[0].Key, fwd[len(fwd)-1].Key, props.SmallestKey, props.LargestKey)
	}
	checkLookups(t, r, fwd, keys)
	return true
}

// scan walks the table forwards or backwards, at most limit entries.
func scan(t *testing.T, r *reader.Reader, limit int, backward bool) ([]blockEntry, error) {
	it := r.NewIterator()
	var out []blockEntry
	start, step := it.First, it.Next
	if backward {
		start, step = it.Last, it.Prev
	}
	for ok := start(); ok; ok = step() {
		if len(out) >= limit {
			it.Close()
			t.Fatalf("scan (backward %v) of a %d-byte table passed %d entries", backward, r.Size(), limit)
		}
		if !it.Valid() {
			t.Fatal("iterator positioned but not valid")
		}
		out = append(out, blockEntry{cp(it.Key()), cp(it.Value())})
	}
	if it.Valid() {
		t.Fatal("iterator valid after its scan ended")
	}
	err := it.Close()
	wantErr(t, "scan", err, format.ErrCorrupt)
	return out, err
}

// checkLookups checks MayContain, Get and SeekGE against the sorted model
// entries, for every entry and for the probe keys.
func checkLookups(t *testing.T, r *reader.Reader, model []blockEntry, probes [][]byte) {
	for _, e := range model {
		if !r.MayContain(e.Key) {
			t.Fatalf("MayContain(%q) is false for a key of the table", e.Key)
		}
	}
	targets := probes
	for _, e := range model {
		targets = append(targets, e.Key)
	}
	it := r.NewIterator()
	defer it.Close()
	for _, k := range targets {
		i, found := slices.BinarySearchFunc(model, k, func(e blockEntry, k []byte) int { return bytes.Compare(e.Key, k) })
		v, err := r.Get(k)
		switch {
		case found && err != nil:
			t.Fatalf("Get(%q): %v", k, err)
		case found && !bytes.Equal(v, model[i].Value):
			t.Fatalf("Get(%q) = %q, want %q", k, v, model[i].Value)
		case !found && err == nil:
			t.Fatalf("Get(%q) = %q for an absent key", k, v)
		case !found:
			wantErr(t, "Get of an absent key", err, reader.ErrNotFound)
		}
		ok := it.SeekGE(k)
		if err := it.Err(); err != nil {
			t.Fatalf("SeekGE(%q): %v", k, err)
		}
		if ok != (i < len(model)) {
			t.Fatalf("SeekGE(%q) = %v with %d of %d keys below it", k, ok, i, len(model))
		}
		if ok && !bytes.Equal(it.Key(), model[i].Key) {
			t.Fatalf("SeekGE(%q) found %q, want %q", k, it.Key(), model[i].Key)
		}
		if ok && !bytes.Equal(it.Value(), model[i].Value) {
			t.Fatalf("SeekGE(%q) value %q, want %q", k, it.Value(), model[i].Value)
		}
		if ok {
			// One step each way from the seek position.
			if it.Prev() != (i > 0) || (i > 0 && !bytes.Equal(it.Key(), model[i-1].Key)) {
				t.Fatalf("Prev after SeekGE(%q) is wrong", k)
			}
			if i > 0 && !it.Next() {
				t.Fatalf("Next back to %q after Prev failed", model[i].Key)
			}
			if i > 0 && !bytes.Equal(it.Key(), model[i].Key) {
				t.Fatalf("Next after Prev gives %q, want %q", it.Key(), model[i].Key)
			}
		}
	}
}
