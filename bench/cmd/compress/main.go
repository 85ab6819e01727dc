// Command compress measures block compression on real data, ours beside
// Pebble v2: for each data set, block size and codec it builds a table
// and reports its size, the build speed, the time of a Get hit with a
// block cache that holds the whole table and with one a tenth of the
// table's size, and the time of a full scan per entry.
//
// The data sets are data no one here wrote:
//
//   - gosrc: every regular file of Go's source tree ($(go env GOROOT)/src)
//     as an entry, key the slash-separated path, value the contents, as
//     `sst build` makes it in the quick start;
//   - records: Debian package records, the output of `apt-cache
//     dumpavail` (one record per package and version, about 800 bytes
//     each), key "name version" (the first record of a key is kept), value
//     the record. Pass the file with -records; the command never runs apt.
//
// Ours is built with builder.Options{BlockSize, Bloom(10), Compression,
// DictionarySize} (format version 4, the default) and read with
// reader.Open and a cache.Cache of the stated capacity; Pebble v2.1.7 as
// package implsetup sets it up (TableFormatPebblev7, one index block,
// 10 bits per key Bloom filter, a pebble.Cache of the stated capacity
// through a handle), with WriterOptions.Compression set to its snappy,
// MinLZ (MinLZFastest) or zstd (level 3) profile and BlockSize to ours.
//
// Every configuration runs in each of -count rounds, in the same order,
// so that configurations alternate over the run; the table reports the
// median of the rounds. Usage:
//
//	apt-cache dumpavail > /tmp/dumpavail.txt
//	go run ./cmd/compress -records /tmp/dumpavail.txt -count 5
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	sstable2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/bench/internal/scratchdir"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

type dataset struct {
	name   string
	keys   [][]byte
	values [][]byte
	raw    int64 // key and value bytes
}

// config is one table to build: ours with a codec and dictionary size,
// or Pebble v2 with a compression profile.
type config struct {
	impl   string // "ours" or "pebble2"
	codec  string // none, snappy, minlz, zstd, zstd+16K, zstd+64K
	c      format.Compression
	dict   int
	pebble *block.CompressionProfile
}

func configs() []config {
	return []config{
		{impl: "ours", codec: "none", c: format.NoCompression},
		{impl: "ours", codec: "snappy", c: format.SnappyCompression},
		{impl: "ours", codec: "minlz", c: format.MinLZCompression},
		{impl: "ours", codec: "zstd", c: format.ZstdCompression},
		{impl: "ours", codec: "zstd+16K", c: format.ZstdCompression, dict: 16 << 10},
		{impl: "ours", codec: "zstd+64K", c: format.ZstdCompression, dict: 64 << 10},
		{impl: "pebble2", codec: "snappy", pebble: sstable2.SnappyCompression},
		{impl: "pebble2", codec: "minlz", pebble: sstable2.MinLZCompression},
		{impl: "pebble2", codec: "zstd", pebble: sstable2.ZstdCompression},
	}
}

// result is one round's measurements of one configuration.
type result struct {
	fileSize  int64
	buildMBps float64
	getFit    float64 // ns per Get hit, cache holding the table
	getTenth  float64 // ns per Get hit, cache a tenth of the table
	scan      float64 // ns per entry of a full scan
}

func main() {
	records := flag.String("records", "", "output of apt-cache dumpavail (the records data set; skipped when empty)")
	gosrc := flag.Bool("gosrc", true, "measure Go's source tree")
	count := flag.Int("count", 5, "rounds")
	gets := flag.Int("gets", 100000, "Get hits per measurement")
	blocks := flag.String("blocks", "4096,16384", "block sizes, bytes")
	only := flag.String("only", "", "comma-separated codecs to run (default all)")
	dir := flag.String("dir", "", "directory for the tables (default a temporary one)")
	flag.Parse()

	var sets []*dataset
	if *gosrc {
		d, err := loadGoSrc()
		check(err)
		sets = append(sets, d)
	}
	if *records != "" {
		d, err := loadRecords(*records)
		check(err)
		sets = append(sets, d)
	}
	var sizes []int
	for _, s := range strings.Split(*blocks, ",") {
		var n int
		_, err := fmt.Sscan(s, &n)
		check(err)
		sizes = append(sizes, n)
	}
	cfgs := configs()
	if *only != "" {
		keep := strings.Split(*only, ",")
		cfgs = slices.DeleteFunc(cfgs, func(c config) bool { return !slices.Contains(keep, c.codec) })
	}
	work := *dir
	if work == "" {
		var err error
		var remove func()
		work, remove, err = scratchdir.Make("", "compress")
		check(err)
		defer remove() // and on SIGINT, SIGTERM or check's exit
	}

	type key struct {
		set   string
		block int
		cfg   int
	}
	results := map[key][]result{}
	for round := 0; round < *count; round++ {
		for _, d := range sets {
			for _, bs := range sizes {
				for i, c := range cfgs {
					r, err := measure(work, d, bs, c, *gets, uint64(round))
					check(err)
					results[key{d.name, bs, i}] = append(results[key{d.name, bs, i}], r)
					fmt.Fprintf(os.Stderr, "round %d %s %d %s %s: %d bytes, build %.1f MB/s, get %.0f / %.0f ns, scan %.1f ns/entry\n",
						round+1, d.name, bs, c.impl, c.codec, r.fileSize, r.buildMBps, r.getFit, r.getTenth, r.scan)
				}
			}
		}
	}

	fmt.Printf("| data | block | impl | codec | file MB | ratio | build MB/s | Get ns (fits) | Get ns (cache 1/10) | scan ns/entry |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range sets {
		for _, bs := range sizes {
			for i, c := range cfgs {
				rs := results[key{d.name, bs, i}]
				med := func(f func(result) float64) float64 {
					v := make([]float64, len(rs))
					for j, r := range rs {
						v[j] = f(r)
					}
					sort.Float64s(v)
					return v[len(v)/2]
				}
				size := med(func(r result) float64 { return float64(r.fileSize) })
				fmt.Printf("| %s | %d KiB | %s | %s | %.2f | %.2f | %.0f | %.0f | %.0f | %.1f |\n",
					d.name, bs>>10, c.impl, c.codec, size/1e6, float64(d.raw)/size,
					med(func(r result) float64 { return r.buildMBps }),
					med(func(r result) float64 { return r.getFit }),
					med(func(r result) float64 { return r.getTenth }),
					med(func(r result) float64 { return r.scan }))
			}
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compress:", err)
		scratchdir.Exit(1)
	}
}

// measure builds d with c at block size bs in dir and measures it.
func measure(dir string, d *dataset, bs int, c config, gets int, seed uint64) (result, error) {
	var r result
	sub := filepath.Join(dir, fmt.Sprintf("%s-%d-%s-%s", d.name, bs, c.impl, strings.ReplaceAll(c.codec, "+", "")))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return r, err
	}
	path := filepath.Join(sub, fmt.Sprintf("%06d.sst", implsetup.Pebble2FileNum))
	start := time.Now()
	var err error
	if c.impl == "ours" {
		err = buildOurs(path, d, bs, c)
	} else {
		err = buildPebble2(path, d, bs, c)
	}
	if err != nil {
		return r, err
	}
	r.buildMBps = float64(d.raw) / 1e6 / time.Since(start).Seconds()
	st, err := os.Stat(path)
	if err != nil {
		return r, err
	}
	r.fileSize = st.Size()

	rng := rand.New(rand.NewPCG(seed, 31))
	order := make([]int, gets)
	for i := range order {
		order[i] = rng.IntN(len(d.keys))
	}
	fit := 2*d.raw + 64<<20
	tenth := max(r.fileSize/10, 1<<20)
	for _, capacity := range []int64{fit, tenth} {
		t, err := openTable(path, c.impl, capacity)
		if err != nil {
			return r, err
		}
		if capacity == fit {
			// Warm the cache: every key once.
			for i := range d.keys {
				if _, ok, err := t.get(d.keys[i]); err != nil || !ok {
					t.close()
					return r, fmt.Errorf("%s: warm-up Get(%q): %v %v", path, d.keys[i], ok, err)
				}
			}
		}
		start := time.Now()
		for _, i := range order {
			v, ok, err := t.get(d.keys[i])
			if err != nil || !ok || len(v) != len(d.values[i]) {
				t.close()
				return r, fmt.Errorf("%s: Get(%q): %d bytes, %v, %v", path, d.keys[i], len(v), ok, err)
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(gets)
		if capacity == fit {
			r.getFit = ns
			start := time.Now()
			n, err := t.scan()
			if err != nil || n != len(d.keys) {
				t.close()
				return r, fmt.Errorf("%s: scan: %d entries of %d, %v", path, n, len(d.keys), err)
			}
			r.scan = float64(time.Since(start).Nanoseconds()) / float64(n)
		} else {
			r.getTenth = ns
		}
		if err := t.close(); err != nil {
			return r, err
		}
	}
	return r, os.RemoveAll(sub)
}

func buildOurs(path string, d *dataset, bs int, c config) error {
	w, err := implsetup.CreateOurs(path, &builder.Options{
		BlockSize:      bs,
		Filter:         filterblock.Bloom(implsetup.BitsPerKey),
		Compression:    c.c,
		DictionarySize: c.dict,
	})
	if err != nil {
		return err
	}
	for i := range d.keys {
		if err := w.Add(d.keys[i], d.values[i]); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

func buildPebble2(path string, d *dataset, bs int, c config) error {
	o := implsetup.Pebble2WriterOptions(implsetup.Snappy, math.MaxInt32)
	o.BlockSize = bs
	o.Compression = c.pebble
	w, err := implsetup.CreatePebble2(path, o)
	if err != nil {
		return err
	}
	for i := range d.keys {
		if err := w.Set(d.keys[i], d.values[i]); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// table is an open table of either implementation.
type table struct {
	get   func(key []byte) ([]byte, bool, error)
	scan  func() (int, error)
	close func() error
}

func openTable(path, impl string, capacity int64) (*table, error) {
	if impl == "ours" {
		c, err := cache.New(capacity)
		if err != nil {
			return nil, err
		}
		r, err := reader.Open(path, &reader.Options{Cache: c})
		if err != nil {
			c.Close()
			return nil, err
		}
		buf := make([]byte, 0, 1<<20)
		return &table{
			get: func(key []byte) ([]byte, bool, error) { return implsetup.OursGetAppend(r, &buf, key) },
			scan: func() (int, error) {
				return implsetup.OursScan(r, nil)
			},
			close: func() error {
				err := r.Close()
				c.Close()
				return err
			},
		}, nil
	}
	prov, err := implsetup.OpenPebble2Provider(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	pc := implsetup.NewPebble2Cache(capacity)
	r, err := implsetup.OpenPebble2(prov, pc)
	if err != nil {
		pc.Close()
		prov.Close()
		return nil, err
	}
	var it sstable2.Iterator
	return &table{
		get:  func(key []byte) ([]byte, bool, error) { return implsetup.Pebble2Get(r, &it, key) },
		scan: func() (int, error) { return implsetup.Pebble2Scan(r, nil) },
		close: func() error {
			err := implsetup.ClosePebble2(r, it)
			pc.Close()
			if cerr := prov.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}, nil
}

// loadGoSrc reads every regular file of $(go env GOROOT)/src.
func loadGoSrc() (*dataset, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var paths []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	d := &dataset{name: "gosrc"}
	for _, p := range paths {
		v, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		d.add([]byte(p), v)
	}
	return d, nil
}

// loadRecords reads apt-cache dumpavail output: records separated by a
// blank line, keyed by their Package and Version fields.
func loadRecords(path string) (*dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type rec struct{ k, v []byte }
	var recs []rec
	seen := map[string]bool{}
	for _, r := range bytes.Split(data, []byte("\n\n")) {
		r = bytes.TrimSpace(r)
		if len(r) == 0 {
			continue
		}
		var name, version []byte
		for _, line := range bytes.Split(r, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("Package: ")); ok {
				name = v
			} else if v, ok := bytes.CutPrefix(line, []byte("Version: ")); ok {
				version = v
			}
		}
		if name == nil {
			return nil, fmt.Errorf("%s: a record without a Package field", path)
		}
		k := string(name) + " " + string(version)
		if seen[k] {
			continue
		}
		seen[k] = true
		recs = append(recs, rec{[]byte(k), append(r, '\n')})
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	slices.SortFunc(recs, func(a, b rec) int { return bytes.Compare(a.k, b.k) })
	d := &dataset{name: "records"}
	for _, r := range recs {
		d.add(r.k, r.v)
	}
	return d, nil
}

func (d *dataset) add(k, v []byte) {
	d.keys = append(d.keys, k)
	d.values = append(d.values, v)
	d.raw += int64(len(k) + len(v))
}
