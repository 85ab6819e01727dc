package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	sstable2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/bench/internal/scratchdir"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

//go:embed cxx/rocksbench.cc
var cxxSource []byte

// Workload shape: 16-byte keys and 100-byte values, as in cmd/leveldb.
const (
	keyLen   = 16
	valueLen = 100
)

// text is the compressible tail of every value (the head is random
// bytes), as in cmd/leveldb.
const text = "It was the best of times, it was the worst of times, it was the age of " +
	"wisdom, it was the age of foolishness, it was the epoch of belief, it was " +
	"the epoch of incredulity, it was the season of Light, it was the season " +
	"of Darkness, it was the spring of hope, it was the winter of despair. "

// key returns key number i: "k" and 15 decimal digits. Present keys are
// the even numbers below 2*keys; the odd ones are absent.
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

// valueOK reports whether v is key i's value, by its text tail (the
// check both languages make).
func valueOK(v []byte, i int) bool {
	return len(v) == valueLen && string(v[valueLen/2:]) == text[i%64:i%64+valueLen/2]
}

// figures of a pass, by id: ns per entry or per operation.
type sample map[string]float64

// String lists s's figures in the report's order.
func (s sample) String() string {
	var b strings.Builder
	for _, f := range slices.Concat(dbFigures[:1], figures) {
		if v, ok := s[f.id]; ok {
			fmt.Fprintf(&b, " %s %.1f", f.id, v)
		}
	}
	if v, ok := s["scan-majflt"]; ok {
		fmt.Fprintf(&b, " (scan: %.0f major page faults)", v)
	}
	return b.String()
}

// results are a run's figures: samples[table][figure][engine], one value
// per round.
type results struct {
	cfg       config
	samples   map[string]map[string]map[string][]float64
	info      map[string]string // table → its layout, as ours reads it
	pebbleFV5 string            // what Pebble made of the fv5 table
	built     string
	machine   string
	elapsed   float64
	command   string
}

func (r *results) add(table, impl string, s sample) {
	if r.samples[table] == nil {
		r.samples[table] = map[string]map[string][]float64{}
	}
	for fig, v := range s {
		if r.samples[table][fig] == nil {
			r.samples[table][fig] = map[string][]float64{}
		}
		r.samples[table][fig][impl] = append(r.samples[table][fig][impl], v)
	}
}

// lookup is one key of the seek and Get passes and its number.
type lookup struct {
	key []byte
	i   int
}

// lookups are the keys of the seek and Get passes, made before the timed
// loops (as the C++ side reads them from a file), their bytes in one
// array.
type lookups struct {
	seek, present, absent []lookup
}

// newLookups returns the lookups of key numbers seek, present and absent.
func newLookups(seek, present, absent []int) lookups {
	arena := make([]byte, keyLen*(len(seek)+len(present)+len(absent)))
	list := func(nums []int) []lookup {
		out := make([]lookup, len(nums))
		for j, i := range nums {
			out[j] = lookup{key: key(arena[:0:keyLen], i), i: i}
			arena = arena[keyLen:]
		}
		return out
	}
	return lookups{seek: list(seek), present: list(present), absent: list(absent)}
}

// paths of one table's files.
type tablePaths struct {
	sst    string // the table
	db     string // a database holding a copy of it
	pebble string // a directory whose 000001.sst is the table, for Pebble's provider
}

func pathsOf(dir, table string, keys int) tablePaths {
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", table, keys))
	return tablePaths{sst: filepath.Join(base, "table.sst"), db: filepath.Join(base, "db"), pebble: filepath.Join(base, "pebble")}
}

// formatVersion is the format_version each table is written with.
var formatVersion = map[string]int{"fv5": 5, "fv2": 2}

// buildCxx compiles the embedded C++ program into dir, named by its
// source's hash so that a kept directory gets a new build when the source
// changes, and returns its path.
func buildCxx(dir string, stderr io.Writer) (string, error) {
	sum := sha256.Sum256(cxxSource)
	bin := filepath.Join(dir, "rocksbench-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return "", fmt.Errorf("no g++ (install g++ and Debian's librocksdb-dev): %w", err)
	}
	src := filepath.Join(dir, "rocksbench.cc")
	if err := os.WriteFile(src, cxxSource, 0o644); err != nil {
		return "", err
	}
	start := time.Now()
	tmp := bin + ".tmp"
	if out, err := exec.Command(gxx, "-O2", "-o", tmp, src, "-lrocksdb").CombinedOutput(); err != nil {
		return "", fmt.Errorf("g++ -O2 %s -lrocksdb (install Debian's librocksdb-dev): %v\n%s", src, err, out)
	}
	fmt.Fprintf(stderr, "compiled %s in %.1f s\n", bin, time.Since(start).Seconds())
	return bin, os.Rename(tmp, bin)
}

// buildTable writes table (fv5 or fv2) of cfg.keys entries into dir with
// the C++ program, with its database and Pebble's directory, unless they
// are there; it reports whether it wrote them.
func buildTable(cfg config, bin, dir, table string, stderr io.Writer) (bool, error) {
	p := pathsOf(dir, table, cfg.keys)
	base := filepath.Dir(p.sst)
	if _, err := os.Stat(base); err == nil {
		return false, nil
	}
	start := time.Now()
	tmpBase := base + ".tmp"
	os.RemoveAll(tmpBase)
	t := pathsOf(dir, table, cfg.keys)
	for _, s := range []*string{&t.sst, &t.db, &t.pebble} {
		*s = filepath.Join(tmpBase, filepath.Base(*s))
	}
	if err := os.MkdirAll(t.pebble, 0o755); err != nil {
		return false, err
	}
	cmd := exec.Command(bin, "write", strconv.Itoa(formatVersion[table]), t.sst, t.db)
	in, err := cmd.StdinPipe()
	if err != nil {
		return false, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return false, err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	var kb, vb []byte
	var werr error
	for j := range cfg.keys {
		kb, vb = key(kb, 2*j), value(vb, 2*j)
		w.Write(kb)
		if _, werr = w.Write(vb); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = w.Flush()
	}
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		return false, fmt.Errorf("%s write: %v %v\n%s", bin, err, werr, out.Bytes())
	}
	// Pebble's provider opens 000001.sst of its directory.
	if err := os.Link(t.sst, filepath.Join(t.pebble, "000001.sst")); err != nil {
		return false, err
	}
	if err := os.Rename(tmpBase, base); err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "wrote %s (%s) in %.1f s\n", p.sst, strings.TrimSpace(out.String()), time.Since(start).Seconds())
	return true, nil
}

// writeKeys writes the lookups into path in the C++ program's format.
func writeKeys(path string, l lookups) error {
	var b bytes.Buffer
	b.WriteString("RBK1")
	for _, n := range []int{len(l.seek), len(l.present), len(l.absent)} {
		b.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(text))))
	b.WriteString(text)
	for _, list := range [][]lookup{l.seek, l.present, l.absent} {
		for _, k := range list {
			b.Write(k.key)
			b.Write(binary.LittleEndian.AppendUint64(nil, uint64(k.i)))
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func run(cfg config, stderr io.Writer) (*results, error) {
	res := &results{cfg: cfg, samples: map[string]map[string]map[string][]float64{}, info: map[string]string{}}
	loadStart := loadAverage()
	dir := cfg.dir
	if dir == "" {
		scratch, remove, err := scratchdir.Make(cfg.tmp, "rocksdb-bench-")
		if err != nil {
			return nil, err
		}
		defer remove()
		dir = scratch
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin, err := buildCxx(dir, stderr)
	if err != nil {
		return nil, err
	}
	wrote := false
	for _, table := range cfg.tables {
		build := buildTable
		if table == "db" {
			build = func(cfg config, bin, dir, _ string, stderr io.Writer) (bool, error) {
				return buildDB(cfg, bin, dir, stderr)
			}
		}
		w, err := build(cfg, bin, dir, table, stderr)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", table, err)
		}
		wrote = wrote || w
	}
	res.built = "written for this run"
	if !wrote {
		res.built = "reused from " + dir
	}

	// Describe the tables, as ours reads them.
	for _, table := range cfg.tables {
		if table == "db" {
			// Checked whole, once: the rounds check counts and the Gets.
			start := time.Now()
			if res.info[table], err = verifyDB(cfg, bin, dir); err != nil {
				return nil, fmt.Errorf("db: %w", err)
			}
			fmt.Fprintf(stderr, "db: both views checked whole in %.1f s: %s\n", time.Since(start).Seconds(), res.info[table])
			continue
		}
		p := pathsOf(dir, table, cfg.keys)
		t, err := rocksdb.OpenTable(p.sst, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
		in := t.Info()
		raw := func(name string) uint64 { v, _ := t.NumericProperty(name); return v }
		res.info[table] = fmt.Sprintf("%.1f MB, format_version %d, %s, %s, %d data blocks (%.1f MB stored, %.1f MB of keys and values), %s index, filter %s",
			float64(in.Size)/1e6, in.FormatVersion, in.Checksum, in.Compression, in.DataBlocks,
			float64(raw("rocksdb.data.size"))/1e6, float64(raw("rocksdb.raw.key.size")+raw("rocksdb.raw.value.size"))/1e6, in.IndexType, in.Filter)
		t.Close()
	}
	if slices.Contains(cfg.tables, "fv5") && slices.Contains(cfg.impls, "pebble") {
		res.pebbleFV5 = tryPebble(cfg, pathsOf(dir, "fv5", cfg.keys))
		fmt.Fprintf(stderr, "pebble on fv5: %s\n", res.pebbleFV5)
	}

	// Lookup keys: present ones in random order, absent ones between them.
	rng := rand.New(rand.NewPCG(7, 8))
	var seek, present, absent []int
	for range cfg.seeks {
		seek = append(seek, 2*rng.IntN(cfg.keys))
	}
	for range cfg.gets {
		present = append(present, 2*rng.IntN(cfg.keys))
		absent = append(absent, 2*rng.IntN(cfg.keys)+1)
	}
	l := newLookups(seek, present, absent)
	keysPath := filepath.Join(dir, "keys.bin")
	if err := writeKeys(keysPath, l); err != nil {
		return nil, err
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
	for round := range cfg.rounds {
		for _, table := range cfg.tables {
			order := implsOf(cfg, table)
			if len(order) == 0 {
				continue
			}
			for range round % len(order) {
				order = append(order[1:], order[0])
			}
			for _, impl := range order {
				runtime.GC()
				var s sample
				var err error
				if table == "db" {
					s, err = measureDB(cfg, impl, bin, keysPath, dir, l)
				} else {
					// Every engine's scan finds the file in the page
					// cache: none pays for disk reads another's eviction
					// caused.
					if err := touch(pathsOf(dir, table, cfg.keys).sst); err != nil {
						return nil, err
					}
					s, err = measure(cfg, impl, bin, keysPath, pathsOf(dir, table, cfg.keys), l)
				}
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", impl, table, err)
				}
				res.add(table, impl, s)
				fmt.Fprintf(stderr, "  %s %s:%s\n", table, impl, s)
			}
		}
		fmt.Fprintf(stderr, "round %d of %d done (load average %s)\n", round+1, cfg.rounds, loadAverage())
	}
	res.machine = machine(loadStart)
	return res, nil
}

// implsOf returns the engines of cfg that read table: Pebble v2 reads
// only fv2 (it cannot read a RocksDB database either).
func implsOf(cfg config, table string) []string {
	var out []string
	for _, impl := range cfg.impls {
		if impl != "pebble" || table == "fv2" {
			out = append(out, impl)
		}
	}
	return out
}

// touch reads the file at path through, into the page cache.
func touch(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyBuffer(io.Discard, f, make([]byte, 1<<20))
	return err
}

// measure runs one round of impl over one table.
func measure(cfg config, impl, bin, keysPath string, p tablePaths, l lookups) (sample, error) {
	if impl == "rocksdb" {
		return measureCxx(cfg, bin, keysPath, p)
	}
	var e engine
	var err error
	if impl == "ours" {
		e, err = openOurs(p.sst, cfg.cacheBytes)
	} else {
		e, err = openPebble(p.pebble, cfg.cacheBytes, cfg.pebbleGet)
	}
	if err != nil {
		return nil, err
	}
	s, err := passes(cfg, e, l)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	return s, err
}

// measureCxx runs the C++ program's round and parses its figures.
func measureCxx(cfg config, bin, keysPath string, p tablePaths) (sample, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "read", p.sst, p.db, keysPath, strconv.FormatInt(cfg.cacheBytes, 10))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s read: %v\n%s", bin, err, errOut.Bytes())
	}
	s, err := parseFigures(out.String())
	if err != nil {
		return nil, err
	}
	if s["entries"] != float64(cfg.keys) {
		return nil, fmt.Errorf("scan: %v entries, want %d", s["entries"], cfg.keys)
	}
	delete(s, "entries")
	for _, fig := range []string{"scan", "scan-cpu", "seek", "get", "get-absent"} {
		if _, ok := s[fig]; !ok {
			return nil, fmt.Errorf("no %s figure in %q", fig, out.String())
		}
	}
	return s, nil
}

// parseFigures reads the C++ program's "figure value" lines.
func parseFigures(out string) (sample, error) {
	s := sample{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		s[f[0]] = v
	}
	return s, nil
}

// engine is one Go reader of a table.
type engine interface {
	scan() (int, error)
	// seek positions at the first key at or above k and returns its key
	// and value.
	seek(k []byte) (key, value []byte, err error)
	get(k []byte) ([]byte, bool, error)
	close() error
}

// passes times a full scan, then, each after an untimed pass that warms
// the block cache, the seeks and the Gets of present and absent keys.
func passes(cfg config, e engine, l lookups) (sample, error) {
	s := sample{}
	flt0 := majorFaults()
	cpu0 := cpuTime()
	start := time.Now()
	n, err := e.scan()
	elapsed := time.Since(start)
	cpu1 := cpuTime()
	if flt0 >= 0 {
		s["scan-majflt"] = float64(majorFaults() - flt0)
	}
	if err != nil {
		return nil, err
	}
	if n != cfg.keys {
		return nil, fmt.Errorf("scan: %d entries, want %d", n, cfg.keys)
	}
	s["scan"] = float64(elapsed.Nanoseconds()) / float64(n)
	if cpu0 >= 0 {
		s["scan-cpu"] = float64(cpu1-cpu0) / float64(n)
	}

	seeks := func() error {
		for _, x := range l.seek {
			k, v, err := e.seek(x.key)
			if err != nil {
				return err
			}
			if !bytes.Equal(k, x.key) || !valueOK(v, x.i) {
				return fmt.Errorf("SeekGE(%s) = %q, %x", x.key, k, v)
			}
		}
		return nil
	}
	// Warm the block cache, as the C++ side warms RocksDB's.
	if err := seeks(); err != nil {
		return nil, err
	}
	start = time.Now()
	if err := seeks(); err != nil {
		return nil, err
	}
	s["seek"] = float64(time.Since(start).Nanoseconds()) / float64(len(l.seek))

	if err := timeGets(l, s, e.get); err != nil {
		return nil, err
	}
	return s, nil
}

// timeGets times get over the present keys, then over the absent ones,
// after one untimed pass over both (which warms the block cache, as the
// C++ side warms RocksDB's), checking each, into s.
func timeGets(l lookups, s sample, get func(k []byte) ([]byte, bool, error)) error {
	getPresent := func() error {
		for _, x := range l.present {
			v, ok, err := get(x.key)
			if err != nil || !ok {
				return fmt.Errorf("Get(%s): %v, %v", x.key, ok, err)
			}
			if !valueOK(v, x.i) {
				return fmt.Errorf("Get(%s) = %x", x.key, v)
			}
		}
		return nil
	}
	getAbsent := func() error {
		for _, x := range l.absent {
			if _, ok, err := get(x.key); err != nil || ok {
				return fmt.Errorf("Get(%s) of an absent key: %v, %v", x.key, ok, err)
			}
		}
		return nil
	}
	if err := getPresent(); err != nil {
		return err
	}
	if err := getAbsent(); err != nil {
		return err
	}
	start := time.Now()
	if err := getPresent(); err != nil {
		return err
	}
	mid := time.Now()
	if err := getAbsent(); err != nil {
		return err
	}
	end := time.Now()
	s["get"] = float64(mid.Sub(start).Nanoseconds()) / float64(len(l.present))
	s["get-absent"] = float64(end.Sub(mid).Nanoseconds()) / float64(len(l.absent))
	return nil
}

// ours is package rocksdb over a mapped table and a cache of its own.
type ours struct {
	t   *rocksdb.Table
	c   *cache.Cache
	it  *rocksdb.TableIterator // the seeks'
	val []byte                 // the Gets' buffer, reused (GetAppend)
}

func openOurs(path string, cacheBytes int64) (*ours, error) {
	c, err := cache.New(cacheBytes)
	if err != nil {
		return nil, err
	}
	t, err := rocksdb.OpenTable(path, &rocksdb.TableOptions{Cache: c})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &ours{t: t, c: c}, nil
}

func (o *ours) scan() (int, error) {
	it := o.t.NewIter(nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		sink += len(it.Key()) + len(it.Value())
	}
	if err := it.Err(); err != nil {
		it.Close()
		return n, err
	}
	return n, it.Close()
}

func (o *ours) seek(k []byte) ([]byte, []byte, error) {
	if o.it == nil {
		o.it = o.t.NewIter(nil)
	}
	if !o.it.SeekGE(k) {
		return nil, nil, o.it.Err()
	}
	return o.it.Key(), o.it.Value(), nil
}

func (o *ours) get(k []byte) ([]byte, bool, error) {
	e, err := o.t.GetAppend(o.val[:0], k, rocksdb.MaxSequence)
	if errors.Is(err, reader.ErrNotFound) {
		return nil, false, nil
	}
	if err == nil && e.Kind != rocksdb.KindValue {
		return nil, false, fmt.Errorf("kind %v", e.Kind)
	}
	o.val = e.Value
	return e.Value, err == nil, err
}

func (o *ours) close() error {
	var err error
	if o.it != nil {
		err = o.it.Close()
	}
	if err2 := o.t.Close(); err == nil {
		err = err2
	}
	if err2 := o.c.Close(); err == nil {
		err = err2
	}
	return err
}

// pebble is Pebble v2's sstable reader, opened as a DB opens its tables.
type pebble struct {
	r      *sstable2.Reader
	cache  *implsetup.Pebble2Cache
	closer io.Closer // the provider
	prefix bool      // Gets with SeekPrefixGE, else SeekGE
	getIt  sstable2.Iterator
	seekIt sstable2.Iterator
}

func openPebble(dir string, cacheBytes int64, get string) (*pebble, error) {
	prov, err := implsetup.OpenPebble2Provider(dir)
	if err != nil {
		return nil, err
	}
	c := implsetup.NewPebble2Cache(cacheBytes)
	r, err := implsetup.OpenPebble2(prov, c)
	if err != nil {
		c.Close()
		prov.Close()
		return nil, err
	}
	return &pebble{r: r, cache: c, closer: prov, prefix: get == "prefix"}, nil
}

func (p *pebble) newIter() (sstable2.Iterator, error) {
	return p.r.NewIter(sstable2.NoTransforms, nil, nil, sstable2.AssertNoBlobHandles)
}

func (p *pebble) scan() (int, error) {
	it, err := p.newIter()
	if err != nil {
		return 0, err
	}
	n := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		v, _, err := kv.Value(nil)
		if err != nil {
			it.Close()
			return n, err
		}
		n++
		sink += len(kv.K.UserKey) + len(v)
	}
	if err := it.Error(); err != nil {
		it.Close()
		return n, err
	}
	return n, it.Close()
}

func (p *pebble) seek(k []byte) ([]byte, []byte, error) {
	if p.seekIt == nil {
		it, err := p.newIter()
		if err != nil {
			return nil, nil, err
		}
		p.seekIt = it
	}
	kv := p.seekIt.SeekGE(k, 0 /* base.SeekGEFlagsNone */)
	if kv == nil {
		return nil, nil, p.seekIt.Error()
	}
	v, _, err := kv.Value(nil)
	return kv.K.UserKey, v, err
}

func (p *pebble) get(k []byte) ([]byte, bool, error) {
	if p.prefix {
		return implsetup.Pebble2Get(p.r, &p.getIt, k)
	}
	kb, v, err := p.seek(k)
	if err != nil || kb == nil || !bytes.Equal(kb, k) {
		return nil, false, err
	}
	return v, true, nil
}

func (p *pebble) close() error {
	var err error
	if p.seekIt != nil {
		err = p.seekIt.Close()
	}
	if cerr := implsetup.ClosePebble2(p.r, p.getIt); err == nil {
		err = cerr
	}
	p.cache.Close()
	if cerr := p.closer.Close(); err == nil {
		err = cerr
	}
	return err
}

// tryPebble opens the table with Pebble v2 and scans it, and returns
// what happened, a panic included.
func tryPebble(cfg config, p tablePaths) (what string) {
	defer func() {
		if r := recover(); r != nil {
			what = fmt.Sprintf("panic: %v", r)
		}
	}()
	e, err := openPebble(p.pebble, cfg.cacheBytes, cfg.pebbleGet)
	if err != nil {
		return "sstable.NewReader: " + err.Error()
	}
	defer e.close()
	n, err := e.scan()
	if err != nil {
		return fmt.Sprintf("opened; the scan failed after %d entries: %v", n, err)
	}
	return fmt.Sprintf("opened and scanned %d entries", n)
}
