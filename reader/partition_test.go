package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// partOpts make a small table partitioned: any size over the threshold,
// partitions of about 1 KiB.
func partOpts(c format.Compression) *builder.Options {
	return &builder.Options{BlockSize: 256, Compression: c, PartitionThreshold: 1, PartitionSize: 1024}
}

// partTable builds a partitioned table of kind k (Version3 without or
// with a hash index, or Version4) of n entries, in partitions of about
// 1 KiB.
func partTable(t testing.TB, n int, c format.Compression, k partKind) ([]byte, []entry) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %x", i, i*7919) })
	opts := k.opts(partOpts(c))
	data, p := build(t, es, opts)
	k.check(t, p)
	return data, es
}

// partKind is a partitioned layout: version 3 without a hash index
// (FormatVersion: format.Version1) or with one (HashIndex), or version 4
// (the default) with Properties.Partitioned.
type partKind struct {
	name string
	hash bool   // builder.Options.HashIndex
	fv   uint32 // builder.Options.FormatVersion
}

// opts sets o's HashIndex and FormatVersion to ask for k, and returns o.
func (k partKind) opts(o *builder.Options) *builder.Options {
	o.HashIndex, o.FormatVersion = k.hash, k.fv
	return o
}

// version is the format version of k's tables.
func (k partKind) version() uint32 {
	if k.hash || k.fv == format.Version1 {
		return format.Version3
	}
	return format.Version4
}

// hasHashIndex reports whether k's tables have a hash index section.
func (k partKind) hasHashIndex() bool { return k.hash || k.version() == format.Version4 }

// check fails unless p describes a partitioned table of kind k.
func (k partKind) check(t testing.TB, p format.Properties) {
	t.Helper()
	if p.FormatVersion != k.version() || (p.HashIndexSize != 0) != k.hasHashIndex() || p.Partitioned != (k.version() == format.Version4) {
		t.Fatalf("format version %d, hash index size %d, partitioned %v; want %s: version %d, hash index %v", p.FormatVersion, p.HashIndexSize, p.Partitioned, k.name, k.version(), k.hasHashIndex())
	}
}

// partKinds are the partitioned layouts the tests read: version 3
// without and with a hash index, and version 4.
var partKinds = []partKind{{"v3", false, format.Version1}, {"v3-hash", true, 0}, {"v4 partitioned", false, 0}}

// TestPartitioned reads a partitioned table, without and with a hash
// index, every way, mapped and over a ReaderAt, with caches that hold
// everything, nothing, or a few partitions: Gets of every key, absent
// keys, scans both ways, seeks, MayContain and Verify.
func TestPartitioned(t *testing.T) {
	for _, k := range partKinds {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			data, es := partTable(t, 5000, c, k)
			for name, opts := range map[string]func() *reader.Options{
				"default":   func() *reader.Options { return nil },
				"cache0":    func() *reader.Options { return cacheOpts(t, 0) },
				"cache8KiB": func() *reader.Options { return cacheOpts(t, 8<<10) },
			} {
				t.Run(fmt.Sprintf("%s/%s/%s", k.name, c, name), func(t *testing.T) {
					sources(t, data, opts(), func(t *testing.T, r *reader.Reader) {
						checkPartitioned(t, r, es, k)
					})
				})
			}
		}
	}
}

func checkPartitioned(t *testing.T, r *reader.Reader, es []entry, k partKind) {
	t.Helper()
	k.check(t, r.Properties())
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
// Version 3 and version 4 (whose hash index a reader over a ReaderAt
// never reads: see TestPartitionedHashReadCounts) alike.
func TestPartitionedReadCounts(t *testing.T) {
	es := numbered(200000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	for _, k := range []partKind{partKinds[0], partKinds[2]} {
		t.Run(k.name, func(t *testing.T) { testPartitionedReadCounts(t, es, k) })
	}
}

func testPartitionedReadCounts(t *testing.T, es []entry, k partKind) {
	// About 450 KiB of index and filter: under the default threshold
	// (4 MiB), partitioned by a lower one.
	data, p := build(t, es, k.opts(&builder.Options{PartitionThreshold: 256 << 10}))
	k.check(t, p)
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
	// A key far from the tail, whose partition New's tail does not hold.
	if _, err := r.Get([]byte(es[12345].Key)); err != nil {
		t.Fatal(err)
	}
	reads := src.take()
	if len(reads) != 2 {
		t.Fatalf("cold Get of a present key: %d reads after New's, want 2 (partition, data block)", len(reads))
	}
	if n := reads[0][1]; n > reader.PartitionWindow {
		t.Errorf("the partition read is %d bytes, want at most PartitionWindow (%d)", n, reader.PartitionWindow)
	}
	if _, err := r.Get([]byte(es[12346].Key)); err != nil {
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
// threshold keep version 1 (2 with a hash index), that a negative
// threshold never partitions, and that a hash index does not keep a table
// over the threshold from being partitioned.
func TestPartitionedSmallTablesUnchanged(t *testing.T) {
	es := numbered(2000, func(i int) string { return fmt.Sprint(i) })
	if _, p := build(t, es, &builder.Options{FormatVersion: format.Version1}); p.FormatVersion != format.Version1 {
		t.Errorf("small table: version %d, want 1", p.FormatVersion)
	}
	if _, p := build(t, es, &builder.Options{FormatVersion: format.Version1, PartitionThreshold: -1, PartitionSize: 64}); p.FormatVersion != format.Version1 {
		t.Errorf("negative threshold: version %d, want 1", p.FormatVersion)
	}
	// Version 4, the default: one-level under the threshold and with a
	// negative one, partitioned (still version 4) over it.
	if _, p := build(t, es, nil); p.FormatVersion != format.Version4 || p.Partitioned || p.HashIndexSize == 0 {
		t.Errorf("small table, default options: version %d, partitioned %v, hash index size %d; want version 4, one-level, with a hash index", p.FormatVersion, p.Partitioned, p.HashIndexSize)
	}
	if _, p := build(t, es, &builder.Options{PartitionThreshold: -1, PartitionSize: 64}); p.FormatVersion != format.Version4 || p.Partitioned {
		t.Errorf("negative threshold, version 4: version %d, partitioned %v; want 4, one-level", p.FormatVersion, p.Partitioned)
	}
	if _, p := build(t, es, &builder.Options{PartitionThreshold: 1}); p.FormatVersion != format.Version4 || !p.Partitioned || p.HashIndexSize == 0 {
		t.Errorf("threshold 1, version 4: version %d, partitioned %v, hash index size %d; want version 4, partitioned, with a hash index", p.FormatVersion, p.Partitioned, p.HashIndexSize)
	}
	if _, p := build(t, es, &builder.Options{HashIndex: true}); p.FormatVersion != format.Version2 {
		t.Errorf("small table with a hash index: version %d, want 2", p.FormatVersion)
	}
	if _, p := build(t, es, &builder.Options{PartitionThreshold: 1, HashIndex: true}); p.FormatVersion != format.Version3 || p.HashIndexSize == 0 {
		t.Errorf("hash index, threshold 1: version %d, hash index size %d; want version 3 with a hash index", p.FormatVersion, p.HashIndexSize)
	}
}

// TestPartitionedReadFaults is TestReadFaults on a partitioned table,
// without and with a hash index: a failed read of a partition is an I/O
// error, never corruption, and is not remembered.
func TestPartitionedReadFaults(t *testing.T) {
	for _, k := range partKinds {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			data, es := partTable(t, 1500, c, k)
			for name, opts := range faultOptions(t) {
				t.Run(fmt.Sprintf("%s/%s/%s", k.name, c, name), func(t *testing.T) {
					testReadFaults(t, data, es, opts)
				})
			}
		}
	}
}

// TestPartitionedBitFlipSweep flips every third bit of a small
// partitioned table with SSTABLE_LONG_TESTS=1 (every 21st under plain go
// test, fewer with the race detector), every bit
// of each byte over the run of strides: Open or Verify must report each,
// and no read may panic or give a wrong answer. The tables with a hash
// index, whose mapped Gets take it where reads over a ReaderAt read
// partitions, are read mapped at every fifth flip tried rather than every
// 97th: the golden hashparted.sst (snappy: decoded offsets in its slots)
// and an uncompressed one (file offsets).
func TestPartitionedBitFlipSweep(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []struct {
		c    format.Compression
		k    partKind
		opts *reader.Options
	}{
		{format.SnappyCompression, partKinds[0], nil},
		{format.NoCompression, partKinds[0], cacheOpts(t, 0)},
		{format.ZstdCompression, partKinds[0], nil},   // the golden prefixparted.sst: splitter, user properties
		{format.SnappyCompression, partKinds[1], nil}, // the golden hashparted.sst
		{format.NoCompression, partKinds[1], cacheOpts(t, 0)},
		{format.SnappyCompression, partKinds[2], nil}, // version 4
		{format.NoCompression, partKinds[2], cacheOpts(t, 0)},
	} {
		g := partSweepTable(t, v.c, v.k)
		t.Run(g.name, func(t *testing.T) {
			stride, mapEvery := 3*hashSweepStride(), 97
			if v.k.hasHashIndex() {
				mapEvery = 5 * stride
			}
			st := bitFlipSweepMapped(t, g, stride, v.opts, dir, mapEvery)
			if st.undetected != 0 {
				t.Errorf("%d flips went undetected", st.undetected)
			}
		})
	}
}

// TestPartitionedTruncationSweep cuts small partitioned tables, without
// and with a hash index, to every shorter length.
func TestPartitionedTruncationSweep(t *testing.T) {
	dir := t.TempDir()
	for _, k := range partKinds {
		for _, c := range []format.Compression{format.SnappyCompression, format.NoCompression} {
			g := partSweepTable(t, c, k)
			t.Run(g.name, func(t *testing.T) { truncationSweep(t, g, nil, dir) })
		}
	}
}

// partSweepTable returns the golden partitioned table (snappy, 176
// entries in partitions of about 256 bytes), for ZstdCompression the
// golden prefixparted.sst (the same with zstd, a splitter and a user
// property), or for NoCompression a table of 200 entries built like it;
// with hash, for SnappyCompression the golden hashparted.sst (the entries
// and options of partitioned.sst, with a hash index), or for
// NoCompression a table of 200 entries built like it. Version 4 (k)
// has no golden table: a table of 200 entries built like the others.
func partSweepTable(t *testing.T, c format.Compression, k partKind) *goldenTable {
	t.Helper()
	hash := k.hash
	golden := map[format.Compression]string{format.SnappyCompression: "partitioned.sst", format.ZstdCompression: "prefixparted.sst"}
	if hash {
		golden = map[format.Compression]string{format.SnappyCompression: "hashparted.sst"}
	}
	if k.version() == format.Version4 {
		golden = nil
	}
	if name := golden[c]; name != "" {
		data, err := os.ReadFile(filepath.Join(sweepGoldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return newGoldenTable(t, name, data)
	}
	es := numbered(200, func(i int) string { return fmt.Sprintf("v%d", i) })
	data, p := build(t, es, k.opts(&builder.Options{BlockSize: 256, RestartInterval: 4, Compression: c, PartitionThreshold: 1, PartitionSize: 256}))
	k.check(t, p)
	if p.NumDataBlocks < 8 {
		t.Fatalf("sweep table: format version %d, %d data blocks, hash index size %d", p.FormatVersion, p.NumDataBlocks, p.HashIndexSize)
	}
	name := "v3-" + c.String()
	if hash {
		name += "-hash"
	}
	if k.version() == format.Version4 {
		name = "v4-partitioned-" + c.String()
	}
	return newGoldenTable(t, name, data)
}

// TestPartitionedCloseDuringFirstUse closes readers of a partitioned
// table (without and with a hash index) while goroutines make their first
// lookups and scans, mapped and over a ReaderAt: every call gives the
// right answer or ErrClosed, and none panics, even when Close comes
// before the partitions' state is set up.
func TestPartitionedCloseDuringFirstUse(t *testing.T) {
	for _, k := range partKinds {
		t.Run(k.name, func(t *testing.T) { testPartitionedCloseDuringFirstUse(t, k) })
	}
}

func testPartitionedCloseDuringFirstUse(t *testing.T, k partKind) {
	data, es := partTable(t, 3000, format.SnappyCompression, k)
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

// TestPartitionWindow checks how lookups over a ReaderAt read the
// partitions of a Version3 table. The first miss reads one aligned
// PartitionWindow; the second reads every partition not cached yet in one
// ReadAt (PartitionPrefetchShare), after which present and absent keys
// read no partition. With a cache too small for that prefetch, every read
// stays within a window and, once random lookups have read most windows,
// absent keys read almost none.
//
// Version 3 and version 4 alike (a reader over a ReaderAt never reads a
// partitioned version 4 table's hash index).
func TestPartitionWindow(t *testing.T) {
	es := numbered(200000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	for _, k := range []partKind{partKinds[0], partKinds[2]} {
		t.Run(k.name, func(t *testing.T) { testPartitionWindow(t, es, k) })
	}
}

func testPartitionWindow(t *testing.T, es []entry, k partKind) {
	data, p := build(t, es, k.opts(&builder.Options{PartitionThreshold: 256 << 10, PartitionSize: 2 << 10}))
	k.check(t, p)
	// The partitions lie between the data blocks (and the hash index
	// section, if any) and the top-level index.
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	partsStart, partsEnd := int64(p.DataSize+p.HashIndexSize), int64(f.Index.Offset)
	total := partsEnd - partsStart
	if total < 4*reader.PartitionWindow {
		t.Fatalf("%d bytes of partitions: too few for the test", total)
	}
	partReads := func(src *recorder) (reads [][2]int64) {
		for _, rd := range src.take() {
			if rd[0] >= partsStart && rd[0] < partsEnd {
				reads = append(reads, rd)
			}
		}
		return reads
	}
	present := func(j int) []byte { return []byte(es[(j*7919+13)%len(es)].Key) }
	absent := func(j int) []byte { return []byte(es[(j*104729+7)%len(es)].Key + "x") }

	t.Run("prefetch", func(t *testing.T) {
		src := &recorder{data: data}
		r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		src.take()
		j := 0
		get := func(key []byte) {
			if _, err := r.Get(key); err != nil {
				t.Fatal(err)
			}
			j++
		}
		get(present(j))
		if reads := partReads(src); len(reads) != 1 || reads[0][1] > reader.PartitionWindow {
			t.Fatalf("the first Get read partitions %v, want one read of at most %d bytes", reads, reader.PartitionWindow)
		}
		var second [][2]int64
		for len(second) == 0 && j < 1000 {
			get(present(j))
			second = partReads(src)
		}
		// New's tail holds the last partitions, which the reader keeps:
		// the read stops at the one (of about 2 KiB) that straddles the
		// tail's start.
		tailStart := max(partsStart, int64(len(data)-reader.DefaultTailSize))
		if len(second) != 1 || second[0][1] < tailStart-partsStart-2*reader.PartitionWindow || second[0][0]+second[0][1] > tailStart+4<<10 {
			t.Fatalf("the second partition miss read %v, want one read of the %d bytes of partitions before the tail's (from %d) but a window", second, tailStart-partsStart, tailStart)
		}
		for k := range 1000 {
			get(present(k))
			if _, err := r.Get(absent(k)); !errors.Is(err, reader.ErrNotFound) {
				t.Fatal(err)
			}
		}
		if reads := partReads(src); len(reads) != 0 {
			t.Errorf("after the prefetch, 1000 present and 1000 absent Gets read partitions %d times: %v", len(reads), reads)
		}
	})

	t.Run("windows", func(t *testing.T) {
		src := &recorder{data: data}
		// Room for every partition, but not for a prefetch of all of them.
		capacity := 3 * total
		if total <= capacity/reader.PartitionPrefetchShare {
			t.Fatalf("PartitionPrefetchShare %d: a %d-byte cache allows the prefetch", reader.PartitionPrefetchShare, capacity)
		}
		r, err := reader.New(src, int64(len(data)), cacheOpts(t, capacity))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		src.take()
		check := func() int {
			reads := partReads(src)
			for _, rd := range reads {
				if rd[1] > reader.PartitionWindow {
					t.Errorf("a %d-byte read of partitions, more than PartitionWindow", rd[1])
				}
			}
			return len(reads)
		}
		for j := range 300 {
			if _, err := r.Get(present(j)); err != nil {
				t.Fatal(err)
			}
		}
		presentReads := check()
		absentReads := 0
		for j := range 1000 {
			if _, err := r.Get(absent(j)); !errors.Is(err, reader.ErrNotFound) {
				t.Fatal(err)
			}
			absentReads += check()
		}
		t.Logf("300 present Gets read partitions %d times; then 1000 absent Gets %d times", presentReads, absentReads)
		if presentReads < 2 {
			t.Errorf("300 present Gets read partitions %d times: windows should take several", presentReads)
		}
		if absentReads > 2 {
			t.Errorf("after 300 present Gets, 1000 absent ones read partitions %d times, want at most 2", absentReads)
		}
	})
}

// TestPartitionedHashIndexUse checks which lookups of a partitioned table
// with a hash index go through it: a mapped reader's Gets and Has, of
// present and absent keys, take the hash index and read no partition (the
// slots' tags reject absent keys: see getHashed), while MayContain probes
// a partition's filter; a reader over a ReaderAt, or opened with NoMmap,
// never uses the hash index.
func TestPartitionedHashIndexUse(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		t.Run(c.String(), func(t *testing.T) {
			data, es := partTable(t, 3000, c, partKinds[1])
			path := writeFile(t, t.TempDir(), data)
			r, err := reader.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Mapped() {
				t.Skip("no mmap on this platform")
			}
			if !reader.UsesHashIndex(r) {
				t.Fatal("a mapped reader does not use the hash index")
			}
			for i, e := range es {
				v, err := r.Get([]byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
				}
				absent := []byte(e.Key + "x")
				if _, err := r.Get(absent); !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("Get(%q) = %v, want ErrNotFound", absent, err)
				}
				if ok, err := r.Has(absent); ok || err != nil {
					t.Fatalf("Has(%q) = %v, %v", absent, ok, err)
				}
				if i == 0 {
					if n := reader.PartitionsChecked(r); n != 0 {
						t.Fatalf("Gets through the hash index read %d partitions", n)
					}
				}
			}
			if n := reader.PartitionsChecked(r); n != 0 {
				t.Fatalf("%d Gets through the hash index read %d partitions", 2*len(es), n)
			}
			if !r.MayContain([]byte(es[0].Key)) || reader.PartitionsChecked(r) != 1 {
				t.Fatalf("MayContain: %d partitions read, want 1", reader.PartitionsChecked(r))
			}
			checkUnmappedPartitioned(t, data, path, es[7])
		})
	}
}

// TestPartitionedV4Lookups checks how a partitioned version 4 table is
// read: a mapped reader goes through the compact hash index and, from its
// first Get on (not from Open), the whole filter copied to the heap, so
// that Get, Has and MayContain of present and absent keys read no
// partition at all; readers without a mapping use neither and read the
// key's partition.
func TestPartitionedV4Lookups(t *testing.T) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		t.Run(c.String(), func(t *testing.T) {
			data, es := partTable(t, 3000, c, partKinds[2])
			path := writeFile(t, t.TempDir(), data)
			r, err := reader.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Mapped() {
				t.Skip("no mmap on this platform")
			}
			if p := r.Properties(); p.FormatVersion != format.Version4 || !p.Partitioned {
				t.Fatalf("format version %d, partitioned %v", p.FormatVersion, p.Partitioned)
			}
			if !reader.UsesHashIndex(r) || reader.HoldsFilter(r) {
				t.Fatalf("a mapped reader just opened uses the hash index %v, holds the filter %v (want true, false: the copy is made by the first Get)", reader.UsesHashIndex(r), reader.HoldsFilter(r))
			}
			if _, err := r.Get([]byte(es[0].Key)); err != nil || !reader.HoldsFilter(r) {
				t.Fatalf("first Get: %v; holds the filter %v", err, reader.HoldsFilter(r))
			}
			for _, e := range es {
				v, err := r.Get([]byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
				}
				absent := []byte(e.Key + "x")
				if _, err := r.Get(absent); !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("Get(%q) = %v, want ErrNotFound", absent, err)
				}
				if ok, err := r.Has(absent); ok || err != nil {
					t.Fatalf("Has(%q) = %v, %v", absent, ok, err)
				}
				if !r.MayContain([]byte(e.Key)) {
					t.Fatalf("MayContain(%q) = false", e.Key)
				}
			}
			if n := reader.PartitionsChecked(r); n != 0 {
				t.Fatalf("%d Gets, Has and MayContain read %d partitions, want 0", 4*len(es), n)
			}
			checkUnmappedPartitioned(t, data, path, es[7])
		})
	}
}

// checkUnmappedPartitioned checks that readers of a partitioned table
// without a mapping (New, and Open with NoMmap) use neither its hash
// index nor a copy of its filter, and find e and miss a key after it.
func checkUnmappedPartitioned(t *testing.T, data []byte, path string, e entry) {
	t.Helper()
	for name, open := range map[string]func() (*reader.Reader, error){
		"New":    func() (*reader.Reader, error) { return reader.New(bytes.NewReader(data), int64(len(data)), nil) },
		"NoMmap": func() (*reader.Reader, error) { return reader.Open(path, &reader.Options{NoMmap: true}) },
	} {
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
			t.Errorf("%s: Get(%q) = %q, %v", name, e.Key, v, err)
		}
		if _, err := r.Get([]byte(e.Key + "x")); !errors.Is(err, reader.ErrNotFound) {
			t.Errorf("%s: Get of an absent key: %v", name, err)
		}
		if reader.UsesHashIndex(r) || reader.HoldsFilter(r) {
			t.Errorf("%s: a reader without a mapping uses the hash index %v, holds the filter %v", name, reader.UsesHashIndex(r), reader.HoldsFilter(r))
		}
		r.Close()
	}
}

// TestPartitionedHashLyingSizes rewrites a partitioned table with a hash
// index, with valid checksums, so that its properties, footer or hash
// index header disagree about the hash index or the version: Open (or
// else Verify) must report corruption naming what is wrong, and no read,
// mapped (through the hash index) or over a ReaderAt, may panic or give a
// wrong answer.
func TestPartitionedHashLyingSizes(t *testing.T) {
	data, _ := partTable(t, 300, format.SnappyCompression, partKinds[1])
	g := newGoldenTable(t, "v3-hash", data)
	r := openMem(t, data, nil)
	props := r.Properties()
	r.Close()
	withProps := func(edit func(p *format.Properties)) []byte {
		p := props
		edit(&p)
		return withPropertiesBlock(data, codec.AppendProperties(nil, &p), format.BlockTypeRaw)
	}
	withVersion := func(v uint32) []byte {
		out := withProps(func(p *format.Properties) { p.FormatVersion = v })
		ft, err := footer.Decode(out[len(out)-footer.Size:], int64(len(out)))
		if err != nil {
			t.Fatal(err)
		}
		ft.Version = v
		return ft.Append(out[:len(out)-footer.Size])
	}
	withHeader := func(edit func(hdr []byte)) []byte {
		h := parseHashSection(t, slices.Clone(data))
		edit(h.data[h.off : h.off+codec.HashIndexHeaderLen])
		h.reseal()
		return h.data
	}
	if control := withProps(func(*format.Properties) {}); !bytes.Equal(control, data) {
		t.Fatal("rewriting the unchanged properties changes the table")
	}
	checkLyingTables(t, g, []lyingTable{
		{"control", data, ""},
		{"properties: no hash index size", withProps(func(p *format.Properties) { p.HashIndexSize = 0 }), "hash index size 0"},
		{"properties: hash index smaller than its header", withProps(func(p *format.Properties) { p.HashIndexSize = 20 }), "hash index of 20 bytes"},
		{"properties: hash index size 1 GiB", withProps(func(p *format.Properties) { p.HashIndexSize = 1 << 30 }), "hash index size"},
		{"properties: data and hash index split moved", withProps(func(p *format.Properties) { p.DataSize += 64; p.HashIndexSize -= 64 }), ""},
		{"properties and footer: version 1 with a hash index", withVersion(format.Version1), "version 1 table with a"},
		// The top-level index read as a one-level index block, the
		// partitions as a filter section.
		{"properties and footer: version 2", withVersion(format.Version2), ""},
		{"hash index: block count", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint32(hdr[4:], uint32(props.NumDataBlocks+1)) }), "data blocks"},
		{"hash index: no slots", withHeader(func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[8:], 0) }), "slots"},
		{"hash index: file offsets instead of decoded", withHeader(func(hdr []byte) { hdr[3] = 1 }), "do not fill"},
	})
}
