// Command merge measures reading a stack of overlapping tables as one
// view, this module's merge package against Pebble v2.1.7 (a DB holding
// the same tables, ingested oldest first: the first in L6, the others
// as L0 sublevels; and NewExternalIter over the table files) and
// goleveldb's merged iterator, in one interleaved run, and
// prints a markdown table of medians, ratios and the targets of issue 40
// as checks.
//
//	cd bench && go run ./cmd/merge [-tables 8] [-entries 250000] [-rounds 3] [-quick]
//
// The workload: -tables tables of -entries entries each (16-byte keys,
// 100-byte values, snappy), each drawing its keys from one shared key
// space (-keyspace; default tables*entries/2, so that a key is in about
// two tables, with a different value in each: the newer shadows the
// older), with -rangedels range deletions per table covering -delfrac of
// the key space (they hide the keys of older tables). The same logical
// data is written in each library's format; see ours.go, pebble.go and
// goleveldb.go for how each is written, opened and read.
//
// Before measuring, the harness checks that our view and Pebble's (DB
// and NewExternalIter) hold exactly the live keys of the model, with
// their newest values, forward and backward, and that Gets of a sample
// of keys agree; every timed scan, seek pass and Get pass checks its
// counts again. Any disagreement is an error: the command exits 1.
//
// Each round measures every figure for every library in turn, the order
// rotating from round to round; the report gives the median of the
// rounds and their range. Progress goes to stderr, the report to stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/sstkit/sstable/bench/internal/scratchdir"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "merge:", err)
		scratchdir.Exit(1)
	}
}

// config is one run's parameters.
type config struct {
	params
	rounds     int
	nexts      int   // Next calls after each SeekGE
	cacheBytes int64 // block cache of ours, Pebble's DB and goleveldb
	target     int64 // compaction output table size
	measures   []string
	impls      []string
	// keptCompactCache gives the compactions one block cache per
	// library, kept from round to round, rather than a new one each.
	keptCompactCache bool
	dir              string
	strict           bool // exit 1 when a target is missed
}

// allImpls are the engines, in report order.
var allImpls = []string{"ours", "pebble", "external", "goleveldb"}

// allMeasures are the measurements of a round, in order.
var allMeasures = []string{"fwd", "rev", "seek", "get", "compact"}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tables := fs.Int("tables", 8, "number of tables in the stack")
	entries := fs.Int("entries", 250_000, "entries per table")
	keySpace := fs.Int("keyspace", 0, "distinct keys the tables draw from (0: tables*entries/2, at least 2*entries)")
	rangeDels := fs.Int("rangedels", 5, "range deletions per table")
	delFrac := fs.Float64("delfrac", 0.01, "fraction of the key space each table's range deletions cover")
	lookups := fs.Int("lookups", 100_000, "Gets per Get measurement (keys only in the oldest table; absent keys)")
	seeks := fs.Int("seeks", 50_000, "SeekGE calls per seek measurement")
	nexts := fs.Int("nexts", 10, "Next calls after each SeekGE")
	rounds := fs.Int("rounds", 3, "rounds; each measures every figure of every library once, interleaved")
	quick := fs.Bool("quick", false, "small run for tests: 8 tables of 2000 entries, 2000 lookups, 1000 seeks, 2 rounds (explicit flags win)")
	cacheMiB := fs.Int64("cache-mib", 512, "block cache of ours (one cache.Cache shared by the tables), of the Pebble DB and of goleveldb, MiB")
	targetMiB := fs.Int64("target-mib", 64, "compaction output table size, MiB")
	measure := fs.String("measure", strings.Join(allMeasures, ","), "comma-separated measurements to run: fwd (forward scans), rev (reverse scans), seek, get, compact")
	impls := fs.String("impls", strings.Join(allImpls, ","), "comma-separated engines: ours, pebble (the DB), external (Pebble's NewExternalIter), goleveldb")
	dir := fs.String("dir", "", "where to make the scratch directory (default: os.TempDir())")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measurement rounds to `FILE`")
	keptCC := fs.Bool("kept-compact-cache", false, "give the compactions one block cache per library, kept from round to round, rather than a new one each (for our cache, slower on this VM: see BENCHMARKS.md)")
	strict := fs.Bool("strict", false, "exit 1 when a target is missed, not only on a correctness failure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]int{"entries": 2000, "lookups": 2000, "seeks": 1000, "rounds": 2} {
			if !set[name] {
				fs.Set(name, fmt.Sprint(v))
			}
		}
	}
	cfg := config{
		params: params{tables: *tables, entries: *entries, keySpace: *keySpace, rangeDels: *rangeDels,
			delFrac: *delFrac, lookups: *lookups, seeks: *seeks, samples: 10_000},
		rounds: *rounds, nexts: *nexts, cacheBytes: *cacheMiB << 20, target: *targetMiB << 20,
		dir: *dir, strict: *strict, keptCompactCache: *keptCC,
	}
	if cfg.tables < 1 || cfg.entries < 1 || cfg.lookups < 1 || cfg.seeks < 1 || cfg.rounds < 1 || cfg.nexts < 0 {
		return fmt.Errorf("-tables, -entries, -lookups, -seeks and -rounds must be positive, -nexts not negative")
	}
	if cfg.tables > 100 {
		return fmt.Errorf("-tables: at most 100")
	}
	if cfg.delFrac < 0 || cfg.delFrac > 0.5 || cfg.rangeDels < 0 {
		return fmt.Errorf("-delfrac must be in [0, 0.5], -rangedels not negative")
	}
	if *cacheMiB < 1 || *targetMiB < 1 {
		return fmt.Errorf("-cache-mib and -target-mib must be positive")
	}
	if cfg.keySpace == 0 {
		cfg.keySpace = max(cfg.tables*cfg.entries/2, 2*cfg.entries)
	}
	if float64(cfg.keySpace)*(1-cfg.delFrac) < float64(cfg.entries)*1.05 {
		return fmt.Errorf("-keyspace %d is too small for %d entries per table", cfg.keySpace, cfg.entries)
	}
	for _, m := range strings.Split(*measure, ",") {
		if !slices.Contains(allMeasures, m) {
			return fmt.Errorf("unknown measurement %q", m)
		}
		cfg.measures = append(cfg.measures, m)
	}
	for _, name := range strings.Split(*impls, ",") {
		if !slices.Contains(allImpls, name) {
			return fmt.Errorf("unknown engine %q", name)
		}
		if !slices.Contains(cfg.impls, name) {
			cfg.impls = append(cfg.impls, name)
		}
	}
	slices.SortFunc(cfg.impls, func(a, b string) int { return slices.Index(allImpls, a) - slices.Index(allImpls, b) })

	var stopProfile func() error
	res, err := run(cfg, stderr, func() error {
		if *cpuprofile == "" {
			return nil
		}
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		stopProfile = func() error {
			pprof.StopCPUProfile()
			return f.Close()
		}
		return nil
	}, func() error {
		if stopProfile == nil {
			return nil
		}
		s := stopProfile
		stopProfile = nil
		return s()
	})
	if stopProfile != nil {
		stopProfile()
	}
	if err != nil {
		return err
	}
	res.command = strings.TrimSpace("go run ./cmd/merge " + strings.Join(args, " "))
	missed := writeReport(stdout, res)
	if cfg.strict && missed > 0 {
		return fmt.Errorf("%d targets missed", missed)
	}
	return nil
}

// machine describes where the run happened.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, nproc %d (GOMAXPROCS %d), %s %s/%s", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// timed runs f and returns its wall time in seconds.
func timed(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return time.Since(start).Seconds(), err
}

// sink keeps what the loops read observable.
var sink int
