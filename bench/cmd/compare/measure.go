package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// sample is one measurement of one implementation with one compression.
type sample struct {
	BuildSec        float64 `json:"build_sec"`
	BuildMBps       float64 `json:"build_mb_per_sec"` // raw key+value MB (1e6 bytes) per second
	FileBytes       float64 `json:"file_bytes"`
	OpenUs          float64 `json:"open_us"`
	HeapAfterOpen   float64 `json:"heap_after_open_bytes"` // HeapInuse delta, after runtime.GC
	LiveAfterOpen   float64 `json:"live_after_open_bytes"` // HeapAlloc delta, after runtime.GC
	FirstGetNs      float64 `json:"first_get_ns"`          // the first pass of Gets on a reader just opened
	FirstScanNs     float64 `json:"first_scan_ns_per_entry"`
	GetHitNs        float64 `json:"get_hit_ns"`
	GetHitAllocs    float64 `json:"get_hit_allocs"`
	GetCopyNs       float64 `json:"get_copy_ns,omitempty"` // ours only: Reader.Get
	GetCopyAllocs   float64 `json:"get_copy_allocs,omitempty"`
	GetMissNs       float64 `json:"get_miss_ns"`
	GetMissAllocs   float64 `json:"get_miss_allocs"`
	ScanNs          float64 `json:"scan_ns_per_entry"`
	ScanAllocs      float64 `json:"scan_allocs_per_entry"`
	MemAfterReads   float64 `json:"mem_after_reads_bytes"` // HeapAlloc delta + off-heap cache
	OffHeapAfterRds float64 `json:"offheap_after_reads_bytes"`
	RssFileGrowth   float64 `json:"rss_file_growth_bytes"` // file-backed resident pages mapped by the process (mmap)
}

// heapStats returns HeapInuse and HeapAlloc after full collections (two,
// so that sync.Pool victim caches are emptied too). HeapInuse counts whole
// spans, so an allocation of a few KiB may not move it; HeapAlloc counts
// live bytes.
func heapStats() (inuse, alloc int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse), int64(ms.HeapAlloc)
}

// rssFile returns the process's resident file-backed pages (RssFile in
// /proc/self/status), in bytes; 0 where unavailable.
func rssFile() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// syncFile fsyncs path so that write-back of one build does not leak into
// the next measurement. The pages stay in the page cache.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// measure builds, opens and reads one table. With verify set it also
// checks every lookup's value, every miss and the scan's entries, untimed.
// The table is deleted afterwards unless keep is set.
func measure(im impl, c implsetup.Compression, d *dataset, dir string, verify, keep bool) (s sample, err error) {
	path := im.tablePath(dir, c)
	os.Remove(path)

	// Build.
	runtime.GC()
	start := time.Now()
	if err := im.build(path, d, c); err != nil {
		return s, fmt.Errorf("build: %w", err)
	}
	s.BuildSec = time.Since(start).Seconds()
	s.BuildMBps = float64(d.rawBytes()) / 1e6 / s.BuildSec
	if err := syncFile(path); err != nil {
		return s, err
	}
	if !keep {
		defer os.Remove(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return s, err
	}
	s.FileBytes = float64(st.Size())

	// First pass: every lookup key once on a reader just opened, with
	// its block cache empty (the file in the OS page cache, as after the
	// build), then closed.
	if s.FirstGetNs, err = firstPass(im, path, d); err != nil {
		return s, err
	}

	// Open, and the Go heap it holds.
	if p, ok := im.(preparer); ok {
		if err := p.prepare(path); err != nil {
			return s, fmt.Errorf("prepare: %w", err)
		}
	}
	inuse0, alloc0 := heapStats()
	rss0 := rssFile()
	start = time.Now()
	t, err := im.open(path)
	if err != nil {
		return s, fmt.Errorf("open: %w", err)
	}
	s.OpenUs = float64(time.Since(start).Nanoseconds()) / 1e3
	defer func() {
		if cerr := t.close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	inuse, alloc := heapStats()
	s.HeapAfterOpen, s.LiveAfterOpen = float64(inuse-inuse0), float64(alloc-alloc0)

	// First scan: reads every block once, filling the block caches.
	runtime.GC()
	start = time.Now()
	n, err := t.scan(nil)
	if err != nil {
		return s, fmt.Errorf("first scan: %w", err)
	}
	s.FirstScanNs = float64(time.Since(start).Nanoseconds()) / float64(max(n, 1))
	if n != d.n {
		return s, fmt.Errorf("first scan saw %d entries, want %d", n, d.n)
	}

	if verify {
		if err := verifyTable(t, d); err != nil {
			return s, err
		}
	}

	// Lookups of present keys, in random order.
	var found int
	s.GetHitNs, s.GetHitAllocs, found, err = timeLookups(len(d.hits), func(j int) ([]byte, bool, error) {
		return t.get(d.hitKey(j))
	})
	if err != nil {
		return s, fmt.Errorf("get: %w", err)
	}
	if found != len(d.hits) {
		return s, fmt.Errorf("get found %d of %d present keys", found, len(d.hits))
	}
	if cp, ok := t.(copier); ok {
		s.GetCopyNs, s.GetCopyAllocs, found, err = timeLookups(len(d.hits), func(j int) ([]byte, bool, error) {
			return cp.getCopy(d.hitKey(j))
		})
		if err != nil {
			return s, fmt.Errorf("get (copy): %w", err)
		}
		if found != len(d.hits) {
			return s, fmt.Errorf("get (copy) found %d of %d present keys", found, len(d.hits))
		}
	}

	// Lookups of absent keys.
	s.GetMissNs, s.GetMissAllocs, found, err = timeLookups(len(d.hits), func(j int) ([]byte, bool, error) {
		return t.get(d.missKey(j))
	})
	if err != nil {
		return s, fmt.Errorf("get (absent): %w", err)
	}
	if found != 0 {
		return s, fmt.Errorf("get found %d absent keys", found)
	}

	// Full forward scan, block caches warm.
	runtime.GC()
	m0 := mallocs()
	start = time.Now()
	n, err = t.scan(nil)
	el := time.Since(start)
	m1 := mallocs()
	if err != nil {
		return s, fmt.Errorf("scan: %w", err)
	}
	if n != d.n {
		return s, fmt.Errorf("scan saw %d entries, want %d", n, d.n)
	}
	s.ScanNs = float64(el.Nanoseconds()) / float64(max(n, 1))
	s.ScanAllocs = float64(m1-m0) / float64(max(n, 1))

	// Memory held once the caches are warm; the reader stays open.
	off := t.offHeapBytes()
	s.OffHeapAfterRds = float64(off)
	_, alloc = heapStats()
	s.MemAfterReads = float64(alloc - alloc0 + off)
	s.RssFileGrowth = float64(rssFile() - rss0)
	runtime.KeepAlive(t)
	return s, nil
}

// firstPass opens path, looks every lookup key up once, closes the
// table, and returns the time per lookup.
func firstPass(im impl, path string, d *dataset) (ns float64, err error) {
	if p, ok := im.(preparer); ok {
		if err := p.prepare(path); err != nil {
			return 0, fmt.Errorf("prepare: %w", err)
		}
	}
	t, err := im.open(path)
	if err != nil {
		return 0, fmt.Errorf("open: %w", err)
	}
	ns, _, found, err := timeLookups(len(d.hits), func(j int) ([]byte, bool, error) {
		return t.get(d.hitKey(j))
	})
	if cerr := t.close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return 0, fmt.Errorf("first pass: %w", err)
	}
	if found != len(d.hits) {
		return 0, fmt.Errorf("first pass found %d of %d present keys", found, len(d.hits))
	}
	return ns, nil
}

// sink keeps the lookups' results observable.
var sink int

// timeLookups runs n lookups and returns ns/op, mallocs/op and the number
// found.
func timeLookups(n int, lookup func(j int) ([]byte, bool, error)) (ns, allocs float64, found int, err error) {
	runtime.GC()
	m0 := mallocs()
	start := time.Now()
	total := 0
	for j := 0; j < n; j++ {
		v, ok, err := lookup(j)
		if err != nil {
			return 0, 0, 0, err
		}
		if ok {
			found++
			total += len(v)
		}
	}
	el := time.Since(start)
	m1 := mallocs()
	sink += total
	return float64(el.Nanoseconds()) / float64(max(n, 1)), float64(m1-m0) / float64(max(n, 1)), found, nil
}

// verifyTable checks t against d: every lookup key finds its exact value,
// every absent key misses, and a scan returns exactly d's entries in order.
func verifyTable(t table, d *dataset) error {
	for _, i := range d.hits {
		v, ok, err := t.get(d.key(int(i)))
		if err != nil {
			return fmt.Errorf("verify: get key %d: %w", i, err)
		}
		if !ok {
			return fmt.Errorf("verify: key %d (%x) not found", i, d.key(int(i)))
		}
		if !bytes.Equal(v, d.value(int(i))) {
			return fmt.Errorf("verify: key %d (%x): wrong value %q", i, d.key(int(i)), v)
		}
	}
	for j := range d.hits {
		_, ok, err := t.get(d.missKey(j))
		if err != nil {
			return fmt.Errorf("verify: get absent key %d: %w", j, err)
		}
		if ok {
			return fmt.Errorf("verify: absent key %x found", d.missKey(j))
		}
	}
	if cp, ok := t.(copier); ok {
		for _, i := range d.hits[:min(len(d.hits), 1000)] {
			v, ok, err := cp.getCopy(d.key(int(i)))
			if err != nil || !ok || !bytes.Equal(v, d.value(int(i))) {
				return fmt.Errorf("verify: copying get of key %d: found %v, err %v", i, ok, err)
			}
		}
	}
	i := 0
	var bad error
	n, err := t.scan(func(k, v []byte) {
		if bad != nil {
			return
		}
		if i >= d.n {
			bad = fmt.Errorf("verify: scan entry %d beyond the %d entries", i, d.n)
		} else if !bytes.Equal(k, d.key(i)) || !bytes.Equal(v, d.value(i)) {
			bad = fmt.Errorf("verify: scan entry %d is %x=%q, want %x=%q", i, k, v, d.key(i), d.value(i))
		}
		i++
	})
	if err != nil {
		return fmt.Errorf("verify: scan: %w", err)
	}
	if bad != nil {
		return bad
	}
	if n != d.n {
		return fmt.Errorf("verify: scan saw %d entries, want %d", n, d.n)
	}
	return nil
}
