// Command compare builds the same entries into a table with this module,
// with Pebble v1.1.5's and v2.1.7's sstable packages (v2 writing
// TableFormatPebblev7, columnar) and with goleveldb's table package,
// then measures each in turn, interleaved, and prints a markdown table of
// medians and ratios (ours/theirs).
//
//	cd bench && go run ./cmd/compare [-entries N | -large] [-reps N] [-runs N] [-json] [-chart FILE]
//
// With -runs N (N > 1) the command runs itself N times, each a fresh
// process that builds its own tables, and prints every figure as the
// median and the range over the N processes, the hit times run by run and
// issue 41's checks on them (runs.go).
//
// Each implementation is configured as its own users would configure it,
// with every fair advantage; see the comments on ours, pebbleImpl,
// pebble2Impl (and implsetup's Pebble v2 comment) and goleveldbImpl. Progress goes to stderr, results to stdout.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/bench/internal/scratchdir"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		var ie *interruptedError
		if errors.As(err, &ie) {
			// As a shell reports a process the signal killed, and as
			// the child (through bench/internal/scratchdir) exited.
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(128 + int(ie.sig))
		}
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// config is one run's parameters.
type config struct {
	entries, lookups, reps int
	comps                  []implsetup.Compression
	impls                  []string
	dir                    string // parent of the temporary directory
	keep                   bool   // keep the temporary directory
	keys                   keyShape
}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	entries := fs.Int("entries", 1_000_000, "entries per table")
	large := fs.Bool("large", false, "10M-entry variant (overrides -entries)")
	lookups := fs.Int("lookups", 1_000_000, "present and absent lookups per repetition (at most -entries)")
	reps := fs.Int("reps", 3, "repetitions; each measures every implementation once, interleaved")
	comps := fs.String("compression", "snappy,none,zstd", "comma-separated compressions to run: snappy, none, zstd (goleveldb has no zstd and is skipped)")
	impls := fs.String("impls", "ours,pebble,pebble2,goleveldb", "comma-separated implementations to run: ours (the default table, as builder.Create(path, nil) writes it: format version 4, partitioned once its index and filter pass 240 KiB: at 1M entries), pebble (v1.1.5), pebble2 (v2.1.7, TableFormatPebblev7), goleveldb; also ours-v2 (format version 2: the older, wider hash index, one-level), ours-v1 (format version 1: no hash index, one-level), ours-default (ours through reader.Open with nil options: the 64 MiB default cache), ours-ra and ours-v1-ra (ours and ours-v1 read through ReadAt: Options.NoMmap), pebble-2lvl and pebble2-2lvl (Pebble with its default two-level index)")
	jsonOut := fs.Bool("json", false, "print results as JSON instead of markdown")
	chart := fs.String("chart", "", "write an SVG bar chart of the Get and build figures to `FILE`")
	dir := fs.String("dir", "", "where to create the temporary directory (default: os.TempDir())")
	keep := fs.Bool("keep", false, "keep the temporary directory and the last repetition's tables")
	keys := fs.String("keys", "random", "key shape: random (16 random bytes) or sequential (%016d of 2i; absent keys are the odd numbers between)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measurements to `FILE`")
	render := fs.String("render", "", "measure nothing: print (and chart) the results saved by -json in `FILE`")
	cacheMiB := fs.Int64("cache-mib", 256, "block cache budget of every implementation, in MiB")
	runs := fs.Int("runs", 1, "run the whole measurement `N` times, each in a fresh process (this command re-executed) that builds its own tables, and report every figure as median [min–max] over the N runs, with the hit times run by run and issue 41's checks; 1 measures in this process")
	child := fs.Bool(childFlag, false, "") // hidden: set by -runs on its children
	fs.Usage = func() { usage(fs) }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *runs < 1 {
		return fmt.Errorf("-runs must be positive")
	}
	if *runs > 1 && (*render != "" || *cpuprofile != "") {
		return fmt.Errorf("-runs cannot be combined with -render or -cpuprofile (a profile covers one process)")
	}
	if *render != "" {
		b, err := os.ReadFile(*render)
		if err != nil {
			return err
		}
		var multi multiResults
		if err := json.Unmarshal(b, &multi); err == nil && len(multi.Children) > 0 {
			return outputRuns(&multi, *jsonOut, *chart, stdout)
		}
		var res results
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", *render, err)
		}
		return output(&res, *jsonOut, *chart, stdout)
	}
	if *cacheMiB < 1 {
		return fmt.Errorf("-cache-mib must be positive")
	}
	blockCacheSz = *cacheMiB << 20
	cfg := config{entries: *entries, lookups: *lookups, reps: *reps, dir: *dir, keep: *keep, keys: keyShape(*keys)}
	if cfg.keys != randomKeys && cfg.keys != sequentialKeys {
		return fmt.Errorf("unknown key shape %q (want random or sequential)", *keys)
	}
	if *large {
		cfg.entries = 10_000_000
	}
	if cfg.entries < 1 || cfg.lookups < 1 || cfg.reps < 1 {
		return fmt.Errorf("-entries, -lookups and -reps must be positive")
	}
	for _, c := range strings.Split(*comps, ",") {
		if slices.Contains(cfg.comps, implsetup.Compression(c)) {
			return fmt.Errorf("compression %q named twice", c)
		}
		switch implsetup.Compression(c) {
		case implsetup.Snappy, implsetup.None, implsetup.Zstd:
			cfg.comps = append(cfg.comps, implsetup.Compression(c))
		default:
			return fmt.Errorf("unknown compression %q", c)
		}
	}
	for _, name := range strings.Split(*impls, ",") {
		if newImpl(name) == nil {
			return fmt.Errorf("unknown implementation %q", name)
		}
		if slices.Contains(cfg.impls, name) {
			return fmt.Errorf("implementation %q named twice", name)
		}
		cfg.impls = append(cfg.impls, name)
	}
	if *runs > 1 {
		m, err := runChildren(fs, *runs, stderr)
		if err != nil {
			return err
		}
		m.Command = strings.TrimSpace("go run ./cmd/compare " + strings.Join(args, " "))
		return outputRuns(m, *jsonOut, *chart, stdout)
	}

	// The profile covers the measurements, not the dataset generation.
	var stopProfile func()
	var profErr error
	res, err := run(cfg, stderr, func() {
		if *cpuprofile == "" {
			return
		}
		f, err := os.Create(*cpuprofile)
		if err != nil {
			profErr = err
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			profErr = err
			f.Close()
			return
		}
		stopProfile = func() {
			pprof.StopCPUProfile()
			profErr = f.Close()
		}
	})
	if stopProfile != nil {
		stopProfile()
	}
	if err == nil {
		err = profErr
	}
	if err != nil {
		return err
	}
	res.Command = strings.TrimSpace("go run ./cmd/compare " + strings.Join(args, " "))
	if *child {
		// One JSON line for the parent (runs.go); no chart.
		return json.NewEncoder(stdout).Encode(res)
	}
	return output(res, *jsonOut, *chart, stdout)
}

// output writes the chart, if asked for, and the results as JSON or
// markdown.
func output(res *results, jsonOut bool, chart string, stdout io.Writer) error {
	if chart != "" {
		if err := os.WriteFile(chart, []byte(renderSVG(res)), 0o644); err != nil {
			return err
		}
	}
	w := bufio.NewWriter(stdout)
	if jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		writeMarkdown(w, res)
	}
	return w.Flush()
}

func newImpl(name string) impl {
	switch name {
	case "ours":
		return &ours{cacheBytes: blockCacheSz, layout: implsetup.DefaultLayout} // what builder.Create(path, nil) writes: format version 4
	case "ours-v2":
		return &ours{cacheBytes: blockCacheSz, suffix: "-v2", layout: implsetup.HashV2Layout} // version 2's wide hash index, one-level
	case "ours-v1":
		return &ours{cacheBytes: blockCacheSz, suffix: "-v1", layout: implsetup.V1Layout} // no hash index: format version 1, one-level
	case "ours-default":
		return &ours{suffix: "-default", layout: implsetup.DefaultLayout} // reader.Open(path, nil): the shared default 64 MiB cache
	case "ours-ra":
		return &ours{cacheBytes: blockCacheSz, suffix: "-ra", layout: implsetup.DefaultLayout, noMmap: true} // read with ReadAt (pread), no mapping
	case "ours-v1-ra":
		return &ours{cacheBytes: blockCacheSz, suffix: "-v1-ra", layout: implsetup.V1Layout, noMmap: true}
	case "pebble":
		return &pebbleImpl{indexBlockSize: math.MaxInt32}
	case "pebble-2lvl":
		return &pebbleImpl{indexBlockSize: 0, suffix: "-2lvl"} // Pebble's default two-level index, for comparison
	case "pebble2":
		return &pebble2Impl{indexBlockSize: math.MaxInt32}
	case "pebble2-2lvl":
		return &pebble2Impl{suffix: "-2lvl"} // Pebble v2's default two-level index, for comparison
	case "goleveldb":
		return &goleveldbImpl{}
	}
	return nil
}

// run generates the dataset, then for each repetition and compression
// measures every implementation in turn. started is called once the
// dataset exists, just before the measurements (to start profiling).
func run(cfg config, progress io.Writer, started func()) (*results, error) {
	t0 := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(progress, "[%6.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	var dir string
	var err error
	if cfg.keep {
		if dir, err = os.MkdirTemp(cfg.dir, "sstcompare-"); err != nil {
			return nil, err
		}
		logf("tables in %s (kept)", dir)
	} else {
		var remove func()
		if dir, remove, err = scratchdir.Make(cfg.dir, "sstcompare-"); err != nil {
			return nil, err
		}
		defer remove() // and on SIGINT or SIGTERM
	}

	logf("generating %d entries (%d-byte keys, %d-byte values), %d lookups", cfg.entries, keyLen, valueLen, min(cfg.lookups, cfg.entries))
	d := newDataset(cfg.entries, cfg.lookups, cfg.keys)
	logf("dataset ready: %d entries, %.1f MB raw", d.n, float64(d.rawBytes())/1e6)

	res := &results{
		Machine: machineInfo(),
		Entries: d.n,
		Lookups: len(d.hits),
		Reps:    cfg.reps,
	}
	impls := make([]impl, len(cfg.impls))
	for i, name := range cfg.impls {
		impls[i] = newImpl(name)
	}
	idx := map[string]int{}
	for _, c := range cfg.comps {
		for _, im := range impls {
			if !supports(im, c) {
				continue
			}
			idx[im.name()+"/"+string(c)] = len(res.Runs)
			res.Runs = append(res.Runs, runResult{Impl: im.name(), Compression: string(c)})
		}
	}
	if started != nil {
		started()
	}
	for rep := 0; rep < cfg.reps; rep++ {
		for ci, c := range cfg.comps {
			// Rotate the order every round, so that no implementation
			// always goes first: the first build after another
			// implementation's reads ran up to 3x slower (ours-v1 measured
			// 1551 MB/s in second place and 894 MB/s in first).
			for k := range impls {
				im := impls[(k+rep+ci)%len(impls)]
				if !supports(im, c) {
					continue
				}
				s, err := measure(im, c, d, dir, rep == 0, cfg.keep)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, rep %d: %w", im.name(), c, rep+1, err)
				}
				logf("rep %d/%d %-6s %-9s build %6.1f MB/s  open %7.1f µs  first gets %6.0f ns  get %6.0f ns (%.1f allocs)  miss %5.0f ns  first scan %5.1f  scan %5.1f ns/entry",
					rep+1, cfg.reps, c, im.name(), s.BuildMBps, s.OpenUs, s.FirstGetNs, s.GetHitNs, s.GetHitAllocs, s.GetMissNs, s.FirstScanNs, s.ScanNs)
				r := &res.Runs[idx[im.name()+"/"+string(c)]]
				r.Samples = append(r.Samples, s)
			}
		}
	}
	for i := range res.Runs {
		res.Runs[i].Median = medianSample(res.Runs[i].Samples)
	}
	res.ElapsedSec = time.Since(t0).Seconds()
	logf("done in %.1fs", res.ElapsedSec)
	return res, nil
}

// machine describes where the run happened.
type machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	Cgo       bool   `json:"cgo"`
}

func machineInfo() machine {
	m := machine{CPU: "unknown", Cores: runtime.NumCPU(), GoVersion: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Cgo: cgoEnabled}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return m
}
