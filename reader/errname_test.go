package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// namedOpen is one way to open a table in the error-naming tests, and the
// name its errors must carry ("" for none).
type namedOpen struct {
	how  string
	open func(t *testing.T, data []byte) (*reader.Reader, string)
}

var namedOpens = []namedOpen{
	{"Open", func(t *testing.T, data []byte) (*reader.Reader, string) {
		path := writeFile(t, t.TempDir(), data)
		r, err := reader.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r, path
	}},
	{"Open/NoMmap", func(t *testing.T, data []byte) (*reader.Reader, string) {
		path := writeFile(t, t.TempDir(), data)
		r, err := reader.Open(path, &reader.Options{NoMmap: true, TailSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		return r, path
	}},
	{"New/Name", func(t *testing.T, data []byte) (*reader.Reader, string) {
		const name = "s3://bucket/000042.sst"
		r, err := reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Name: name, TailSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		return r, name
	}},
	{"New", func(t *testing.T, data []byte) (*reader.Reader, string) {
		return openMem(t, data, &reader.Options{TailSize: 64}), ""
	}},
}

// TestErrorsNameTheFile damages one data block (a flipped byte, nothing
// else fixed) and checks that the corruption Get, Has, an iterator (Err
// and Close) and Verify report names the table: as File of the
// *format.CorruptError and at the start of the message, for Open(path)
// (mapped and not) and New with Options.Name; a New without a name gives
// the bare message. The error still wraps format.ErrCorrupt, and ErrClosed
// after Close names the file too.
func TestErrorsNameTheFile(t *testing.T) {
	es := gappedEntries(600)
	kinds := []struct {
		name string
		opts builder.Options
	}{
		{"v1", builder.Options{FormatVersion: format.Version1}},
		{"v2", builder.Options{HashIndex: true}},
		{"v4", builder.Options{}},
		{"v3", builder.Options{FormatVersion: format.Version1, PartitionThreshold: 1, PartitionSize: 512}},
		{"v4-partitioned", builder.Options{PartitionThreshold: 1, PartitionSize: 512}},
	}
	for _, k := range kinds {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			opts := k.opts
			opts.BlockSize, opts.Compression = 256, c
			data, _ := build(t, es, &opts)
			blocks := dataBlocks(t, data)
			b := blocks[len(blocks)/2]
			damaged := bytes.Clone(data)
			damaged[b.Handle.Offset+b.Handle.Length/2] ^= 0x55
			key := []byte(b.Keys[len(b.Keys)/2])
			for _, o := range namedOpens {
				t.Run(fmt.Sprintf("%s/%v/%s", k.name, c, o.how), func(t *testing.T) {
					r, name := o.open(t, damaged)
					check := func(what string, err error) {
						t.Helper()
						ce := wantCorrupt(t, err, len(data))
						if ce.Section != format.SectionDataBlock {
							t.Fatalf("%s: %q: section %q, want the data block", what, err, ce.Section)
						}
						if ce.File != name {
							t.Fatalf("%s: %q: File = %q, want %q", what, err, ce.File, name)
						}
						want := "sstable: corrupt "
						if name != "" {
							want = name + ": " + want
						}
						if !strings.HasPrefix(err.Error(), want) {
							t.Fatalf("%s: %q does not start with %q", what, err, want)
						}
					}
					_, err := r.Get(key)
					check("Get", err)
					_, err = r.Has(key)
					check("Has", err)
					if _, err := r.Get([]byte("absent")); err != reader.ErrNotFound {
						t.Fatalf("Get(absent) = %v, want the ErrNotFound sentinel itself", err)
					}

					it := r.NewIterator()
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						n++
					}
					if n >= len(es) {
						t.Fatalf("a scan over a damaged block gave all %d entries", n)
					}
					check("Iterator.Err", it.Err())
					if it.Err() != it.Err() {
						t.Fatal("Iterator.Err changes between calls")
					}
					check("Iterator.Close", it.Close())
					check("Iterator.Close again", it.Close())

					it = r.NewIterator()
					if it.SeekGE(key) {
						t.Fatalf("SeekGE into the damaged block at %q", it.Key())
					}
					check("SeekGE, Err", it.Err())
					it.Close()

					check("Verify", r.Verify())

					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
					for what, err := range map[string]error{
						"Get after Close":    func() error { _, err := r.Get(key); return err }(),
						"Has after Close":    func() error { _, err := r.Has(key); return err }(),
						"Verify after Close": r.Verify(),
						"NewIter after Close": func() error {
							it := r.NewIterator()
							it.First()
							return it.Close()
						}(),
					} {
						if !errors.Is(err, reader.ErrClosed) {
							t.Fatalf("%s: %v, want ErrClosed", what, err)
						}
						if name != "" && !strings.HasPrefix(err.Error(), name+": ") || name == "" && err != reader.ErrClosed {
							t.Fatalf("%s: %q does not name %q", what, err, name)
						}
					}
				})
			}
		}
	}
}

// failingReaderAt reads from r until fail is set, then fails every read
// with errInjected.
type failingReaderAt struct {
	r    io.ReaderAt
	fail atomic.Bool
}

var errInjected = errors.New("injected read failure")

func (f *failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.fail.Load() {
		return 0, errInjected
	}
	return f.r.ReadAt(p, off)
}

// TestReadErrorsNameTheFile checks that a failed read after New names the
// table given by Options.Name, and still wraps the source's error; and
// that a Reader from New without a name, or a missing key, costs no
// naming.
func TestReadErrorsNameTheFile(t *testing.T) {
	es := gappedEntries(600)
	data, _ := build(t, es, &builder.Options{BlockSize: 256})
	src := &failingReaderAt{r: bytes.NewReader(data)}
	const name = "tables/7.sst"
	r, err := reader.New(src, int64(len(data)), &reader.Options{Name: name, TailSize: 64, Cache: newCache(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src.fail.Store(true)
	_, err = r.Get([]byte(es[300].Key))
	if !errors.Is(err, errInjected) || errors.Is(err, format.ErrCorrupt) || !strings.HasPrefix(err.Error(), name+": sstable: read ") {
		t.Fatalf("Get with a failing source: %v", err)
	}
	it := r.NewIterator()
	if it.First() {
		t.Fatal("First with a failing source succeeded")
	}
	if err := it.Close(); !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("iterator with a failing source: %v", err)
	}
	if err := r.Verify(); !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("Verify with a failing source: %v", err)
	}
	src.fail.Store(false) // failed reads are not remembered
	if v, err := r.Get([]byte(es[300].Key)); err != nil || string(v) != es[300].Value {
		t.Fatalf("Get after the source recovered: %q, %v", v, err)
	}
}

// TestNamedReaderAllocs checks that naming costs the lookups nothing: a
// Get of a present key into a buffer with room, of an absent key, and
// Has, allocate nothing on a named reader, mapped or not.
func TestNamedReaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	es := gappedEntries(2000)
	data, _ := build(t, es, &builder.Options{BlockSize: 1024, Compression: format.NoCompression})
	path := writeFile(t, t.TempDir(), data)
	mapped, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	named, err := reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Name: filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	buf := make([]byte, 0, 256)
	present, absent, has := []byte(es[1234].Key), []byte("key0012345"), []byte(es[99].Key)
	for what, r := range map[string]*reader.Reader{"Open": mapped, "New/Name": named} {
		for call, f := range map[string]func(){
			"Get present": func() {
				if _, err := r.GetAppend(buf[:0], present); err != nil {
					t.Fatal(err)
				}
			},
			"Get absent": func() {
				if _, err := r.GetAppend(buf[:0], absent); err != reader.ErrNotFound {
					t.Fatal(err)
				}
			},
			"Has": func() {
				if ok, err := r.Has(has); !ok || err != nil {
					t.Fatal(ok, err)
				}
			},
		} {
			if n := testing.AllocsPerRun(200, f); n != 0 {
				t.Errorf("%s: %s: %v allocations per call", what, call, n)
			}
		}
	}
}
