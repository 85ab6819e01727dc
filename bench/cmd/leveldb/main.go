// Command leveldb measures reading a whole LevelDB database read-only,
// this module's package leveldb (leveldb.OpenDB) against goleveldb opening
// the same directory with opt.Options{ReadOnly: true}, in one interleaved
// run, and prints a markdown table of medians, ratios and the targets of
// issue 42 as checks.
//
//	cd bench && go run ./cmd/leveldb [-keys 1000000] [-rounds 5] [-gets 200000] [-db DIR] [-quick]
//
// The database: -keys live keys (16 bytes: "k" and 15 decimal digits of
// an even number, so that the odd numbers are absent keys falling between
// them), 100-byte values (50 random bytes, then text), put through
// goleveldb's DB API in random order, 1000 to a batch, with goleveldb's
// default options but for a bloom filter of 10 bits per key (-filter-bits;
// goleveldb has none by default, LevelDB users set one), NoSync and
// LevelDB's level sizes (level 1 10 MiB, level 2 100 MiB; goleveldb's
// default is ten times that): snappy, 4 MiB write buffer, 2 MiB tables,
// so that the tables spread over levels 0 to 2. The build waits for the
// compactions to settle, reopens the database and writes its last 1000
// keys again, which stay in the journal. With -db the database
// is kept in DIR and reused by later runs (built when DIR holds none).
//
// Engines, each opened afresh every round and closed after it:
//   - ours: leveldb.OpenDB, the tables memory-mapped, through a new
//     cache.Cache of reader.DefaultCacheSize (64 MiB, the size OpenDB's
//     default cache has; a new one, so that no round inherits a warm cache);
//   - ours-8m: the same with a cache of 8 MiB, goleveldb's default
//     (opt.DefaultBlockCacheCapacity);
//   - ours-ra: ours with leveldb.Options.ReadAhead, the scan's blocks
//     decoded ahead of it on a second goroutine (off by default: it buys
//     wall time with a second core's CPU time); reported, not checked;
//   - goleveldb: gldb.OpenFile(dir, &opt.Options{ReadOnly: true, Filter:
//     the same bloom filter}), its default 8 MiB LRU block cache.
//
// Figures: open (OpenDB / OpenFile, median of -opens per round; both read
// the MANIFEST and replay the journal), a full forward scan of the live
// view (ns/entry, and the process's CPU time over it per entry, user and
// system, every thread's, from getrusage: ours-ra's read-ahead costs CPU
// time the wall time does not show), Gets of present keys and of absent
// keys (ns/op, random order). The checks want ours and ours-8m at least
// twice as fast as goleveldb in every figure, the scan's CPU time too. Each round measures every figure of every engine, the
// engines' order rotating from round to round; the report gives medians
// and ranges. Every timed pass checks its counts (and the Gets their
// values): a mismatch exits 1. Progress goes to stderr, the report to
// stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
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
		fmt.Fprintln(os.Stderr, "leveldb:", err)
		scratchdir.Exit(1)
	}
}

// config is one run's parameters.
type config struct {
	keys       int
	gets       int
	opens      int
	rounds     int
	filterBits int
	writeBuf   int // goleveldb's WriteBuffer while building; 0: its default
	level1     int // level 1's size while building, bytes
	impls      []string
	db         string // kept database directory, or "" for a scratch one
	dir        string // parent of the scratch directory
	strict     bool
	cpuprofile string
}

// allImpls are the engines, in report order.
var allImpls = []string{"ours", "ours-8m", "ours-ra", "goleveldb"}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("leveldb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keys := fs.Int("keys", 1_000_000, "live keys in the database")
	gets := fs.Int("gets", 200_000, "Gets per Get pass (present keys; as many absent keys)")
	opens := fs.Int("opens", 5, "opens timed per round and engine (the median counts)")
	rounds := fs.Int("rounds", 5, "rounds; each measures every figure of every engine once, interleaved")
	writeBufKiB := fs.Int("write-buffer-kib", 0, "goleveldb's write buffer while building, KiB (0: its default, 4 MiB)")
	level1MiB := fs.Int("level1-mib", 10, "level 1's size while building, MiB (goleveldb's CompactionTotalSize is a tenth; 10: LevelDB's level sizes, goleveldb's default is 100)")
	filterBits := fs.Int("filter-bits", 10, "bloom filter bits per key of the database (0: none, goleveldb's default)")
	impls := fs.String("impls", strings.Join(allImpls, ","), "comma-separated engines: ours (64 MiB cache), ours-8m (8 MiB cache), ours-ra (64 MiB cache, read-ahead on), goleveldb")
	db := fs.String("db", "", "keep the database in `DIR` and reuse it in later runs (built when DIR has none)")
	dir := fs.String("dir", "", "where to make the scratch directory (default: os.TempDir())")
	quick := fs.Bool("quick", false, "small run for tests: 20000 keys, 5000 gets, 2 opens, 2 rounds, a 256 KiB write buffer (explicit flags win)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measurement rounds to `FILE` (with -impls ours, of ours alone)")
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
		for name, v := range map[string]int{"keys": 20000, "gets": 5000, "opens": 2, "rounds": 2, "write-buffer-kib": 256} {
			if !set[name] {
				fs.Set(name, fmt.Sprint(v))
			}
		}
	}
	cfg := config{keys: *keys, gets: *gets, opens: *opens, rounds: *rounds, filterBits: *filterBits, writeBuf: *writeBufKiB << 10, level1: *level1MiB << 20,
		db: *db, dir: *dir, strict: *strict, cpuprofile: *cpuprofile}
	if cfg.level1 < 10 {
		return fmt.Errorf("-level1-mib must be positive")
	}
	if cfg.keys < 1 || cfg.gets < 1 || cfg.opens < 1 || cfg.rounds < 1 || cfg.filterBits < 0 {
		return fmt.Errorf("-keys, -gets, -opens and -rounds must be positive, -filter-bits not negative")
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

	start := time.Now()
	res, err := run(cfg, stderr)
	if err != nil {
		return err
	}
	res.elapsed = time.Since(start).Seconds()
	res.command = strings.TrimSpace("go run ./cmd/leveldb " + strings.Join(args, " "))
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
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = ", load average " + strings.Join(strings.Fields(string(b))[:3], " ") + " at the end"
	}
	return fmt.Sprintf("%s, nproc %d (GOMAXPROCS %d), %s %s/%s%s", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}

// sink keeps what the loops read observable.
var sink int
