package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/diskcache"
	"github.com/sstkit/sstable/reader"
)

// BenchmarkWarmGet compares, side by side on one 1M-entry table (the
// builder's defaults), a random Get through reader.Open(path,
// &reader.Options{NoMmap: true}) (preads of the local file) with a Get
// through reader.New over a disk cache holding the whole table (warmed by
// a full read, then reopened as after a restart), each reader with an
// 8 MiB memory cache, so that most Gets read their data block through
// the ReaderAt. The interleaved sub-benchmark alternates the two every
// 1000 Gets and reports the ratio; the others run each alone.
func BenchmarkWarmGet(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	path := filepath.Join(dir, "t.sst")
	if err := buildOurs(builder.Options{})(path, n); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cdir := filepath.Join(dir, "cache")
	dc, err := diskcache.Open(cdir, &diskcache.Options{Capacity: 2 * size})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	ra := dc.ReaderAt("t.sst", size, f)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := ra.ReadAt(buf, off); err != nil && off+int64(len(buf)) < size {
			b.Fatal(err)
		}
	}
	if err := dc.Close(); err != nil {
		b.Fatal(err)
	}
	if dc, err = diskcache.Open(cdir, &diskcache.Options{Capacity: 2 * size}); err != nil {
		b.Fatal(err)
	}
	defer dc.Close()

	get := func(b *testing.B, r *reader.Reader) {
		var k []byte
		b.ResetTimer()
		for i := range b.N {
			k = key(k, int(mix(uint64(i))%n), n)
			if _, err := r.Get(k); err != nil {
				b.Fatal(err)
			}
		}
	}
	// interleaved alternates the two readers 1000 Gets at a time (the
	// same keys on each), so that a shared machine's load falls on both
	// alike, and reports each one's ns per Get and their ratio.
	b.Run("interleaved", func(b *testing.B) {
		cn, _ := cache.New(8 << 20)
		defer cn.Close()
		rn, err := reader.Open(path, &reader.Options{NoMmap: true, Cache: cn})
		if err != nil {
			b.Fatal(err)
		}
		defer rn.Close()
		cd, _ := cache.New(8 << 20)
		defer cd.Close()
		rd, err := reader.New(dc.ReaderAt("t.sst", size, f), size, &reader.Options{Cache: cd})
		if err != nil {
			b.Fatal(err)
		}
		defer rd.Close()
		var k []byte
		var tn, td time.Duration
		const batch = 1000
		b.ResetTimer()
		for i := 0; i < b.N; i += batch {
			for j, r := range []*reader.Reader{rn, rd} {
				start := time.Now()
				for g := i; g < min(i+batch, b.N); g++ {
					k = key(k, int(mix(uint64(g))%n), n)
					if _, err := r.Get(k); err != nil {
						b.Fatal(err)
					}
				}
				if j == 0 {
					tn += time.Since(start)
				} else {
					td += time.Since(start)
				}
			}
		}
		b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "ns/Get-nommap")
		b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "ns/Get-diskcache")
		b.ReportMetric(float64(td)/float64(tn), "ratio")
	})
	b.Run("nommap", func(b *testing.B) {
		c, _ := cache.New(8 << 20)
		defer c.Close()
		r, err := reader.Open(path, &reader.Options{NoMmap: true, Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		get(b, r)
	})
	b.Run("diskcache", func(b *testing.B) {
		c, _ := cache.New(8 << 20)
		defer c.Close()
		before := dc.Stats()
		r, err := reader.New(dc.ReaderAt("t.sst", size, f), size, &reader.Options{Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		get(b, r)
		b.StopTimer()
		if after := dc.Stats(); after.SourceReads != before.SourceReads {
			b.Fatal(fmt.Sprintf("the warm disk cache read the source %d times", after.SourceReads-before.SourceReads))
		}
	})
}

// TestMeasureDisk runs the disk cache rows on a 60000-entry table: the
// cold rows read from the source, the rows after a restart and in memory
// make no request.
func TestMeasureDisk(t *testing.T) {
	const n = 60000
	path := filepath.Join(t.TempDir(), "t.sst")
	if err := buildOurs(builder.Options{})(path, n); err != nil {
		t.Fatal(err)
	}
	rows, err := measureDisk(path, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(diskPhases) {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0].gets.calls == 0 || rows[0].scan.calls == 0 {
		t.Fatalf("cold: %v and %v requests", rows[0].gets, rows[0].scan)
	}
	for p, row := range rows[1:] {
		if row.gets.calls != 0 || row.scan.calls != 0 {
			t.Errorf("%s: %v, %v; want no request", diskPhases[p+1], row.gets, row.scan)
		}
	}
}

// TestDiskCapacityUnderGets reads random keys of a 1.4M-entry table
// (about 120 MB) through a disk cache of 8 MiB: every value is right and
// the files in the cache's directory never take more than 8 MiB plus one
// chunk (sizes rounded up to 4 KiB blocks, as the cache charges them).
func TestDiskCapacityUnderGets(t *testing.T) {
	const n, capacity = 1_400_000, 8 << 20
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	if err := buildOurs(builder.Options{})(path, n); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	cdir := filepath.Join(dir, "cache")
	dc, err := diskcache.Open(cdir, &diskcache.Options{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	mem, _ := cache.New(1 << 20)
	defer mem.Close()
	r, err := reader.New(dc.ReaderAt("t.sst", st.Size(), f), st.Size(), &reader.Options{Cache: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var k, v []byte
	most := int64(0)
	for j := range 3000 {
		i := int(mix(uint64(j)^0xd15c) % n)
		k, v = key(k, i, n), value(v, i)
		got, err := r.Get(k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("Get(key %d) = %q, %v", i, got, err)
		}
		if j%100 == 0 {
			ents, err := os.ReadDir(cdir)
			if err != nil {
				t.Fatal(err)
			}
			var used int64
			for _, e := range ents {
				if info, err := e.Info(); err == nil {
					used += (info.Size() + 4095) / 4096 * 4096
				}
			}
			most = max(most, used)
			if used > capacity+diskcache.ChunkSize {
				t.Fatalf("after %d Gets the cache's directory holds %d bytes, capacity %d", j, used, capacity)
			}
		}
	}
	s := dc.Stats()
	if s.Evictions == 0 {
		t.Fatalf("no eviction: %+v", s)
	}
	t.Logf("%.0f MB table; most bytes on disk %d (capacity %d); %+v", float64(st.Size())/1e6, most, capacity, s)
}
