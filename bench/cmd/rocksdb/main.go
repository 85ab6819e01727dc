// Command rocksdb measures reading one RocksDB block-based table, this
// module's package rocksdb beside RocksDB's own C++ reader of the same
// file and beside Pebble v2, and (-tables db) reading a whole RocksDB
// database, rocksdb.OpenDB beside RocksDB's DB::OpenForReadOnly, in one
// interleaved run, and prints a markdown table of medians, ratios and the
// targets of issues 47 and 48 as checks.
//
//	cd bench && go run ./cmd/rocksdb [-tables fv5,fv2,db] [-keys 1000000] [-rounds 5] [-seeks 200000] [-gets 200000] [-opens 5] [-dir DIR] [-quick]
//
// It needs g++ and Debian's librocksdb-dev (RocksDB 7.8.3): it compiles
// cxx/rocksbench.cc (embedded) with g++ -O2 -lrocksdb into the table
// directory at run time, and that program both writes the tables and
// times RocksDB reading them.
//
// The tables: -keys entries (16-byte keys: "k" and 15 decimal digits of an
// even number, so that the odd numbers are absent keys falling between
// them; 100-byte values: 50 random bytes, then text), in key order, written
// by RocksDB's SstFileWriter with its default BlockBasedTableOptions (4 KiB
// blocks, snappy) and a full Bloom filter of 10 bits per key:
//   - fv5: RocksDB 7.8.3's defaults, format_version 5, XXH3 checksums;
//   - fv2: format_version 2 with CRC-32C, which Pebble v2 reads.
//
// Each is ingested (copied) into a database of its own, for RocksDB's
// Gets. With -dir the tables, databases and the compiled program are kept
// in DIR and reused by later runs (written when missing).
//
// Engines, each opened afresh every round, each with a new block cache of
// -cache-mib, 256 MiB by default: enough for the whole table's decoded
// blocks (about 130 MB at 1M entries), so that the caches the passes warm
// stay warm; reader.DefaultCacheSize, 64 MiB, holds about half of them
// (-cache-mib 64 measures that):
//   - ours: rocksdb.OpenTable, the file mapped, its reads through a new
//     cache.Cache; the scan with one TableIterator (First, Next; no
//     read-ahead goroutine: TableOptions.ReadAhead is off), seeks with one
//     reused TableIterator (SeekGE), Gets with Table.GetAppend(buf[:0],
//     key, MaxSequence), the values into one reused buffer;
//   - rocksdb: RocksDB's own, in the C++ program, a process per round:
//     rocksdb::SstFileReader's iterator for the scan and the seeks, and
//     DB::Get (a PinnableSlice) in a database opened read-only
//     (DB::OpenForReadOnly) over the table's copy, for the Gets;
//   - pebble: Pebble v2.1.7's sstable.NewReader over the fv2 table (opened
//     through objstorageprovider, as a DB opens its tables, and a new
//     pebble.Cache through a cache handle), its iterator for the scan and
//     the seeks (SeekGE), and for Gets SeekPrefixGE, the call that
//     consults the table's Bloom filter (or SeekGE with -pebble-get seek),
//     on one reused iterator. Pebble cannot read the fv5 table: the run
//     tries and reports its error.
//
// Figures, per engine and table: a full forward scan (ns per entry of wall
// time, and of the process's CPU time over it, every thread's: what helper
// threads do is counted, not free), on a freshly opened reader; SeekGE to
// -seeks random present keys (ns per seek; each checked to land on its
// key), after one untimed pass over them that warms the block cache; Gets
// of -gets random present keys then as many absent ones (ns per Get),
// after one untimed pass over both lists. Every timed pass checks
// what it reads (the scan's count; each key found and its value): a
// mismatch exits 1. Each round measures every engine on every table, the
// engines' order rotating from round to round; before each engine's turn
// the table file is read through, so that every scan finds it in the page
// cache. The report gives medians and ranges. Progress goes to stderr
// (each pass's figures, and the major page faults of the Go engines'
// scans), the report to stdout.
//
// The database (-tables db; not in the default list): -keys live keys, the
// tables' keys and values, written by the C++ program through DB::Write
// in batches, with a full Bloom filter of 10 bits per key, snappy, a
// 4 MiB write buffer, 2 MiB tables and a 4 MiB level 1, so that it
// spreads over level 0 and levels 1 to 3: every live key's put in a random
// order, one in ten preceded by an older value, and one odd (absent)
// number in twenty put and later deleted; the compactions settle; two
// flushes more into level 0 (old values of some keys, puts of some odd
// numbers); then writes left in the write-ahead log
// (avoid_flush_during_shutdown) that restore those keys' values and
// delete those odd numbers. Before the rounds, ours is checked against
// the generator entry by entry (and to leave the directory's files as
// they were), RocksDB's view by its count and FNV-1a hash. Each round,
// each engine: -opens opens with a new block cache of -cache-mib each,
// the median timed (ours: rocksdb.OpenDB on the directory; RocksDB:
// DB::OpenForReadOnly on a copy of it made for the round, since its open
// may write there), then on the last open a full forward scan of the
// default column family (ours: DB.NewIterator on one goroutine; the
// process's CPU time too) and Gets of present and absent keys, as for
// the tables (ours: DB.Get; RocksDB: DB::Get).
//
// Targets: on the fv5 table, ours at least as fast as RocksDB's own on
// every figure; on the fv2 table, at least 2x Pebble v2 (issue 47); on
// the database, at least as fast as RocksDB's own on every figure
// (issue 48).
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
		fmt.Fprintln(os.Stderr, "rocksdb:", err)
		scratchdir.Exit(1)
	}
}

// config is one run's parameters.
type config struct {
	keys       int
	opens      int // the database's opens per round and engine
	seeks      int
	gets       int
	rounds     int
	cacheBytes int64
	impls      []string
	tables     []string
	pebbleGet  string // "prefix" (SeekPrefixGE) or "seek" (SeekGE)
	dir        string // kept table directory, or "" for a scratch one
	tmp        string // parent of the scratch directory
	strict     bool
	cpuprofile string
}

// allImpls are the engines, allTables the tables, in report order.
var (
	allImpls  = []string{"ours", "rocksdb", "pebble"}
	allTables = []string{"fv5", "fv2", "db"}
)

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rocksdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keys := fs.Int("keys", 1_000_000, "entries in each table; live keys in the database")
	opens := fs.Int("opens", 5, "the database's opens timed per round and engine (the median counts; the last is read)")
	seeks := fs.Int("seeks", 200_000, "SeekGE calls per pass (random present keys)")
	gets := fs.Int("gets", 200_000, "Gets per pass (present keys; as many absent keys)")
	rounds := fs.Int("rounds", 5, "rounds; each measures every engine on every table once, interleaved")
	cacheMiB := fs.Int("cache-mib", 256, "block cache of every engine, MiB (a new one per round; reader.DefaultCacheSize is 64)")
	impls := fs.String("impls", strings.Join(allImpls, ","), "comma-separated engines: ours, rocksdb (RocksDB's C++), pebble (Pebble v2, fv2 only)")
	tables := fs.String("tables", "fv5,fv2", "comma-separated tables: fv5 (RocksDB 7.8.3's defaults), fv2 (format_version 2, CRC-32C), db (a whole database: issue 48)")
	pebbleGet := fs.String("pebble-get", "prefix", "Pebble's Get: prefix (SeekPrefixGE, consulting the filter) or seek (SeekGE)")
	dir := fs.String("dir", "", "keep the tables, databases and the compiled C++ program in `DIR` and reuse them (written when missing)")
	tmp := fs.String("tmp", "", "where to make the scratch directory without -dir (default: os.TempDir())")
	quick := fs.Bool("quick", false, "small run for tests: 20000 keys, 5000 seeks, 5000 gets, 2 opens, 2 rounds (explicit flags win)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the Go engines' measurement passes to `FILE` (with -impls ours, of ours alone)")
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
		for name, v := range map[string]int{"keys": 20000, "seeks": 5000, "gets": 5000, "opens": 2, "rounds": 2} {
			if !set[name] {
				fs.Set(name, fmt.Sprint(v))
			}
		}
	}
	cfg := config{keys: *keys, opens: *opens, seeks: *seeks, gets: *gets, rounds: *rounds, cacheBytes: int64(*cacheMiB) << 20,
		pebbleGet: *pebbleGet, dir: *dir, tmp: *tmp, strict: *strict, cpuprofile: *cpuprofile}
	if cfg.keys < 1 || cfg.opens < 1 || cfg.seeks < 1 || cfg.gets < 1 || cfg.rounds < 1 || *cacheMiB < 1 {
		return fmt.Errorf("-keys, -opens, -seeks, -gets, -rounds and -cache-mib must be positive")
	}
	if cfg.pebbleGet != "prefix" && cfg.pebbleGet != "seek" {
		return fmt.Errorf("-pebble-get must be prefix or seek")
	}
	var err error
	if cfg.impls, err = pick("engine", *impls, allImpls); err != nil {
		return err
	}
	if cfg.tables, err = pick("table", *tables, allTables); err != nil {
		return err
	}

	start := time.Now()
	res, err := run(cfg, stderr)
	if err != nil {
		return err
	}
	res.elapsed = time.Since(start).Seconds()
	res.command = strings.TrimSpace("go run ./cmd/rocksdb " + strings.Join(args, " "))
	missed := writeReport(stdout, res)
	if cfg.strict && missed > 0 {
		return fmt.Errorf("%d targets missed", missed)
	}
	return nil
}

// pick parses a comma-separated list of names drawn from all, returned in
// all's order without repeats.
func pick(what, list string, all []string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(list, ",") {
		if !slices.Contains(all, name) {
			return nil, fmt.Errorf("unknown %s %q", what, name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(all, a) - slices.Index(all, b) })
	return out, nil
}

// loadAverage returns /proc/loadavg's three figures, or "unknown".
func loadAverage() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			return strings.Join(f[:3], " ")
		}
	}
	return "unknown"
}

// machine describes where the run happened.
func machine(loadStart string) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, nproc %d (GOMAXPROCS %d), %s %s/%s, load average %s at the start, %s at the end",
		cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadStart, loadAverage())
}

// sink keeps what the loops read observable.
var sink int
