package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// partOpts make a small table partitioned: any size over the threshold,
// partitions of about 1 KiB.
func partOpts(c format.Compression) *builder.Options {
	return &builder.Options{BlockSize: 256, Compression: c, PartitionThreshold: 1, PartitionSize: 1024}
}

// partTable builds a Version3 table of n entries and checks that it has
// several partitions.
func partTable(t testing.TB, n int, c format.Compression) ([]byte, []entry) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %x", i, i*7919) })
	data, p := build(t, es, partOpts(c))
	if p.FormatVersion != format.Version3 {
		t.Fatalf("format version %d, want %d", p.FormatVersion, format.Version3)
	}
	return data, es
}

// TestPartitioned reads a partitioned table every way, mapped and over a
// ReaderAt, with caches that hold everything, nothing, or a few
// partitions: Gets of every key, absent keys, scans both ways, seeks,
// MayContain and Verify.
func TestPartitioned(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		data, es := partTable(t, 5000, c)
		for name, opts := range map[string]func() *reader.Options{
			"default":   func() *reader.Options { return nil },
			"cache0":    func() *reader.Options { return cacheOpts(t, 0) },
			"cache8KiB": func() *reader.Options { return cacheOpts(t, 8<<10) },
		} {
			t.Run(fmt.Sprintf("%s/%s", c, name), func(t *testing.T) {
				sources(t, data, opts(), func(t *testing.T, r *reader.Reader) {
					checkPartitioned(t, r, es)
				})
			})
		}
	}
}

func checkPartitioned(t *testing.T, r *reader.Reader, es []entry) {
	if v := r.Properties().FormatVersion; v != format.Version3 {
		t.Fatalf("format version %d", v)
	}
	for i, e := range es {
		v, err := r.Get([]byte(e.Key))
		if err != nil || string(v) != e.Value {
			t.Fatalf("Get(%q) = %q, %v; want %q", e.Key, v, err, e.Value)
		}
		if i%7 == 0 && !r.MayContain([]byte(e.Key)) {
			t.Fatalf("MayContain(%q) = false", e.Key)
		}
	}
	ruledOut := 0
	for i := range es {
		k := []byte(es[i].Key + "x")
		if _, err := r.Get(k); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(absent %q) = %v, want ErrNotFound", k, err)
		}
		if !r.MayContain(k) {
			ruledOut++
		}
	}
	if ruledOut < len(es)*9/10 {
		t.Errorf("the filters ruled out %d of %d absent keys", ruledOut, len(es))
	}
	for _, k := range []string{"", "a", "key", "zzz"} {
		if _, err := r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrNotFound", k, err)
		}
	}
	got, err := scan(r)
	if err != nil || !slices.Equal(got, es) {
		t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
	}
	got, err = scanBack(r)
	if err != nil || !slices.Equal(got, reversed(es)) {
		t.Fatalf("backward scan: %d of %d entries, %v", len(got), len(es), err)
	}
	it := r.NewIterator()
	defer it.Close()
	for i := 0; i < len(es); i += 37 {
		for _, k := range []string{es[i].Key, es[i].Key[:len(es[i].Key)-1]} {
			j, _ := slices.BinarySearchFunc(es, k, func(e entry, k string) int { return bytes.Compare([]byte(e.Key), []byte(k)) })
			if !it.SeekGE([]byte(k)) || string(it.Key()) != es[j].Key {
				t.Fatalf("SeekGE(%q) at %q, want %q (%v)", k, it.Key(), es[j].Key, it.Err())
			}
			if j > 0 && (!it.Prev() || string(it.Key()) != es[j-1].Key) {
				t.Fatalf("Prev after SeekGE(%q) at %q, want %q", k, it.Key(), es[j-1].Key)
			}
		}
	}
	if it.SeekGE([]byte("zzz")) || it.Err() != nil {
		t.Fatalf("SeekGE past the end: %v, %v", it.Valid(), it.Err())
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedReadCounts checks the reads of the caps on a
// partitioned table over a ReaderAt: New reads the tail (which holds the
// top-level index); a cold Get of a present key reads one partition and
// its data block (three reads counting New's), of an absent key the
// filter rules out one partition (two); each read of a partition is its
// filter and index partition together, a few KiB; a second Get in the
// same partition reads only its data block; a full scan reads at most two
// per MiB.
func TestPartitionedReadCounts(t *testing.T) {
	es := numbered(200000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	// About 450 KiB of index and filter: under the default threshold
	// (4 MiB), partitioned by a lower one.
	data, p := build(t, es, &builder.Options{PartitionThreshold: 256 << 10})
	if p.FormatVersion != format.Version3 {
		t.Fatalf("a %d-entry table with a 256 KiB threshold: format version %d, want 3", len(es), p.FormatVersion)
	}
	src := &recorder{data: data}
	open := func() *reader.Reader {
		r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(src.take()); n != 1 {
			t.Fatalf("New made %d reads, want 1", n)
		}
		return r
	}
	r := open()
	if _, err := r.Get([]byte(es[123456].Key)); err != nil {
		t.Fatal(err)
	}
	reads := src.take()
	if len(reads) != 2 {
		t.Fatalf("cold Get of a present key: %d reads after New's, want 2 (partition, data block)", len(reads))
	}
	if n := reads[0][1]; n > reader.PartitionWindow {
		t.Errorf("the partition read is %d bytes, want at most PartitionWindow (%d)", n, reader.PartitionWindow)
	}
	if _, err := r.Get([]byte(es[123457].Key)); err != nil {
		t.Fatal(err)
	}
	if n := len(src.take()); n > 1 {
		t.Errorf("a Get in a cached partition made %d reads, want at most 1", n)
	}
	r.Close()

	// A full scan reads the partitions ahead too: at most two reads per
	// MiB, as over a version 1 table.
	r = open()
	got, err := scan(r)
	if err != nil || len(got) != len(es) {
		t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
	}
	mib := float64(len(data)) / (1 << 20)
	if n := len(src.take()); float64(n) > max(2*mib, 4) {
		t.Errorf("full scan of %.1f MiB: %d reads", mib, n)
	}
	r.Close()

	for i := 0; i < 20; i++ {
		r := open()
		k := []byte(es[i*9973].Key + "x")
		if _, err := r.Get(k); !errors.Is(err, reader.ErrNotFound) {
			t.Fatal(err)
		}
		reads := src.take()
		if len(reads) > 2 {
			t.Fatalf("cold Get of an absent key: %d reads after New's", len(reads))
		}
		if len(reads) == 2 {
			t.Logf("absent key %q: a filter false positive", k)
		}
		r.Close()
	}
}

// TestPartitionedSmallTablesUnchanged checks that tables under the
// threshold keep version 1, and that a negative threshold never
// partitions.
func TestPartitionedSmallTablesUnchanged(t *testing.T) {
	es := numbered(2000, func(i int) string { return fmt.Sprint(i) })
	if _, p := build(t, es, nil); p.FormatVersion != format.Version1 {
		t.Errorf("small table: version %d, want 1", p.FormatVersion)
	}
	if _, p := build(t, es, &builder.Options{PartitionThreshold: -1, PartitionSize: 64}); p.FormatVersion != format.Version1 {
		t.Errorf("negative threshold: version %d, want 1", p.FormatVersion)
	}
	if _, p := build(t, es, &builder.Options{PartitionThreshold: 1, HashIndex: true}); p.FormatVersion != format.Version2 {
		t.Errorf("hash index: version %d, want 2", p.FormatVersion)
	}
}

// TestPartitionedReadFaults is TestReadFaults on a partitioned table: a
// failed read of a partition is an I/O error, never corruption, and is
// not remembered.
func TestPartitionedReadFaults(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		data, es := partTable(t, 1500, c)
		for name, opts := range faultOptions(t) {
			t.Run(fmt.Sprintf("%s/%s", c, name), func(t *testing.T) {
				testReadFaults(t, data, es, opts)
			})
		}
	}
}

// TestPartitionedBitFlipSweep flips every third bit of a small
// partitioned table (with the race detector or -short, fewer), every bit
// of each byte over the run of strides: Open or Verify must report each,
// and no read may panic or give a wrong answer.
func TestPartitionedBitFlipSweep(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []struct {
		c    format.Compression
		opts *reader.Options
	}{
		{format.SnappyCompression, nil},
		{format.NoCompression, cacheOpts(t, 0)},
		{format.ZstdCompression, nil}, // the golden prefixparted.sst: splitter, user properties
	} {
		g := partSweepTable(t, v.c)
		t.Run(g.name, func(t *testing.T) {
			st := bitFlipSweep(t, g, 3*hashSweepStride(), v.opts, dir)
			if st.undetected != 0 {
				t.Errorf("%d flips went undetected", st.undetected)
			}
		})
	}
}

// TestPartitionedTruncationSweep cuts a small partitioned table to every
// shorter length.
func TestPartitionedTruncationSweep(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []format.Compression{format.SnappyCompression, format.NoCompression} {
		g := partSweepTable(t, c)
		t.Run(g.name, func(t *testing.T) { truncationSweep(t, g, nil, dir) })
	}
}

// partSweepTable returns the golden partitioned table (snappy, 176
// entries in partitions of about 256 bytes), for ZstdCompression the
// golden prefixparted.sst (the same with zstd, a splitter and a user
// property), or for NoCompression a table of 200 entries built like it.
func partSweepTable(t *testing.T, c format.Compression) *goldenTable {
	t.Helper()
	if name := map[format.Compression]string{format.SnappyCompression: "partitioned.sst", format.ZstdCompression: "prefixparted.sst"}[c]; name != "" {
		data, err := os.ReadFile(filepath.Join(sweepGoldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return newGoldenTable(t, name, data)
	}
	es := numbered(200, func(i int) string { return fmt.Sprintf("v%d", i) })
	data, p := build(t, es, &builder.Options{BlockSize: 256, RestartInterval: 4, Compression: c, PartitionThreshold: 1, PartitionSize: 256})
	if p.FormatVersion != format.Version3 || p.NumDataBlocks < 8 {
		t.Fatalf("sweep table: format version %d, %d data blocks", p.FormatVersion, p.NumDataBlocks)
	}
	return newGoldenTable(t, "v3-"+c.String(), data)
}

// TestPartitionedCloseDuringFirstUse closes readers of a partitioned table
// while goroutines make their first lookups and scans, mapped and over a
// ReaderAt: every call gives the right answer or ErrClosed, and none
// panics, even when Close comes before the partitions' state is set up.
func TestPartitionedCloseDuringFirstUse(t *testing.T) {
	data, es := partTable(t, 3000, format.SnappyCompression)
	path := writeFile(t, t.TempDir(), data)
	for round := 0; round < 40; round++ {
		var r *reader.Reader
		var err error
		if round%2 == 0 {
			r, err = reader.New(bytes.NewReader(data), int64(len(data)), cacheOpts(t, 1<<20))
		} else {
			r, err = reader.Open(path, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < len(es); i += 97 {
					v, err := r.Get([]byte(es[i].Key))
					if err != nil && !errors.Is(err, reader.ErrClosed) || err == nil && string(v) != es[i].Value {
						t.Errorf("Get(%q) = %q, %v", es[i].Key, v, err)
						return
					}
					r.MayContain([]byte(es[i].Key))
				}
				if g == 0 {
					if got, err := scan(r); err == nil && len(got) != len(es) {
						t.Errorf("scan: %d of %d entries, no error", len(got), len(es))
					} else if err != nil && !errors.Is(err, reader.ErrClosed) {
						t.Errorf("scan: %v", err)
					}
				}
			}()
		}
		r.Close()
		wg.Wait()
	}
}

// TestPartitionWindow checks that a lookup missing its partition over a
// ReaderAt caches the partitions around it (PartitionWindow): after 300
// random present Gets over a table of a few hundred small partitions,
// absent keys read no partitions, where one partition per read would
// leave about a quarter of them unread. No read of partitions exceeds
// PartitionWindow.
func TestPartitionWindow(t *testing.T) {
	es := numbered(200000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	data, p := build(t, es, &builder.Options{PartitionThreshold: 256 << 10, PartitionSize: 2 << 10})
	if p.FormatVersion != format.Version3 {
		t.Fatalf("format version %d, want 3", p.FormatVersion)
	}
	src := &recorder{data: data}
	r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src.take()
	partReads := func() (n int) {
		for _, rd := range src.take() {
			if rd[0] >= int64(p.DataSize) {
				n++
				if rd[1] > reader.PartitionWindow {
					t.Errorf("a %d-byte read of partitions, more than PartitionWindow", rd[1])
				}
			}
		}
		return n
	}
	for j := range 300 {
		if _, err := r.Get([]byte(es[(j*7919+13)%len(es)].Key)); err != nil {
			t.Fatal(err)
		}
	}
	present := partReads()
	absent := 0
	for j := range 1000 {
		if _, err := r.Get([]byte(es[(j*104729+7)%len(es)].Key + "x")); !errors.Is(err, reader.ErrNotFound) {
			t.Fatal(err)
		}
		absent += partReads()
	}
	t.Logf("300 present Gets read partitions %d times; then 1000 absent Gets %d times", present, absent)
	if absent > 2 {
		t.Errorf("after 300 present Gets, 1000 absent ones read partitions %d times, want at most 2", absent)
	}
}
