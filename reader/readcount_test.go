package reader_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
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
		data, p := build(t, es, &builder.Options{HashIndex: v.hash})
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
					if v.hash && !fits {
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
