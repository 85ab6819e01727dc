package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	pebble "github.com/cockroachdb/pebble/v2"
	"github.com/sstkit/sstable/bench/internal/scratchdir"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/merge"
)

// engine is one library's view of the stack.
type engine interface {
	name() string
	// scan walks the whole view (goleveldb: every table's entries) in
	// key order, or backwards, passing each entry to visit unless it is
	// nil, and returns how many it saw.
	scan(reverse bool, visit func(k, v []byte)) (int, error)
	// seekNext seeks to the first key >= key on a reused iterator, then
	// moves nexts times, and returns the entries it was on.
	seekNext(key []byte, nexts int) (int, error)
	// close closes the engine's iterators, then its tables (or DB).
	close() error
}

// getter is an engine with point lookups; the value is valid until the
// next call.
type getter interface {
	get(key []byte) ([]byte, bool, error)
}

// results is what a run measured.
type results struct {
	cfg      config
	command  string
	machine  string
	nlive    int              // live keys of the view
	entries  int              // entries of all the tables
	sizes    map[string]int64 // the tables' bytes, by library: ours, pebble, goleveldb
	shape    string           // the Pebble DB's LSM
	compact  map[string]string
	samples  map[string]map[string][]float64 // figure id, engine: one value per round
	elapsed  float64
	warnings []string
}

func (r *results) add(fig, impl string, v float64) {
	m := r.samples[fig]
	if m == nil {
		m = map[string][]float64{}
		r.samples[fig] = m
	}
	m[impl] = append(m[impl], v)
}

// run builds the tables, opens every engine, checks their views, and
// measures. startProfile and stopProfile bracket the measurement rounds.
func run(cfg config, progress io.Writer, startProfile, stopProfile func() error) (*results, error) {
	t0 := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(progress, "[%6.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	dir, remove, err := scratchdir.Make(cfg.dir, "sstmerge-")
	if err != nil {
		return nil, err
	}
	defer remove() // and on SIGINT or SIGTERM

	logf("generating %d tables of %d entries over %d keys, %d range deletions per table over %.1f%% of the keys",
		cfg.tables, cfg.entries, cfg.keySpace, cfg.rangeDels, 100*cfg.delFrac)
	w := newWorkload(cfg.params)
	res := &results{cfg: cfg, machine: machine(), nlive: w.nlive, entries: w.entries(),
		sizes: map[string]int64{}, compact: map[string]string{}, samples: map[string]map[string][]float64{}}
	logf("live view: %d keys of %d entries (%.1f MB raw); %d keys only in the oldest table",
		w.nlive, w.entries(), float64(w.rawBytes())/1e6, w.nold)
	if w.nold == 0 {
		return nil, fmt.Errorf("no key is only in the oldest table: grow -keyspace")
	}
	has := func(name string) bool { return slices.Contains(cfg.impls, name) }
	measures := func(name string) bool { return slices.Contains(cfg.measures, name) }

	// Build (untimed).
	builds := []struct {
		name  string
		build func(string, *workload) error
		path  func(string, int) string
	}{{"ours", buildOurs, oursPath}, {"pebble", buildPebble, pebbleSrc}, {"goleveldb", buildGoleveldb, goleveldbPath}}
	for _, b := range builds {
		if b.name == "pebble" && !has("pebble") && !has("external") || b.name != "pebble" && !has(b.name) {
			continue
		}
		if err := b.build(dir, w); err != nil {
			return nil, fmt.Errorf("%s: build: %w", b.name, err)
		}
		for t := range cfg.tables {
			st, err := os.Stat(b.path(dir, t))
			if err != nil {
				return nil, err
			}
			res.sizes[b.name] += st.Size()
		}
		logf("%s: %d tables, %.1f MB", b.name, cfg.tables, float64(res.sizes[b.name])/1e6)
	}

	// Open. Each engine's close releases what it opened.
	var engines []engine
	defer func() {
		for _, e := range engines {
			e.close()
		}
	}()
	var oursE *ours
	var pebbleE *pebbleEngine
	for _, name := range cfg.impls {
		switch name {
		case "ours":
			s, err := openOurs(dir, cfg.tables, nil, cfg.cacheBytes)
			if err != nil {
				return nil, fmt.Errorf("ours: open: %w", err)
			}
			oursE = &ours{s: s}
			engines = append(engines, oursE)
		case "pebble":
			p, err := openPebbleDB(dir, filepath.Join(dir, "pebble-db"), cfg.tables, nil, cfg.cacheBytes, cfg.target)
			if err != nil {
				return nil, fmt.Errorf("pebble: open: %w", err)
			}
			res.shape = p.shape()
			logf("Pebble DB: %s", res.shape)
			pebbleE = &pebbleEngine{p: p}
			engines = append(engines, pebbleE)
		case "external":
			e, err := openExternal(dir, cfg.tables)
			if err != nil {
				return nil, fmt.Errorf("NewExternalIter: %w", err)
			}
			engines = append(engines, e)
		case "goleveldb":
			e, err := openGoleveldb(dir, cfg.tables, cfg.cacheBytes)
			if err != nil {
				return nil, fmt.Errorf("goleveldb: open: %w", err)
			}
			engines = append(engines, e)
		}
	}

	// Check every view against the model (untimed; it also fills the
	// block caches).
	for _, e := range engines {
		if err := verifyScans(e, w); err != nil {
			return nil, fmt.Errorf("%s: %w", e.name(), err)
		}
		if g, ok := e.(getter); ok {
			if err := verifyGets(g, w); err != nil {
				return nil, fmt.Errorf("%s: %w", e.name(), err)
			}
		}
		logf("%s: view checked", e.name())
	}

	// The compactions' block caches: a new one per compaction (nil here),
	// or with -compact-cache kept one per library kept from round to
	// round, as an engine keeps its cache (each round's readers and DB
	// are new, so none of their blocks is in it).
	var oursCC *cache.Cache
	var pebbleCC *pebble.Cache
	if measures("compact") {
		if cfg.keptCompactCache && has("ours") {
			if oursCC, err = cache.New(cfg.cacheBytes); err != nil {
				return nil, err
			}
			defer oursCC.Close()
		}
		if cfg.keptCompactCache && has("pebble") {
			pebbleCC = pebble.NewCache(cfg.cacheBytes)
			defer pebbleCC.Unref()
		}
		// One untimed compaction of each first, so that the first touch
		// of the process's memory and of the code paths lands in no
		// round.
		if err := warmCompactions(cfg, dir, oursCC, pebbleCC, has, logf); err != nil {
			return nil, err
		}
	}

	if err := startProfile(); err != nil {
		return nil, err
	}
	want := func(e engine) int {
		if e.name() == "goleveldb" {
			return w.entries()
		}
		return w.nlive
	}
	for round := range cfg.rounds {
		order := slices.Clone(engines)
		rotate(order, round)
		// Scans.
		for _, reverse := range []bool{false, true} {
			fig := "fwd"
			if reverse {
				fig = "rev"
			}
			if !measures(fig) {
				continue
			}
			for _, e := range order {
				runtime.GC()
				m0 := mallocs()
				var n int
				sec, err := timed(func() (err error) { n, err = e.scan(reverse, nil); return err })
				allocs := mallocs() - m0
				if err != nil {
					return nil, fmt.Errorf("%s: %s scan: %w", e.name(), fig, err)
				}
				if n != want(e) {
					return nil, fmt.Errorf("%s: %s scan saw %d entries, want %d", e.name(), fig, n, want(e))
				}
				res.add(fig+"-rate", e.name(), float64(n)/sec/1e6)
				res.add(fig+"-ns", e.name(), sec*1e9/float64(n))
				res.add(fig+"-allocs", e.name(), float64(allocs)/float64(n))
				logf("round %d/%d %-9s %s scan %7.2f M entries/s  %6.1f ns/entry", round+1, cfg.rounds, e.name(), fig, float64(n)/sec/1e6, sec*1e9/float64(n))
			}
		}
		// SeekGE and Next.
		visited := map[string]int{}
		for _, e := range order {
			if !measures("seek") {
				break
			}
			runtime.GC()
			m0 := mallocs()
			n := 0
			sec, err := timed(func() error {
				for i := range cfg.seeks {
					c, err := e.seekNext(keyAt(w.seeks, i), cfg.nexts)
					if err != nil {
						return err
					}
					n += c
				}
				return nil
			})
			allocs := mallocs() - m0
			if err != nil {
				return nil, fmt.Errorf("%s: seek: %w", e.name(), err)
			}
			visited[e.name()] = n
			res.add("seek", e.name(), sec*1e9/float64(cfg.seeks))
			res.add("seek-allocs", e.name(), float64(allocs)/float64(cfg.seeks))
			logf("round %d/%d %-9s SeekGE+%d Next %7.0f ns/op", round+1, cfg.rounds, e.name(), cfg.nexts, sec*1e9/float64(cfg.seeks))
		}
		if err := sameCounts(visited, "entries visited by the seeks"); err != nil {
			return nil, err
		}
		// Gets.
		for _, kind := range []string{"get-old", "get-absent"} {
			if !measures("get") {
				break
			}
			keys, wantFound := w.oldOnly, cfg.lookups
			if kind == "get-absent" {
				keys, wantFound = w.absent, 0
			}
			for _, e := range order {
				g, ok := e.(getter)
				if !ok {
					continue
				}
				runtime.GC()
				m0 := mallocs()
				found := 0
				sec, err := timed(func() error {
					for i := range cfg.lookups {
						v, ok, err := g.get(keyAt(keys, i))
						if err != nil {
							return err
						}
						if ok {
							found++
							sink += len(v)
						}
					}
					return nil
				})
				allocs := mallocs() - m0
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", e.name(), kind, err)
				}
				if found != wantFound {
					return nil, fmt.Errorf("%s: %s found %d keys of %d, want %d", e.name(), kind, found, cfg.lookups, wantFound)
				}
				res.add(kind, e.name(), sec*1e9/float64(cfg.lookups))
				res.add(kind+"-allocs", e.name(), float64(allocs)/float64(cfg.lookups))
				logf("round %d/%d %-9s %s %7.0f ns/op", round+1, cfg.rounds, e.name(), kind, sec*1e9/float64(cfg.lookups))
			}
		}
		// Compactions, on fresh readers and a fresh DB each round.
		if measures("compact") {
			var cs []string
			for _, name := range []string{"ours", "pebble"} {
				if has(name) {
					cs = append(cs, name)
				}
			}
			rotate(cs, round)
			for _, name := range cs {
				runtime.GC()
				var sec float64
				var entries int64
				var tables int
				var err error
				switch name {
				case "ours":
					out := filepath.Join(dir, fmt.Sprintf("ours-compact-%d", round))
					sec, entries, tables, err = compactOurs(dir, out, cfg.tables, oursCC, cfg.cacheBytes, cfg.target)
					os.RemoveAll(out)
					res.compact[name] = fmt.Sprintf("%d output table(s)", tables)
				case "pebble":
					var before, after string
					sec, entries, tables, before, after, err = compactPebble(dir, filepath.Join(dir, fmt.Sprintf("pebble-compact-%d", round)),
						cfg.tables, pebbleCC, cfg.cacheBytes, cfg.target, round == 0)
					if round > 0 {
						entries = int64(w.nlive) // counted in round 1 only (a scan)
					}
					res.compact[name] = fmt.Sprintf("%s before, %s after", before, after)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: compaction: %w", name, err)
				}
				if entries != int64(w.nlive) {
					return nil, fmt.Errorf("%s: compaction wrote %d entries, want the %d live keys", name, entries, w.nlive)
				}
				mbps := float64(res.sizes[name]) / 1e6 / sec
				res.add("compact", name, mbps)
				res.add("compact-sec", name, sec)
				res.add("compact-rate", name, float64(w.entries())/sec/1e6)
				logf("round %d/%d %-9s compaction %6.1f MB/s of input tables (%.2f s, %d output tables)", round+1, cfg.rounds, name, mbps, sec, tables)
			}
		}
	}
	if err := stopProfile(); err != nil {
		return nil, err
	}

	// Allocations of ours once warm: Next and SeekGE on an iterator that
	// has reached every table.
	if oursE != nil {
		next, seek := oursAllocs(oursE.s.levels, w)
		res.add("allocs-next", "ours", next)
		res.add("allocs-seekge", "ours", seek)
		logf("ours: %.3f allocs/Next, %.3f allocs/SeekGE once warm", next, seek)
	}
	res.elapsed = time.Since(t0).Seconds()
	logf("done in %.1fs", res.elapsed)
	return res, nil
}

// rotate moves the first k%len(s) elements of s to its end.
func rotate[T any](s []T, k int) {
	if len(s) == 0 {
		return
	}
	k %= len(s)
	tmp := slices.Clone(s[:k])
	copy(s, s[k:])
	copy(s[len(s)-k:], tmp)
}

func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// sameCounts checks that ours, the Pebble DB and NewExternalIter saw the
// same number of entries (goleveldb's merged iterator sees duplicates).
func sameCounts(counts map[string]int, what string) error {
	ref, refName := -1, ""
	for _, name := range []string{"ours", "pebble", "external"} {
		c, ok := counts[name]
		if !ok {
			continue
		}
		if ref < 0 {
			ref, refName = c, name
		} else if c != ref {
			return fmt.Errorf("%s: %s %d, %s %d", what, refName, ref, name, c)
		}
	}
	return nil
}

// oursAllocs returns the allocations per Next and per SeekGE of an
// iterator over levels once warm (testing.AllocsPerRun).
func oursAllocs(levels []merge.Level, w *workload) (next, seek float64) {
	it := merge.NewIterator(levels, oursOpts)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() { // reach every table
	}
	it.First()
	next = testing.AllocsPerRun(20_000, func() {
		if !it.Next() {
			it.First()
		}
	})
	n := len(w.seeks) / keyLen
	i := 0
	seek = testing.AllocsPerRun(min(n, 5_000), func() {
		it.SeekGE(keyAt(w.seeks, i%n))
		i++
	})
	return next, seek
}

// verifyScans checks e's view against the model: forward and backward,
// exactly the live keys with their newest values (goleveldb: every
// table's entries, in key order).
func verifyScans(e engine, w *workload) error {
	if e.name() == "goleveldb" {
		for _, reverse := range []bool{false, true} {
			var prev []byte
			var bad error
			n, err := e.scan(reverse, func(k, v []byte) {
				if c := bytes.Compare(prev, k); bad == nil && prev != nil && (c > 0 && !reverse || c < 0 && reverse) {
					bad = fmt.Errorf("merged scan out of order: %x after %x", k, prev)
				}
				prev = append(prev[:0], k...)
			})
			if err != nil {
				return err
			}
			if bad != nil {
				return bad
			}
			if n != w.entries() {
				return fmt.Errorf("merged scan (reverse %v) saw %d entries, want %d", reverse, n, w.entries())
			}
		}
		return nil
	}
	buf := make([]byte, 0, valueLen)
	for _, reverse := range []bool{false, true} {
		at, step := -1, 1
		if reverse {
			at, step = w.nkeys, -1
		}
		next := func() int { // the next live key index in scan order; -1 when none
			for at += step; at >= 0 && at < w.nkeys; at += step {
				if w.live[at] {
					return at
				}
			}
			return -1
		}
		var bad error
		n, err := e.scan(reverse, func(k, v []byte) {
			if bad != nil {
				return
			}
			j := next()
			switch {
			case j < 0:
				bad = fmt.Errorf("scan (reverse %v): entry %x beyond the live keys", reverse, k)
			case !bytes.Equal(k, w.key(j)):
				bad = fmt.Errorf("scan (reverse %v): key %x, want %x", reverse, k, w.key(j))
			case !bytes.Equal(v, value(buf, int(w.newest[j]), j)):
				bad = fmt.Errorf("scan (reverse %v): key %x has a value not of table %d", reverse, k, w.newest[j]+1)
			}
		})
		if err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
		if n != w.nlive {
			return fmt.Errorf("scan (reverse %v) saw %d keys, want the %d live keys", reverse, n, w.nlive)
		}
	}
	return nil
}

// verifyGets checks Gets of a sample of live keys, of the keys only in
// the oldest table and of absent keys.
func verifyGets(g getter, w *workload) error {
	buf := make([]byte, 0, valueLen)
	check := func(j int) error {
		v, ok, err := g.get(w.key(j))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("Get(%x): not found", w.key(j))
		}
		if !bytes.Equal(v, value(buf, int(w.newest[j]), j)) {
			return fmt.Errorf("Get(%x): a value not of table %d", w.key(j), w.newest[j]+1)
		}
		return nil
	}
	for _, j := range w.sample {
		if err := check(int(j)); err != nil {
			return err
		}
	}
	for _, j := range w.oldIdx[:min(len(w.oldIdx), 1000)] {
		if err := check(int(j)); err != nil {
			return err
		}
	}
	for i := range min(len(w.absent)/keyLen, 1000) {
		if _, ok, err := g.get(keyAt(w.absent, i)); err != nil || ok {
			return fmt.Errorf("Get(%x) of an absent key: found %v, err %v", keyAt(w.absent, i), ok, err)
		}
	}
	// Keys under a newer table's range deletion, held by an older one.
	deleted := 0
	for j := 0; j < w.nkeys && deleted < 1000; j++ {
		if w.newest[j] >= 0 && !w.live[j] {
			deleted++
			if _, ok, err := g.get(w.key(j)); err != nil || ok {
				return fmt.Errorf("Get(%x) of a range-deleted key: found %v, err %v", w.key(j), ok, err)
			}
		}
	}
	return nil
}

// warmCompactions runs one untimed compaction of each library, through
// the caches the timed ones use (nil: a new one).
func warmCompactions(cfg config, dir string, oursCC *cache.Cache, pebbleCC *pebble.Cache, has func(string) bool, logf func(string, ...any)) error {
	if has("ours") {
		out := filepath.Join(dir, "ours-warm")
		sec, _, _, err := compactOurs(dir, out, cfg.tables, oursCC, cfg.cacheBytes, cfg.target)
		os.RemoveAll(out)
		if err != nil {
			return fmt.Errorf("ours: warm-up compaction: %w", err)
		}
		logf("ours: warm-up compaction, %.2f s (untimed)", sec)
	}
	if has("pebble") {
		sec, _, _, _, _, err := compactPebble(dir, filepath.Join(dir, "pebble-warm"), cfg.tables, pebbleCC, cfg.cacheBytes, cfg.target, false)
		if err != nil {
			return fmt.Errorf("pebble: warm-up compaction: %w", err)
		}
		logf("pebble: warm-up compaction, %.2f s (untimed)", sec)
	}
	return nil
}
