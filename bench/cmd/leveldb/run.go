package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/sstkit/sstable/bench/internal/scratchdir"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	gldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// Workload shape: 16-byte keys and 100-byte values, as in cmd/compare.
const (
	keyLen   = 16
	valueLen = 100
)

// text is the compressible tail of every value (the head is random
// bytes), as in cmd/merge.
const text = "It was the best of times, it was the worst of times, it was the age of " +
	"wisdom, it was the age of foolishness, it was the epoch of belief, it was " +
	"the epoch of incredulity, it was the season of Light, it was the season " +
	"of Darkness, it was the spring of hope, it was the winter of despair. "

// key returns key number i: "k" and 15 decimal digits. Live keys are the
// even numbers below 2*keys; the odd ones are absent.
func key(dst []byte, i int) []byte {
	return fmt.Appendf(dst[:0], "k%015d", i)
}

// value returns key i's value: 50 bytes drawn from a generator seeded by
// i, then text.
func value(dst []byte, i int) []byte {
	dst = dst[:0]
	r := rand.New(rand.NewPCG(uint64(i), 42))
	for len(dst) < valueLen/2 {
		dst = append(dst, byte(r.Uint32()))
	}
	return append(dst, text[i%64:i%64+valueLen/2]...)
}

// results are a run's figures: samples[figure][engine] one value per round.
type results struct {
	cfg      config
	samples  map[string]map[string][]float64
	levels   string
	logKeys  int
	dbBytes  int64
	built    string
	machine  string
	elapsed  float64
	command  string
	warnings []string
}

func (r *results) add(fig, impl string, v float64) {
	if r.samples[fig] == nil {
		r.samples[fig] = map[string][]float64{}
	}
	r.samples[fig][impl] = append(r.samples[fig][impl], v)
}

// filterPolicy is goleveldb's bloom filter of the database, or nil.
func filterPolicy(bits int) filter.Filter {
	if bits == 0 {
		return nil
	}
	return filter.NewBloomFilter(bits)
}

// buildOptions are goleveldb's options while building: its defaults but
// for the filter, NoSync, the write buffer and the level sizes.
// goleveldb sizes level L at CompactionTotalSize*10^L (10 MiB * 10 for
// level 1 by default, ten times LevelDB's 10 MB); -level1-mib sets level
// 1's size (10 by default: LevelDB's level sizes, 10 MB, 100 MB, ...).
func buildOptions(cfg config, create bool) *opt.Options {
	return &opt.Options{Filter: filterPolicy(cfg.filterBits), NoSync: true, ErrorIfExist: create,
		WriteBuffer: cfg.writeBuf, CompactionTotalSize: cfg.level1 / 10}
}

// buildDB writes the database into dir through goleveldb's DB API.
func buildDB(cfg config, dir string, stderr io.Writer) error {
	start := time.Now()
	db, err := gldb.OpenFile(dir, buildOptions(cfg, true))
	if err != nil {
		return err
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(cfg.keys)
	var b gldb.Batch
	var kb, vb []byte
	for n, j := range perm {
		kb, vb = key(kb, 2*j), value(vb, 2*j)
		b.Put(kb, vb)
		if b.Len() == 1000 || n == len(perm)-1 {
			if err := db.Write(&b, nil); err != nil {
				db.Close()
				return err
			}
			b.Reset()
		}
	}
	// Let the compactions settle (closing would abandon them), so that
	// the levels have their steady shape: until the table counts of
	// every level stay the same for two seconds.
	var last string
	for stable, waited := 0, 0; stable < 10 && waited < 600; waited++ {
		time.Sleep(200 * time.Millisecond)
		var counts []string
		for l := range leveldb.NumLevels {
			v, err := db.GetProperty(fmt.Sprintf("leveldb.num-files-at-level%d", l))
			if err != nil {
				db.Close()
				return err
			}
			counts = append(counts, v)
		}
		if now := strings.Join(counts, " "); now == last {
			stable++
		} else {
			last, stable = now, 0
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	// Reopen, so that goleveldb flushes its journals into level 0, and
	// write the last 1000 keys again, which stay in the one new journal:
	// goleveldb's read-only open fails with io.EOF on a database left
	// with two journals (recoverJournalRO reuses a journal.Reader whose
	// Reset returns the previous journal's io.EOF), which a close during
	// a memtable flush leaves.
	if db, err = gldb.OpenFile(dir, buildOptions(cfg, false)); err != nil {
		return err
	}
	for _, j := range perm[max(0, len(perm)-1000):] {
		kb, vb = key(kb, 2*j), value(vb, 2*j)
		b.Put(kb, vb)
	}
	if err := db.Write(&b, nil); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) != 1 {
		return fmt.Errorf("%d journals left, want 1", len(logs))
	}
	fmt.Fprintf(stderr, "built %d keys in %s in %.1f s\n", cfg.keys, dir, time.Since(start).Seconds())
	return nil
}

// engine is one way of reading the database.
type engine interface {
	scan() (int, error)
	get(k []byte) ([]byte, bool, error)
	close() error
}

type ours struct {
	db *leveldb.DB
	c  *cache.Cache
	it *merge.Iterator
}

func openOurs(dir string, cacheBytes int64, readAhead bool) (*ours, error) {
	c, err := cache.New(cacheBytes)
	if err != nil {
		return nil, err
	}
	db, err := leveldb.OpenDB(dir, &leveldb.Options{Cache: c, ReadAhead: readAhead})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &ours{db: db, c: c}, nil
}

func (o *ours) scan() (int, error) {
	it := o.db.NewIterator(nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		sink += len(it.Key()) + len(it.Value())
	}
	return n, it.Close()
}

func (o *ours) get(k []byte) ([]byte, bool, error) {
	v, err := o.db.Get(k)
	if errors.Is(err, reader.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (o *ours) close() error {
	err := o.db.Close()
	if err2 := o.c.Close(); err == nil {
		err = err2
	}
	return err
}

type theirs struct{ db *gldb.DB }

func openTheirs(dir string, bits int) (*theirs, error) {
	db, err := gldb.OpenFile(dir, &opt.Options{ReadOnly: true, Filter: filterPolicy(bits)})
	if err != nil {
		return nil, err
	}
	return &theirs{db: db}, nil
}

func (t *theirs) scan() (int, error) {
	it := t.db.NewIterator(nil, nil)
	n := 0
	for it.Next() {
		n++
		sink += len(it.Key()) + len(it.Value())
	}
	it.Release()
	return n, it.Error()
}

func (t *theirs) get(k []byte) ([]byte, bool, error) {
	v, err := t.db.Get(k, nil)
	if errors.Is(err, gldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (t *theirs) close() error { return t.db.Close() }

func open(cfg config, impl, dir string) (engine, error) {
	switch impl {
	case "ours":
		return openOurs(dir, reader.DefaultCacheSize, false)
	case "ours-8m":
		return openOurs(dir, int64(opt.DefaultBlockCacheCapacity), false)
	case "ours-ra":
		return openOurs(dir, reader.DefaultCacheSize, true)
	default:
		return openTheirs(dir, cfg.filterBits)
	}
}

func run(cfg config, stderr io.Writer) (*results, error) {
	res := &results{cfg: cfg, samples: map[string]map[string][]float64{}}
	dir := cfg.db
	if dir == "" {
		scratch, remove, err := scratchdir.Make(cfg.dir, "leveldb-bench-")
		if err != nil {
			return nil, err
		}
		defer remove()
		dir = filepath.Join(scratch, "db")
	}
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		if err := buildDB(cfg, dir, stderr); err != nil {
			return nil, fmt.Errorf("building the database: %w", err)
		}
		res.built = "built for this run"
	} else {
		res.built = "reused from " + dir
	}

	// Describe the database, and check it holds what was written.
	db, err := leveldb.OpenDB(dir, nil)
	if err != nil {
		return nil, err
	}
	per := make([]int, leveldb.NumLevels)
	bytesPer := make([]int64, leveldb.NumLevels)
	for _, f := range db.Files() {
		per[f.Level]++
		bytesPer[f.Level] += f.Size
		res.dbBytes += f.Size
	}
	var parts []string
	for l := range per {
		if per[l] > 0 {
			parts = append(parts, fmt.Sprintf("L%d %d tables (%.1f MB)", l, per[l], float64(bytesPer[l])/1e6))
		}
	}
	res.levels = strings.Join(parts, ", ")
	res.logKeys = db.LogEntries()
	db.Close()
	fmt.Fprintf(stderr, "database: %s; %d keys in the journal\n", res.levels, res.logKeys)

	// Lookup keys: present ones in random order, absent ones between them.
	rng := rand.New(rand.NewPCG(7, 8))
	present, absent := make([]int, cfg.gets), make([]int, cfg.gets)
	for i := range present {
		present[i] = 2 * rng.IntN(cfg.keys)
		absent[i] = 2*rng.IntN(cfg.keys) + 1
	}
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	for round := 0; round < cfg.rounds; round++ {
		order := slices.Clone(cfg.impls)
		for range round % len(order) {
			order = append(order[1:], order[0])
		}
		for _, impl := range order {
			if err := measure(cfg, res, impl, dir, present, absent); err != nil {
				return nil, fmt.Errorf("%s: %w", impl, err)
			}
		}
		fmt.Fprintf(stderr, "round %d of %d done\n", round+1, cfg.rounds)
	}
	res.machine = machine()
	return res, nil
}

// measure runs one round of impl: opens, a scan, Gets present and absent.
func measure(cfg config, res *results, impl, dir string, present, absent []int) error {
	runtime.GC()
	var opens []float64
	var e engine
	for i := 0; i < cfg.opens; i++ {
		start := time.Now()
		x, err := open(cfg, impl, dir)
		if err != nil {
			return err
		}
		opens = append(opens, float64(time.Since(start).Microseconds())/1e3)
		if i < cfg.opens-1 {
			if err := x.close(); err != nil {
				return err
			}
		} else {
			e = x
		}
	}
	res.add("open", impl, median(opens))
	err := passes(cfg, res, impl, e, present, absent)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	return err
}

// passes times a full scan, then the Gets of present and absent keys.
func passes(cfg config, res *results, impl string, e engine, present, absent []int) error {
	cpu0 := cpuTime()
	start := time.Now()
	n, err := e.scan()
	if err != nil {
		return err
	}
	if n != cfg.keys {
		return fmt.Errorf("scan: %d entries, want %d", n, cfg.keys)
	}
	res.add("scan", impl, float64(time.Since(start).Nanoseconds())/float64(n))
	if cpu0 >= 0 {
		res.add("scan-cpu", impl, float64(cpuTime()-cpu0)/float64(n))
	}

	var kb, vb []byte
	start = time.Now()
	for _, i := range present {
		kb = key(kb, i)
		v, ok, err := e.get(kb)
		if err != nil || !ok {
			return fmt.Errorf("Get(%s): %v, %v", kb, ok, err)
		}
		if len(v) != valueLen || !bytes.Equal(v[valueLen/2:], []byte(text[i%64:i%64+valueLen/2])) {
			vb = value(vb, i)
			return fmt.Errorf("Get(%s) = %x, want %x", kb, v, vb)
		}
	}
	res.add("get", impl, float64(time.Since(start).Nanoseconds())/float64(len(present)))

	start = time.Now()
	for _, i := range absent {
		kb = key(kb, i)
		if _, ok, err := e.get(kb); err != nil || ok {
			return fmt.Errorf("Get(%s) of an absent key: %v, %v", kb, ok, err)
		}
	}
	res.add("get-absent", impl, float64(time.Since(start).Nanoseconds())/float64(len(absent)))
	return nil
}
