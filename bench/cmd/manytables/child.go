package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// childEnv is set in a child's environment; a test binary's TestMain
// looks for it to run the child instead of the tests.
const childEnv = "SSTABLE_MANYTABLES_CHILD"

// childSpec is what the parent hands a child (as JSON in -child): one
// implementation and compression over a directory of built tables.
type childSpec struct {
	Impl        string                `json:"impl"`
	Compression implsetup.Compression `json:"compression"`
	Dir         string                `json:"dir"`
	Tables      int                   `json:"tables"`
	Entries     int                   `json:"entries"`
	Duration    time.Duration         `json:"duration"`
	Warmup      time.Duration         `json:"warmup"`
	Goroutines  int                   `json:"goroutines"`
	CacheBytes  int64                 `json:"cache_bytes"`
	Seed        uint64                `json:"seed"`
	CPUProfile  string                `json:"cpu_profile,omitempty"` // write a CPU profile of the timed run here
	PresentPct  int                   `json:"present_pct"`           // share of Gets of present keys, percent
}

// childResult is the one JSON line a child prints.
type childResult struct {
	Impl        string  `json:"impl"`
	Compression string  `json:"compression"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	OpenSec     float64 `json:"open_sec"` // opening all the tables
	ElapsedSec  float64 `json:"elapsed_sec"`
	WarmupGets  int64   `json:"warmup_gets"` // untimed, checked like the others
	Gets        int64   `json:"gets"`
	Present     int64   `json:"present"`
	Absent      int64   `json:"absent"`
	GetsPerSec  float64 `json:"gets_per_sec"`
	Mallocs     uint64  `json:"mallocs"` // MemStats.Mallocs delta over the timed run
	AllocsPer   float64 `json:"allocs_per_get"`
	Errors      int64   `json:"errors"`       // warm-up and timed run
	Wrong       int64   `json:"wrong_values"` // idem: wrong value, present key not found, or absent key found
	FirstError  string  `json:"first_error,omitempty"`
	FirstWrong  string  `json:"first_wrong,omitempty"`

	// Memory, in bytes. RssAnon is the process's resident anonymous
	// memory (RSS minus file-mapped and shared pages: Go heap, stacks,
	// C malloc, anonymous mmaps such as our cache); RssFile the resident
	// file-mapped pages (our memory-mapped tables, the binary).
	RssAnonStart  int64      `json:"rss_anon_start"`  // before opening the tables
	RssAnonOpen   int64      `json:"rss_anon_open"`   // tables open, before the lookups
	RssAnonPeak   int64      `json:"rss_anon_peak"`   // over the child's life, sampled every 50 ms
	RssFilePeak   int64      `json:"rss_file_peak"`   // idem
	HeapInuseOpen int64      `json:"heap_inuse_open"` // after a GC, tables open
	HeapInusePeak int64      `json:"heap_inuse_peak"` // sampled every 50 ms
	Samples       int        `json:"samples"`         // memory samples taken
	CacheSizePeak int64      `json:"cache_size_peak"` // sampled every 50 ms
	HasCache      bool       `json:"has_cache"`       // Cache below is meaningful
	Cache         cacheStats `json:"cache"`           // Hits, Misses, Evictions: deltas over the timed run; Size at its end
}

// hitRate is the shared cache's hit rate over the timed run, or -1 when
// the cache saw no lookups.
func (r *childResult) hitRate() float64 {
	if !r.HasCache || r.Cache.Hits+r.Cache.Misses == 0 {
		return -1
	}
	return float64(r.Cache.Hits) / float64(r.Cache.Hits+r.Cache.Misses)
}

// counts is one goroutine's tally.
type counts struct {
	present, absent, errors, wrong int64
	firstErr, firstWrong           string
}

// worker looks up random keys until stop is set: a random table each
// time, present keys (whose value must match byte for byte) in
// w.presentPct percent of the Gets, absent ones (which must not be found)
// in the others. It allocates nothing itself;
// only an error or a wrong value costs a formatted description, once.
func worker(g getter, w workload, seed uint64, stop *atomic.Bool) (c counts) {
	var key [keyLen]byte
	var want [valueLen]byte
	r := rng{state: seed}
	for !stop.Load() {
		for range 64 {
			x, y, z := r.next(), r.next(), r.next()
			t, j := below(x, w.tables), below(y, w.entries)
			if below(z, 100) < w.presentPct {
				c.present++
				w.presentKey(key[:], t, j)
				v, found, err := g.get(t, key[:])
				switch {
				case err != nil:
					c.errors++
					if c.firstErr == "" {
						c.firstErr = fmt.Sprintf("table %d entry %d (%x): %v", t, j, key, err)
					}
				case !found:
					c.wrong++
					if c.firstWrong == "" {
						c.firstWrong = fmt.Sprintf("table %d entry %d (%x): present key not found", t, j, key)
					}
				default:
					w.value(want[:], t, j)
					if !bytes.Equal(v, want[:]) {
						c.wrong++
						if c.firstWrong == "" {
							c.firstWrong = fmt.Sprintf("table %d entry %d (%x): value %q, want %q", t, j, key, v, want)
						}
					}
				}
			} else {
				c.absent++
				w.absentKey(key[:], t, j)
				_, found, err := g.get(t, key[:])
				switch {
				case err != nil:
					c.errors++
					if c.firstErr == "" {
						c.firstErr = fmt.Sprintf("table %d absent key after entry %d (%x): %v", t, j, key, err)
					}
				case found:
					c.wrong++
					if c.firstWrong == "" {
						c.firstWrong = fmt.Sprintf("table %d absent key after entry %d (%x): found", t, j, key)
					}
				}
			}
		}
	}
	return c
}

// memReader reads RssAnon and RssFile from /proc/self/status and
// HeapInuse from runtime/metrics without allocating (and without
// stopping the world, as runtime.ReadMemStats would).
type memReader struct {
	fd      int // /proc/self/status, re-read with pread; -1 if unavailable
	buf     [8192]byte
	samples [2]metrics.Sample
}

func newMemReader() *memReader {
	m := &memReader{fd: -1}
	if fd, err := syscall.Open("/proc/self/status", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
		m.fd = fd
	}
	// HeapInuse = heap objects + heap memory reserved for objects but unused.
	m.samples[0].Name = "/memory/classes/heap/objects:bytes"
	m.samples[1].Name = "/memory/classes/heap/unused:bytes"
	return m
}

func (m *memReader) close() {
	if m.fd >= 0 {
		syscall.Close(m.fd)
		m.fd = -1
	}
}

// read returns RssAnon and RssFile (0 where unavailable) and HeapInuse,
// in bytes.
func (m *memReader) read() (rssAnon, rssFile, heapInuse int64) {
	if m.fd >= 0 {
		if n, err := syscall.Pread(m.fd, m.buf[:], 0); err == nil {
			rssAnon = statusKB(m.buf[:n], "RssAnon:") << 10
			rssFile = statusKB(m.buf[:n], "RssFile:") << 10
		}
	}
	metrics.Read(m.samples[:])
	heapInuse = int64(m.samples[0].Value.Uint64() + m.samples[1].Value.Uint64())
	return
}

// statusKB parses the "Name:   123 kB" line of /proc/self/status.
func statusKB(status []byte, name string) int64 {
	i := bytes.Index(status, []byte(name)) // the conversion does not escape: no allocation
	if i < 0 {
		return 0
	}
	var v int64
	seen := false
	for _, b := range status[i+len(name):] {
		switch {
		case b == ' ' || b == '\t':
			if seen {
				return v
			}
		case b >= '0' && b <= '9':
			v = v*10 + int64(b-'0')
			seen = true
		default:
			return v
		}
	}
	return v
}

// peaks are a sampler's maxima.
type peaks struct {
	rssAnon, rssFile, heapInuse, cacheSize int64
	n                                      int
}

// sampler samples memory (and the cache size, once st is set) every
// interval until stop is closed, then sends its peaks.
func sampler(m *memReader, st *atomic.Pointer[store], interval time.Duration, stop <-chan struct{}, out chan<- peaks) {
	var p peaks
	sample := func() {
		a, f, h := m.read()
		p.rssAnon, p.rssFile, p.heapInuse = max(p.rssAnon, a), max(p.rssFile, f), max(p.heapInuse, h)
		if s := st.Load(); s != nil {
			if cs, ok := (*s).cacheStats(); ok {
				p.cacheSize = max(p.cacheSize, cs.Size)
			}
		}
		p.n++
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	sample()
	for {
		select {
		case <-tick.C:
			sample()
		case <-stop:
			sample()
			out <- p
			return
		}
	}
}

// runChild opens spec's tables and runs the timed lookups, then writes
// one JSON line to stdout.
func runChild(spec childSpec, stdout, stderr io.Writer) (err error) {
	im := newImpl(spec.Impl)
	if im == nil {
		return fmt.Errorf("unknown implementation %q", spec.Impl)
	}
	if spec.Tables < 1 || spec.Tables > maxTables || spec.Entries < 1 || spec.Entries > maxEntries || spec.Goroutines < 1 {
		return fmt.Errorf("bad child spec %+v", spec)
	}
	w := newWorkload(spec.Tables, spec.Entries)
	w.presentPct = spec.PresentPct
	res := childResult{Impl: spec.Impl, Compression: string(spec.Compression), GOMAXPROCS: runtime.GOMAXPROCS(0)}

	mr := newMemReader()
	defer mr.close()
	runtime.GC()
	res.RssAnonStart, _, _ = mr.read()

	var cur atomic.Pointer[store]
	stopSampling := make(chan struct{})
	peaksc := make(chan peaks, 1)
	go sampler(mr, &cur, 50*time.Millisecond, stopSampling, peaksc)
	samplerStopped := false
	stopSampler := func() peaks {
		samplerStopped = true
		close(stopSampling)
		return <-peaksc
	}
	defer func() {
		if !samplerStopped {
			stopSampler()
		}
	}()

	t0 := time.Now()
	st, err := im.open(spec.Dir, w, spec.CacheBytes)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	res.OpenSec = time.Since(t0).Seconds()
	cur.Store(&st)
	getters := make([]getter, spec.Goroutines)
	defer func() {
		for _, g := range getters {
			if g != nil {
				if cerr := g.close(); err == nil && cerr != nil {
					err = fmt.Errorf("close iterator: %w", cerr)
				}
			}
		}
		cur.Store(nil)
		if cerr := st.close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	for i := range getters {
		getters[i] = st.getter()
	}

	runtime.GC()
	// The memReader's buffer is shared with the sampler: read through a
	// second one here.
	mr2 := newMemReader()
	res.RssAnonOpen, _, res.HeapInuseOpen = mr2.read()
	mr2.close()
	fmt.Fprintf(stderr, "  child %s/%s: %d tables open in %.2fs, RssAnon %.1f MiB, HeapInuse %.1f MiB; %d goroutines, %v warm-up, %v timed\n",
		spec.Impl, spec.Compression, spec.Tables, res.OpenSec, mib(res.RssAnonOpen), mib(res.HeapInuseOpen), spec.Goroutines, spec.Warmup, spec.Duration)

	// phase runs the goroutines for d and returns their tallies.
	phase := func(d time.Duration, seed uint64) []counts {
		var stop atomic.Bool
		var wg sync.WaitGroup
		results := make([]counts, len(getters))
		for i := range getters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = worker(getters[i], w, splitmix64(seed+uint64(i)), &stop)
			}()
		}
		time.Sleep(d)
		stop.Store(true)
		wg.Wait()
		return results
	}
	tally := func(results []counts, timed bool) {
		for _, c := range results {
			if timed {
				res.Present += c.present
				res.Absent += c.absent
			} else {
				res.WarmupGets += c.present + c.absent
			}
			res.Errors += c.errors
			res.Wrong += c.wrong
			if res.FirstError == "" {
				res.FirstError = c.firstErr
			}
			if res.FirstWrong == "" {
				res.FirstWrong = c.firstWrong
			}
		}
	}

	// Warm-up, untimed: the readers' lazy first-Get setup, their scratch
	// pools, Pebble's iterators, a full cache.
	if spec.Warmup > 0 {
		tally(phase(spec.Warmup, spec.Seed<<32), false)
	}

	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cs0, hasCache := st.cacheStats()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	results := phase(spec.Duration, spec.Seed<<32+1<<16)
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	if spec.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	cs1, _ := st.cacheStats()
	p := stopSampler()
	tally(results, true)
	res.Gets = res.Present + res.Absent
	res.ElapsedSec = el.Seconds()
	res.GetsPerSec = float64(res.Gets) / el.Seconds()
	res.Mallocs = m1.Mallocs - m0.Mallocs
	res.AllocsPer = float64(res.Mallocs) / float64(max(res.Gets, 1))
	res.RssAnonPeak, res.RssFilePeak, res.HeapInusePeak, res.CacheSizePeak, res.Samples = p.rssAnon, p.rssFile, p.heapInuse, p.cacheSize, p.n
	res.HasCache = hasCache
	res.Cache = cacheStats{
		Capacity:  cs1.Capacity,
		Size:      cs1.Size,
		Hits:      cs1.Hits - cs0.Hits,
		Misses:    cs1.Misses - cs0.Misses,
		Evictions: cs1.Evictions - cs0.Evictions,
		Held:      cs1.Held,
	}
	if cs1.Evictions < 0 {
		res.Cache.Evictions = -1
	}

	b, err := json.Marshal(&res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
