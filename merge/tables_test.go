package merge_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// table writes a table of the given keys (values "v"+key) and spans
// ("start-end" pairs, value "RD") and opens it.
func table(t testing.TB, dir string, keys []string, spans ...string) *reader.Reader {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("t%d.sst", caseSeq.Add(1)))
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := b.Add([]byte(k), []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i+1 < len(spans); i += 2 {
		if err := b.AddSpan([]byte(spans[i]), []byte(spans[i+1]), []byte("RD")); err != nil {
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
	t.Cleanup(func() { r.Close() })
	return r
}

func scan(t *testing.T, levels []merge.Level, o *merge.Options) ([]string, error) {
	it := merge.NewIterator(levels, o)
	var keys []string
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, string(it.Key()))
	}
	return keys, it.Close()
}

func TestTablesOrder(t *testing.T) {
	dir := t.TempDir()
	ab := table(t, dir, []string{"a", "b"})
	cd := table(t, dir, []string{"c", "d"})
	bc := table(t, dir, []string{"b", "c"})
	spanToC := table(t, dir, []string{"a"}, "a", "c") // spans reach c, exclusive
	spanOnly := table(t, dir, nil, "x", "z")
	empty := table(t, dir, nil)
	for _, tc := range []struct {
		name string
		rs   []*reader.Reader
		want []string // nil: ErrTableOrder
	}{
		{"ordered", []*reader.Reader{ab, cd}, []string{"a", "b", "c", "d"}},
		{"empty tables anywhere", []*reader.Reader{empty, ab, empty, cd, empty}, []string{"a", "b", "c", "d"}},
		{"a span's end at the next table's first key", []*reader.Reader{spanToC, cd, spanOnly}, []string{"a", "c", "d"}},
		{"reversed", []*reader.Reader{cd, ab}, nil},
		{"overlapping keys", []*reader.Reader{ab, bc}, nil},
		{"a span over the next table", []*reader.Reader{spanToC, bc}, nil},
		{"same table twice", []*reader.Reader{ab, ab}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := []merge.Level{merge.Tables(tc.rs...)}
			got, err := scan(t, levels, nil)
			_, gerr := merge.Get(levels, []byte("a"), nil)
			_, cerr := merge.Compact(levels, &merge.CompactOptions{Dir: filepath.Join(t.TempDir(), "out")})
			if tc.want == nil {
				for _, e := range []error{err, gerr, cerr} {
					if !errors.Is(e, merge.ErrTableOrder) {
						t.Fatalf("error %v, want ErrTableOrder (scan %v, Get %v, Compact %v)", e, err, gerr, cerr)
					}
				}
				return
			}
			if err != nil || cerr != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("scan %q, %v; Compact %v; want %q", got, err, cerr, tc.want)
			}
		})
	}
}

// TestCorruptTable checks that damage in one table of the stack stops
// the iterator and Get with an error wrapping format.ErrCorrupt that
// names the table, and makes Compact fail leaving no output.
func TestCorruptTable(t *testing.T) {
	dir := t.TempDir()
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("key%05d", i)
	}
	good := table(t, dir, keys[:1000])
	path := filepath.Join(dir, "bad.sst")
	b, err := builder.Create(path, &builder.Options{Compression: format.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := b.Add([]byte(k), bytes.Repeat([]byte("x"), 50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)*3/4] ^= 0x40 // inside a data block of keys only this table holds
	bad, err := reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	levels := []merge.Level{merge.Tables(good), merge.Tables(bad)}
	_, err = scan(t, levels, nil)
	if !errors.Is(err, format.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("bad.sst")) {
		t.Fatalf("scan: %v, want a corruption naming bad.sst", err)
	}
	var getErr error
	for _, k := range keys[1000:] {
		if _, getErr = merge.Get(levels, []byte(k), nil); getErr != nil && getErr != reader.ErrNotFound {
			break
		}
	}
	if !errors.Is(getErr, format.ErrCorrupt) {
		t.Fatalf("Get: %v, want a corruption", getErr)
	}
	out := filepath.Join(dir, "out")
	if _, err := merge.Compact(levels, &merge.CompactOptions{Dir: out, TargetTableSize: 1 << 10}); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Compact: %v, want a corruption", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed compaction left its output directory: %v", err)
	}
}

// TestCompactDir checks that Compact writes only into a new or empty
// directory, and leaves one it was given as it was when it fails.
func TestCompactDir(t *testing.T) {
	dir := t.TempDir()
	levels := []merge.Level{merge.Tables(table(t, dir, []string{"a", "b"}))}
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644)
	if _, err := merge.Compact(levels, &merge.CompactOptions{Dir: full}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("Compact into a directory holding notes.txt: %v", err)
	}
	if _, err := merge.Compact(levels, &merge.CompactOptions{}); err == nil {
		t.Fatal("Compact with no Dir succeeded")
	}
	if _, err := merge.Compact(levels, nil); err == nil {
		t.Fatal("Compact with nil options succeeded")
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	infos, err := merge.Compact(levels, &merge.CompactOptions{Dir: empty})
	if err != nil || len(infos) != 1 || infos[0].Entries != 2 {
		t.Fatalf("Compact into an empty directory: %+v, %v", infos, err)
	}
	if _, err := merge.Compact(levels, &merge.CompactOptions{Dir: empty}); err == nil {
		t.Fatal("a second Compact into the same directory succeeded")
	}
}

// TestShared reads the same levels from many goroutines at once:
// iterators, Gets and a Compact (run it with -race).
func TestShared(t *testing.T) {
	dir := t.TempDir()
	var levels []merge.Level
	for l := range 4 {
		var keys []string
		for i := l; i < 3000; i += l + 1 {
			keys = append(keys, fmt.Sprintf("key%05d", i))
		}
		levels = append(levels, merge.Tables(table(t, dir, keys[:len(keys)/2]), table(t, dir, keys[len(keys)/2:], fmt.Sprintf("key%05d", 2900), "kez")))
	}
	want, err := scan(t, levels, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch g {
			case 0:
				if _, err := merge.Compact(levels, &merge.CompactOptions{Dir: filepath.Join(dir, "out"), TargetTableSize: 8 << 10}); err != nil {
					errs <- err
				}
			default:
				for range 5 {
					got, err := scan(t, levels, nil)
					if err != nil || len(got) != len(want) {
						errs <- fmt.Errorf("scan: %d keys, %v; want %d", len(got), err, len(want))
						return
					}
					for _, k := range want[g*10 : g*10+50] {
						if _, err := merge.Get(levels, []byte(k), nil); err != nil {
							errs <- fmt.Errorf("Get(%s): %v", k, err)
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
