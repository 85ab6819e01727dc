package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// recorder is an io.ReaderAt over data that records every call's range.
type recorder struct {
	data  []byte
	mu    sync.Mutex
	reads [][2]int64 // offset, length
}

func (r *recorder) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.reads = append(r.reads, [2]int64{off, int64(len(p))})
	r.mu.Unlock()
	return bytes.NewReader(r.data).ReadAt(p, off)
}

// take returns the ranges read since the last take.
func (r *recorder) take() [][2]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reads
	r.reads = nil
	return out
}

// TestColdReadCounts checks the reads a reader over a ReaderAt makes to
// open a table and look one key up, with the sections after the data
// blocks in the tail New reads and with a tail too small for them: New
// makes one read (two when even the properties are past the tail); a
// cold Get of a present key at most three counting New, of an absent key
// the filter rules out at most two, and neither reads a hash index the
// tail did not hold.
func TestColdReadCounts(t *testing.T) {
	es := numbered(20000, func(i int) string { return fmt.Sprintf("value %d %x", i, i*7919) })
	for _, v := range tableVersions {
		data, p := build(t, es, &builder.Options{HashIndex: v.hash, FormatVersion: v.fv})
		meta := int64(len(data)) - int64(p.DataSize)
		for _, tail := range []int{0, 4 << 10, int(meta)} {
			t.Run(fmt.Sprintf("%s/tail%d", v.name, tail), func(t *testing.T) {
				src := &recorder{data: data}
				opts := &reader.Options{TailSize: tail}
				fits := tail == 0 || int64(tail) >= meta
				open := func() *reader.Reader {
					r, err := reader.New(src, int64(len(data)), opts)
					if err != nil {
						t.Fatal(err)
					}
					if n := len(src.reads); n != 1 {
						t.Fatalf("New made %d reads, want 1", n)
					}
					return r
				}
				// Find an absent key the filter rules out.
				r := open()
				absent := []byte("key000100x")
				for i := 0; r.MayContain(absent); i++ {
					absent = fmt.Appendf(nil, "key%06dx", i)
				}
				r.Close()
				src.take()

				for _, key := range [][]byte{[]byte(es[12345].Key), absent} {
					r := open()
					_, err := r.Get(key)
					reads := src.take()
					r.Close()
					present := bytes.Equal(key, []byte(es[12345].Key))
					want := 2
					if present {
						want = 3
						if err != nil {
							t.Fatalf("Get(%q): %v", key, err)
						}
					}
					if fits {
						want-- // the tail holds every section
					}
					if len(reads) > want {
						t.Errorf("cold Get(%q) (present %v): %d reads counting New, want at most %d: %v", key, present, len(reads), want, reads)
					}
					if v.hasHashIndex() && !fits {
						lo, hi := int64(p.DataSize), int64(p.DataSize+p.HashIndexSize)
						for _, rd := range reads {
							if rd[0] < hi && rd[0]+rd[1] > lo {
								t.Errorf("cold Get(%q) read [%d, %d), inside the hash index [%d, %d), which the tail does not hold", key, rd[0], rd[0]+rd[1], lo, hi)
							}
						}
					}
				}
			})
		}
	}
}

// TestHashIndexAfterFilter checks that a version 2 reader whose cache
// cannot keep the hash index reads it only for keys the filter passes.
func TestHashIndexAfterFilter(t *testing.T) {
	es := numbered(3000, func(i int) string { return fmt.Sprintf("value %d", i) })
	data, p := build(t, es, &builder.Options{HashIndex: true, Compression: format.NoCompression})
	src := &recorder{data: data}
	// A cache of 0 bytes keeps nothing: the tail's sections stay on the
	// heap; one of 8 KiB takes the filter but evicts.
	for _, capacity := range []int64{0, 8 << 10} {
		r, err := reader.New(src, int64(len(data)), cacheOpts(t, capacity))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := int64(p.DataSize), int64(p.DataSize+p.HashIndexSize)
		for i := range 200 {
			key := fmt.Appendf(nil, "nokey%d", i)
			if r.MayContain(key) {
				continue
			}
			src.take()
			if _, err := r.Get(key); err == nil {
				t.Fatalf("Get(%q) of an absent key succeeded", key)
			}
			for _, rd := range src.take() {
				if rd[0] < hi && rd[0]+rd[1] > lo {
					t.Fatalf("cache %d: Get(%q), ruled out by the filter, read the hash index", capacity, key)
				}
			}
		}
		r.Close()
	}
}

// TestReadaheadScanReads checks that a full scan over a ReaderAt makes at
// most two ReadAt calls per MiB of file (four on tables under 2 MiB),
// none larger than MaxReadahead.
func TestReadaheadScanReads(t *testing.T) {
	es := numbered(60000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		data, _ := build(t, es, &builder.Options{Compression: c})
		for name, opts := range map[string]*reader.Options{"default": nil, "cache0": cacheOpts(t, 0), "cache64MiB": cacheOpts(t, 64<<20)} {
			t.Run(fmt.Sprintf("%s/%s", c, name), func(t *testing.T) {
				src := &recorder{data: data}
				r, err := reader.New(src, int64(len(data)), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				src.take()
				got, err := scan(r)
				if err != nil || len(got) != len(es) {
					t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
				}
				reads := src.take()
				mib := float64(len(data)) / (1 << 20)
				// Two per MiB, and the ramp's 64 KiB and 256 KiB windows
				// on smaller tables.
				limit := max(2*mib, 4)
				if float64(len(reads)) > limit {
					t.Errorf("full scan of %.1f MiB: %d reads, want at most %.1f", mib, len(reads), limit)
				}
				for _, rd := range reads {
					if rd[1] > reader.MaxReadahead {
						t.Errorf("a %d-byte read, larger than MaxReadahead", rd[1])
					}
				}
			})
		}
	}
}

// TestReadaheadAfterCachedBlocks checks that blocks already in the cache
// (from Gets) do not break a scan's sequential run: without that, every
// cached block would restart the read-ahead at 64 KiB, one block alone.
func TestReadaheadAfterCachedBlocks(t *testing.T) {
	es := numbered(60000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	data, _ := build(t, es, &builder.Options{Compression: format.NoCompression})
	src := &recorder{data: data}
	r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < len(es); i += 97 { // about one block in three cached
		if _, err := r.Get([]byte(es[i].Key)); err != nil {
			t.Fatal(err)
		}
	}
	src.take()
	got, err := scan(r)
	if err != nil || len(got) != len(es) {
		t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
	}
	reads := src.take()
	mib := float64(len(data)) / (1 << 20)
	if limit := max(2*mib, 4); float64(len(reads)) > limit {
		t.Errorf("full scan of %.1f MiB after Gets: %d reads, want at most %.1f", mib, len(reads), limit)
	}
}

// TestReadaheadConcurrentScans runs scans and seeks from many goroutines
// on one reader over a ReaderAt, with caches that lend their windows or
// cannot: every entry is right.
func TestReadaheadConcurrentScans(t *testing.T) {
	es := numbered(20000, func(i int) string { return fmt.Sprintf("v%d-%040x", i, i) })
	data, _ := build(t, es, &builder.Options{Compression: format.SnappyCompression})
	for _, capacity := range []int64{0, 256 << 10, 32 << 20} {
		r, err := reader.New(bytes.NewReader(data), int64(len(data)), cacheOpts(t, capacity))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				it := r.NewIterator()
				defer it.Close()
				start := g * 3001 % len(es)
				i := start
				for ok := it.SeekGE([]byte(es[start].Key)); ok; ok = it.Next() {
					if string(it.Key()) != es[i].Key || string(it.Value()) != es[i].Value {
						t.Errorf("entry %d: %q=%q, want %q=%q", i, it.Key(), it.Value(), es[i].Key, es[i].Value)
						return
					}
					i++
				}
				if err := it.Err(); err != nil || i != len(es) {
					t.Errorf("scan from %d stopped at %d: %v", start, i, err)
				}
			}()
		}
		wg.Wait()
		r.Close()
	}
}

// TestReadaheadSmallTableScan checks that a full scan of a table whose
// data blocks take at most MaxReadahead bytes makes exactly one ReadAt
// (none when the whole file fits in the tail New read), and a table just
// above that more than one, none above MaxReadahead.
func TestReadaheadSmallTableScan(t *testing.T) {
	for _, n := range []int{100, 2000, 7000, 9500, 10500} {
		es := numbered(n, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
		data, _ := build(t, es, &builder.Options{Compression: format.NoCompression})
		src := &recorder{data: data}
		r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
		if err != nil {
			t.Fatal(err)
		}
		dataBytes := int64(r.Properties().DataSize) // the data blocks, trailers included
		src.take()
		got, err := scan(r)
		if err != nil || len(got) != len(es) {
			t.Fatalf("%d entries: scan saw %d, %v", n, len(got), err)
		}
		reads := src.take()
		switch {
		case len(data) <= reader.DefaultTailSize && len(reads) != 0:
			t.Errorf("%d entries, a %d-byte file: %d reads, want none: New's tail holds every data block", n, len(data), len(reads))
		case len(data) > reader.DefaultTailSize && dataBytes <= reader.MaxReadahead && len(reads) != 1:
			t.Errorf("%d entries, %d bytes of data blocks: %d reads, want 1", n, dataBytes, len(reads))
		}
		if dataBytes > reader.MaxReadahead && len(reads) < 2 {
			t.Errorf("%d entries, %d bytes of data blocks: %d reads", n, dataBytes, len(reads))
		}
		for _, rd := range reads {
			if rd[1] > reader.MaxReadahead {
				t.Errorf("%d entries: a %d-byte read, larger than MaxReadahead", n, rd[1])
			}
		}
		t.Logf("%d entries, %d bytes of data blocks: %d reads", n, dataBytes, len(reads))
		r.Close()
	}
}

// TestPartitionedHashReadCounts checks the caps on a partitioned
// table with a hash index, over a ReaderAt: 200k entries of 100-byte
// values (the hash index, about 2 MiB, past the tail) in partitions of
// 2 KiB (about 180 of them) and of the default 16 KiB (about 23). New
// makes one read; a cold Get of a present key at most three counting
// New's (tail, partition, data block) and of an absent key the filter
// rules out at most two, reading at most 64 KiB beyond the tail besides
// the data block; no lookup reads any byte of the hash index, present key
// or absent, cold or not.
func TestPartitionedHashReadCounts(t *testing.T) {
	es := numbered(200000, func(i int) string { return fmt.Sprintf("%0100x", uint64(i)*0x9e3779b97f4a7c15) })
	for _, v := range []struct{ partSize, minParts int }{{2 << 10, 150}, {0, 20}} {
		t.Run(fmt.Sprintf("partition%d", v.partSize), func(t *testing.T) {
			testPartitionedHashReadCounts(t, es, v.partSize, v.minParts, false)
		})
		// Version 4, partitioned: a reader over a ReaderAt never uses its
		// hash index either (it reads partitions, as for version 3).
		t.Run(fmt.Sprintf("v4/partition%d", v.partSize), func(t *testing.T) {
			testPartitionedHashReadCounts(t, es, v.partSize, v.minParts, true)
		})
	}
}

func testPartitionedHashReadCounts(t *testing.T, es []entry, partSize, minParts int, v4 bool) {
	opts := &builder.Options{HashIndex: !v4, PartitionThreshold: 1, PartitionSize: partSize}
	data, p := build(t, es, opts)
	if v4 {
		// 4-byte slots, and the whole table's filter after them: past
		// the tail too.
		if min := 4 * codec.CompactHashIndexSlots(uint64(len(es))); p.FormatVersion != format.Version4 || !p.Partitioned || p.HashIndexSize < min || p.HashIndexSize < reader.DefaultTailSize {
			t.Fatalf("format version %d (partitioned %v), hash index of %d bytes; want version 4, partitioned, with a hash index of at least %d bytes of slots and the filter", p.FormatVersion, p.Partitioned, p.HashIndexSize, min)
		}
	} else if p.FormatVersion != format.Version3 || p.HashIndexSize < 1<<20 {
		t.Fatalf("format version %d, hash index of %d bytes; want version 3 with a hash index over 1 MiB", p.FormatVersion, p.HashIndexSize)
	}
	f, err := footerOf(data)
	if err != nil {
		t.Fatal(err)
	}
	var top codec.BlockIter
	if err := top.Init(format.SectionTopIndex, int64(f.Index.Offset), data[f.Index.Offset:f.Index.Offset+f.Index.Length]); err != nil {
		t.Fatal(err)
	}
	if n := top.NumRestarts(); n < minParts {
		t.Fatalf("%d partitions, want at least %d", n, minParts)
	} else {
		t.Logf("%d partitions", n)
	}
	hashLo, hashHi := int64(p.DataSize), int64(p.DataSize+p.HashIndexSize)
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
	// check checks the reads of one lookup after New's: at most max, none
	// in the hash index, at most 64 KiB outside the data blocks.
	check := func(what string, reads [][2]int64, max int) {
		t.Helper()
		if len(reads) > max {
			t.Errorf("%s: %d reads after New's, want at most %d: %v", what, len(reads), max, reads)
		}
		meta := int64(0)
		for _, rd := range reads {
			if rd[0] < hashHi && rd[0]+rd[1] > hashLo {
				t.Errorf("%s read [%d, %d), inside the hash index [%d, %d)", what, rd[0], rd[0]+rd[1], hashLo, hashHi)
			}
			if rd[0] >= int64(p.DataSize) {
				meta += rd[1]
			}
		}
		if meta > 64<<10 {
			t.Errorf("%s read %d bytes beyond the tail besides data blocks, want at most 64 KiB: %v", what, meta, reads)
		}
	}
	for _, i := range []int{0, 12345, 99999, 123456, 199999} {
		r := open()
		if v, err := r.Get([]byte(es[i].Key)); err != nil || string(v) != es[i].Value {
			t.Fatalf("Get(%q) = %q, %v", es[i].Key, v, err)
		}
		check(fmt.Sprintf("cold Get(%q)", es[i].Key), src.take(), 2)
		r.Close()
	}
	ruledOut := 0
	for i := 0; i < 40; i++ {
		k := []byte(es[i*4999].Key + "x")
		r := open()
		ok := r.MayContain(k)
		src.take()
		r.Close()
		r = open()
		if _, err := r.Get(k); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrNotFound", k, err)
		}
		max := 2 // a filter false positive reads the data block too
		if !ok {
			max = 1
			ruledOut++
		}
		check(fmt.Sprintf("cold Get(absent %q)", k), src.take(), max)
		r.Close()
	}
	if ruledOut < 30 {
		t.Errorf("the filter ruled out %d of 40 absent keys", ruledOut)
	}
	// A warm reader: many lookups, none reads the hash index.
	r := open()
	defer r.Close()
	for i := 0; i < len(es); i += 997 {
		if _, err := r.Get([]byte(es[i].Key)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Get([]byte(es[i].Key + "x")); !errors.Is(err, reader.ErrNotFound) {
			t.Fatal(err)
		}
	}
	for _, rd := range src.take() {
		if rd[0] < hashHi && rd[0]+rd[1] > hashLo {
			t.Fatalf("a Get read [%d, %d), inside the hash index [%d, %d)", rd[0], rd[0]+rd[1], hashLo, hashHi)
		}
	}
}
