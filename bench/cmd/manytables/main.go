// Command manytables measures point lookups over many tables that share
// one block cache: by default 200 tables of 50,000 entries each (16-byte
// keys, 100-byte values as in cmd/compare), 16 goroutines of random Gets
// for 20 s after 2 s of warm-up, three in four of present keys and the others of absent ones, a random table each
// time, with one 64 MiB cache for all the tables. The decoded tables
// (about 1.1 GiB) are 17 times the cache, so the cache thrashes: that is
// the workload.
//
//	cd bench && go run ./cmd/manytables [-tables N] [-entries N] [-duration D]
//	    [-warmup D] [-goroutines N] [-cache SIZE] [-impls LIST] [-compression LIST]
//	    [-dir DIR] [-keep] [-json] [-cpuprofile DIR]
//
// It runs ours with the hash index (ours) and without it (ours-v1),
// Pebble v1.1.5's sstable package (pebble), Pebble v2.1.7's with its
// columnar TableFormatPebblev7 (pebble2) and goleveldb's table package,
// each with snappy and with no compression, configured as in cmd/compare.
// For each (implementation, compression) the parent builds the tables in a
// temporary directory (the build is timed for information only), then
// re-executes itself as a child process that opens all the tables with
// one shared cache and runs the lookups, so that each child's memory
// figures are its own: peak RssAnon (resident memory minus file-mapped
// pages) and peak HeapInuse, sampled every 50 ms, and allocations per
// Get. Every value is checked byte for byte, and every absent key must
// miss. Keys and values are recomputed from (table, entry) on demand, so
// no process holds the key set.
//
// Progress goes to stderr, the markdown report (or -json) to stdout.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/bench/internal/scratchdir"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "manytables:", err)
		os.Exit(1)
	}
}

// config is one run's parameters.
type config struct {
	tables, entries, goroutines int
	presentPct                  int
	duration, warmup            time.Duration
	rounds                      int // interleaved measurements of every configuration
	cacheBytes                  int64
	impls                       []string
	comps                       []implsetup.Compression
	dir                         string // parent of the temporary directory
	keep                        bool
	cpuprofile                  string // directory for the children's CPU profiles
}

// sizeFlag is a byte count given as 67108864, 64MiB, 512KiB or 1GiB.
type sizeFlag int64

func (s *sizeFlag) String() string { return formatSize(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("bad size %q", v)
	}
	*s = sizeFlag(n * mult)
	return nil
}

func formatSize(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("manytables", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tables := fs.Int("tables", 200, "number of tables")
	entries := fs.Int("entries", 50_000, "entries per table")
	duration := fs.Duration("duration", 20*time.Second, "timed lookups per implementation and compression, in all rounds together")
	rounds := fs.Int("rounds", 3, "measure every implementation and compression this many times, in turn, for -duration/rounds each, starting each round one configuration later; Gets/s is the median round")
	warmup := fs.Duration("warmup", 2*time.Second, "untimed lookups before the timed ones, in each child (values checked too)")
	goroutines := fs.Int("goroutines", 16, "goroutines doing lookups")
	present := fs.Int("present", 75, "share of the Gets that look up present keys, in percent (the others look up absent ones)")
	cacheSize := sizeFlag(64 << 20)
	fs.Var(&cacheSize, "cache", "shared block cache budget (bytes, or with KiB, MiB, GiB)")
	impls := fs.String("impls", strings.Join(implNames, ","), "comma-separated implementations: ours (hash index), ours-v1 (no hash index), pebble (v1.1.5), pebble2 (v2.1.7, TableFormatPebblev7), goleveldb")
	comps := fs.String("compression", "snappy,none", "comma-separated compressions: snappy, none")
	dir := fs.String("dir", "", "where to create the temporary directory (default: os.TempDir())")
	keep := fs.Bool("keep", false, "keep the temporary directory and its tables")
	jsonOut := fs.Bool("json", false, "print the rows as JSON instead of markdown")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of each child's timed run to `DIR`/IMPL-COMPRESSION.pprof (allocs/Get then include the profiler's)")
	child := fs.String("child", "", "internal: run as a measuring child process with this JSON spec")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./cmd/manytables [flags]\n")
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name == "child" {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(fs.Output(), "  -%s %s\n    \t%s (default %s)\n", f.Name, name, usage, f.DefValue)
		})
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *child != "" {
		var spec childSpec
		if err := json.Unmarshal([]byte(*child), &spec); err != nil {
			return fmt.Errorf("-child: %w", err)
		}
		return runChild(spec, stdout, stderr)
	}

	cfg := config{tables: *tables, entries: *entries, goroutines: *goroutines, presentPct: *present, duration: *duration, warmup: *warmup, rounds: *rounds,
		cacheBytes: int64(cacheSize), dir: *dir, keep: *keep, cpuprofile: *cpuprofile}
	if cfg.tables < 1 || cfg.tables > maxTables || cfg.entries < 1 || cfg.entries > maxEntries {
		return fmt.Errorf("-tables must be in [1, %d] and -entries in [1, %d]", maxTables, maxEntries)
	}
	if cfg.presentPct < 0 || cfg.presentPct > 100 {
		return fmt.Errorf("-present must be in [0, 100]")
	}
	if cfg.goroutines < 1 || cfg.duration <= 0 || cfg.warmup < 0 || cfg.rounds < 1 {
		return fmt.Errorf("-goroutines, -duration and -rounds must be positive, -warmup not negative")
	}
	for _, c := range strings.Split(*comps, ",") {
		c := implsetup.Compression(strings.TrimSpace(c))
		if c != implsetup.Snappy && c != implsetup.None {
			return fmt.Errorf("unknown compression %q", c)
		}
		if slices.Contains(cfg.comps, c) {
			return fmt.Errorf("compression %q named twice", c)
		}
		cfg.comps = append(cfg.comps, c)
	}
	for _, name := range strings.Split(*impls, ",") {
		name = strings.TrimSpace(name)
		if newImpl(name) == nil {
			return fmt.Errorf("unknown implementation %q (want some of %s)", name, strings.Join(implNames, ", "))
		}
		if slices.Contains(cfg.impls, name) {
			return fmt.Errorf("implementation %q named twice", name)
		}
		cfg.impls = append(cfg.impls, name)
	}

	rep, err := run(cfg, stderr)
	if err != nil {
		return err
	}
	rep.Command = strings.TrimSpace("go run ./cmd/manytables " + strings.Join(args, " "))
	bw := bufio.NewWriter(stdout)
	if *jsonOut {
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeMarkdown(bw, rep)
	}
	return bw.Flush()
}

// row is one (implementation, compression): its build and its child's
// measurements.
type row struct {
	BuildSec     float64   `json:"build_sec"`
	FileBytes    int64     `json:"file_bytes"`
	BuildWorkers int       `json:"build_workers"`
	RoundGets    []float64 `json:"round_gets_per_sec"` // Gets/s of each round, in round order
	childResult
}

// merge folds the rounds of one configuration into one result: Gets/s
// is the median round's; counts add up; memory peaks are the largest.
func merge(rs []childResult) childResult {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return rs[order[a]].GetsPerSec < rs[order[b]].GetsPerSec })
	m := rs[order[len(order)/2]]
	m.Gets, m.Present, m.Absent, m.WarmupGets, m.Mallocs, m.Errors, m.Wrong = 0, 0, 0, 0, 0, 0, 0
	m.ElapsedSec, m.OpenSec = 0, 0
	var hits, misses, evictions int64
	for _, r := range rs {
		m.Gets += r.Gets
		m.Present += r.Present
		m.Absent += r.Absent
		m.WarmupGets += r.WarmupGets
		m.Mallocs += r.Mallocs
		m.Errors += r.Errors
		m.Wrong += r.Wrong
		m.ElapsedSec += r.ElapsedSec
		m.OpenSec = max(m.OpenSec, r.OpenSec)
		m.RssAnonPeak = max(m.RssAnonPeak, r.RssAnonPeak)
		m.RssFilePeak = max(m.RssFilePeak, r.RssFilePeak)
		m.HeapInusePeak = max(m.HeapInusePeak, r.HeapInusePeak)
		m.CacheSizePeak = max(m.CacheSizePeak, r.CacheSizePeak)
		if m.FirstError == "" {
			m.FirstError = r.FirstError
		}
		if m.FirstWrong == "" {
			m.FirstWrong = r.FirstWrong
		}
		hits += r.Cache.Hits
		misses += r.Cache.Misses
		evictions += r.Cache.Evictions
	}
	m.Cache.Hits, m.Cache.Misses, m.Cache.Evictions = hits, misses, evictions
	if m.Gets > 0 {
		m.AllocsPer = float64(m.Mallocs) / float64(m.Gets)
	}
	return m
}

// report is a whole run.
type report struct {
	Command    string  `json:"command"`
	CPU        string  `json:"cpu"`
	Cores      int     `json:"cores"`
	GoVersion  string  `json:"go_version"`
	Cgo        bool    `json:"cgo"`
	Tables     int     `json:"tables"`
	Entries    int     `json:"entries"`
	Goroutines int     `json:"goroutines"`
	PresentPct int     `json:"present_pct"`
	Duration   string  `json:"duration"`
	Rounds     int     `json:"rounds"`
	Warmup     string  `json:"warmup"`
	CacheBytes int64   `json:"cache_bytes"`
	ElapsedSec float64 `json:"elapsed_sec"`
	Rows       []row   `json:"rows"`
}

func (r *report) find(im, c string) *row {
	for i := range r.Rows {
		if r.Rows[i].Impl == im && r.Rows[i].Compression == c {
			return &r.Rows[i]
		}
	}
	return nil
}

// run builds and measures every (compression, implementation) in turn.
func run(cfg config, progress io.Writer) (*report, error) {
	t0 := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(progress, "[%6.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var dir string
	if cfg.keep {
		if dir, err = os.MkdirTemp(cfg.dir, "sstmanytables-"); err != nil {
			return nil, err
		}
		logf("tables in %s (kept)", dir)
	} else {
		var remove func()
		if dir, remove, err = scratchdir.Make(cfg.dir, "sstmanytables-"); err != nil {
			return nil, err
		}
		defer remove() // and on SIGINT or SIGTERM
	}
	w := newWorkload(cfg.tables, cfg.entries)
	rep := &report{CPU: cpuName(), Cores: runtime.NumCPU(), GoVersion: runtime.Version(), Cgo: cgoEnabled,
		Tables: cfg.tables, Entries: cfg.entries, Goroutines: cfg.goroutines, PresentPct: cfg.presentPct, Duration: cfg.duration.String(), Rounds: cfg.rounds, Warmup: cfg.warmup.String(),
		CacheBytes: cfg.cacheBytes}
	logf("%d tables × %d entries (%.0f MiB of keys and values), %d goroutines × %v (after %v of warm-up), shared cache %s",
		cfg.tables, cfg.entries, mib(int64(cfg.tables)*w.rawBytes()), cfg.goroutines, cfg.duration, cfg.warmup, formatSize(cfg.cacheBytes))
	// Build every configuration first, then measure them in rounds, each
	// round starting one configuration later, so that a burst of other
	// load on this shared machine falls on all of them alike.
	var specs []childSpec
	for ci, c := range cfg.comps {
		for ii, name := range cfg.impls {
			sub := filepath.Join(dir, name+"-"+string(c))
			r := row{}
			r.BuildWorkers = max(1, min(runtime.NumCPU(), 4))
			start := time.Now()
			r.FileBytes, err = buildAll(newImpl(name), sub, w, c, r.BuildWorkers)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: build: %w", name, c, err)
			}
			r.BuildSec = time.Since(start).Seconds()
			logf("%s/%s: built %d tables, %.1f MiB, in %.1fs (%d workers, fsync included)",
				name, c, cfg.tables, mib(r.FileBytes), r.BuildSec, r.BuildWorkers)
			spec := childSpec{Impl: name, Compression: c, Dir: sub, Tables: cfg.tables, Entries: cfg.entries,
				Duration: cfg.duration / time.Duration(cfg.rounds), Warmup: cfg.warmup, Goroutines: cfg.goroutines, CacheBytes: cfg.cacheBytes,
				Seed: uint64(ci*len(cfg.impls)+ii) + 1, PresentPct: cfg.presentPct}
			if cfg.cpuprofile != "" {
				if err := os.MkdirAll(cfg.cpuprofile, 0o755); err != nil {
					return nil, err
				}
				spec.CPUProfile, err = filepath.Abs(filepath.Join(cfg.cpuprofile, name+"-"+string(c)+".pprof"))
				if err != nil {
					return nil, err
				}
			}
			specs = append(specs, spec)
			rep.Rows = append(rep.Rows, r)
		}
	}
	results := make([][]childResult, len(specs))
	for round := range cfg.rounds {
		for k := range specs {
			j := (round + k) % len(specs)
			spec := specs[j]
			spec.Seed += uint64(round) << 32
			res, err := runChildProcess(exe, spec, progress)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", spec.Impl, spec.Compression, err)
			}
			logf("round %d/%d, %s/%s: %.0f Gets/s, peak RssAnon %.1f MiB, peak HeapInuse %.1f MiB, %.3f allocs/Get, %d errors, %d wrong",
				round+1, cfg.rounds, spec.Impl, spec.Compression, res.GetsPerSec, mib(res.RssAnonPeak), mib(res.HeapInusePeak), res.AllocsPer, res.Errors, res.Wrong)
			results[j] = append(results[j], res)
		}
	}
	for j := range specs {
		for _, res := range results[j] {
			rep.Rows[j].RoundGets = append(rep.Rows[j].RoundGets, res.GetsPerSec)
		}
		rep.Rows[j].childResult = merge(results[j])
	}
	rep.ElapsedSec = time.Since(t0).Seconds()
	logf("done in %.1fs", rep.ElapsedSec)
	return rep, nil
}

// buildAll builds the workload's tables into dir with workers goroutines,
// fsyncs each file, and returns their total size.
func buildAll(im impl, dir string, w workload, c implsetup.Compression, workers int) (int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	next := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				if err := im.build(dir, t, w, c); err != nil {
					errc <- fmt.Errorf("table %d: %w", t, err)
					for range next {
					}
					return
				}
			}
		}()
	}
	for t := 0; t < w.tables; t++ {
		next <- t
	}
	close(next)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return 0, err
	}
	// fsync, so that write-back of this build does not run during the
	// measurement. The pages stay in the page cache.
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		err = f.Sync()
		st, serr := f.Stat()
		f.Close()
		if err == nil {
			err = serr
		}
		if err != nil {
			return 0, err
		}
		total += st.Size()
	}
	return total, nil
}

// runChildProcess re-executes exe as a child measuring spec and returns
// the JSON line it printed. The child's stderr goes to progress.
func runChildProcess(exe string, spec childSpec, progress io.Writer) (childResult, error) {
	var res childResult
	b, err := json.Marshal(spec)
	if err != nil {
		return res, err
	}
	cmd := exec.Command(exe, "-child", string(b))
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = progress
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("child: %w", err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return res, fmt.Errorf("child output %q: %w", out, err)
	}
	return res, nil
}

func cpuName() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
			}
		}
	}
	return "unknown"
}
