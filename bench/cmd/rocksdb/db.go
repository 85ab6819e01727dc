package main

// The database mode (-tables db, issue 48): a whole RocksDB database read
// by rocksdb.OpenDB beside RocksDB's own DB::OpenForReadOnly.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// dbPath is the database of keys live keys in dir; dbCopyPath the copy
// RocksDB opens in a round (its read-only open may write a LOG file).
func dbPath(dir string, keys int) string     { return filepath.Join(dir, fmt.Sprintf("db-%d", keys)) }
func dbCopyPath(dir string, keys int) string { return dbPath(dir, keys) + ".copy" }

// oldValue is the value a key held before it was overwritten: another
// key's, which valueOK tells apart from its own.
func oldValue(dst []byte, i int) []byte { return value(dst, i+1) }

// dbOp is one write of the database's main phase, ordered by t.
type dbOp struct {
	t    float64
	i    int32 // key number
	kind byte  // 'P' put value(i), 'O' put oldValue(i), 'D' delete
}

// dbWriter encodes ops in the C++ program's dbwrite format.
type dbWriter struct {
	w      *bufio.Writer
	kb, vb []byte
	n      int // puts and deletes
}

func (d *dbWriter) put(i int, old bool) {
	d.kb = key(d.kb, i)
	if old {
		d.vb = oldValue(d.vb, i)
	} else {
		d.vb = value(d.vb, i)
	}
	d.w.WriteByte('P')
	d.w.Write(d.kb)
	d.w.Write(d.vb)
	d.n++
}

func (d *dbWriter) del(i int) {
	d.kb = key(d.kb, i)
	d.w.WriteByte('D')
	d.w.Write(d.kb)
	d.n++
}

// ctl writes a control op: 'B' write the batch, 'F' flush and settle,
// 'E' close.
func (d *dbWriter) ctl(c byte) { d.w.WriteByte(c) }

// writeDBOps writes the database's workload; the live view it leaves is
// key 2j with value(2j) for every j < keys, and nothing else.
//
//   - Main phase, batches of 1000 in a random order of events: every
//     live key's put; for one key in ten, an earlier put of its old value;
//     for one odd (absent) number in twenty, a put and a later delete.
//     Then a flush, and the compactions settle: the tables spread over
//     the levels.
//   - Two more flushes of keys/100 writes each, batches of 100, which stay
//     in level 0: old values of 15% of them (random live keys), final
//     values of 80%, puts of 5% odd numbers.
//   - keys/200 writes left in the write-ahead log: the final value of
//     every key given an old value in level 0, deletes of every odd
//     number put there, and final values of random live keys.
func writeDBOps(w io.Writer, keys int) int {
	d := &dbWriter{w: bufio.NewWriterSize(w, 1<<20)}
	rng := rand.New(rand.NewPCG(11, 12))
	ops := make([]dbOp, 0, keys+keys/5)
	for j := range keys {
		t := rng.Float64()
		ops = append(ops, dbOp{t: t, i: int32(2 * j), kind: 'P'})
		if rng.IntN(10) == 0 {
			ops = append(ops, dbOp{t: t * rng.Float64(), i: int32(2 * j), kind: 'O'})
		}
		if rng.IntN(20) == 0 {
			t0 := rng.Float64()
			ops = append(ops, dbOp{t: t0, i: int32(2*j + 1), kind: 'P'}, dbOp{t: t0 + (1-t0)*rng.Float64(), i: int32(2*j + 1), kind: 'D'})
		}
	}
	slices.SortFunc(ops, func(a, b dbOp) int {
		if a.t < b.t {
			return -1
		}
		if a.t > b.t {
			return 1
		}
		return 0
	})
	for n, op := range ops {
		switch op.kind {
		case 'P', 'O':
			d.put(int(op.i), op.kind == 'O')
		case 'D':
			d.del(int(op.i))
		}
		if n%1000 == 999 {
			d.ctl('B')
		}
	}
	d.ctl('F')

	stale := map[int]bool{} // keys whose newest version in level 0 is old
	var odd []int
	flushOps := max(keys/100, 10)
	for range 2 {
		for n := range flushOps {
			switch i := 2 * rng.IntN(keys); {
			case n%20 < 3:
				d.put(i, true)
				stale[i] = true
			case n%20 < 19:
				d.put(i, false)
				delete(stale, i)
			default:
				d.put(i+1, false)
				odd = append(odd, i+1)
			}
			if n%100 == 99 {
				d.ctl('B')
			}
		}
		d.ctl('F')
	}

	var tail []int // ≥0: put value(i); <0: delete -i-1
	for i := range stale {
		tail = append(tail, i)
	}
	for _, i := range odd {
		tail = append(tail, -i-1)
	}
	for len(tail) < max(keys/200, len(stale)+len(odd)) {
		tail = append(tail, 2*rng.IntN(keys))
	}
	slices.Sort(tail) // the map's order is random; the shuffle is seeded
	rng.Shuffle(len(tail), func(a, b int) { tail[a], tail[b] = tail[b], tail[a] })
	for n, i := range tail {
		if i >= 0 {
			d.put(i, false)
		} else {
			d.del(-i - 1)
		}
		if n%100 == 99 {
			d.ctl('B')
		}
	}
	d.ctl('E')
	d.w.Flush()
	return d.n
}

// buildDB writes the database with the C++ program unless it is there;
// it reports whether it wrote it and what the program said.
func buildDB(cfg config, bin, dir string, stderr io.Writer) (bool, error) {
	path := dbPath(dir, cfg.keys)
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	start := time.Now()
	tmp := path + ".tmp"
	os.RemoveAll(tmp)
	cmd := exec.Command(bin, "dbwrite", tmp)
	in, err := cmd.StdinPipe()
	if err != nil {
		return false, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return false, err
	}
	writeDBOps(in, cfg.keys)
	in.Close()
	if err := cmd.Wait(); err != nil {
		return false, fmt.Errorf("%s dbwrite: %v\n%s", bin, err, out.Bytes())
	}
	// RocksDB records no absolute path: the directory can move.
	if err := os.Rename(tmp, path); err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "wrote %s (%s) in %.1f s\n", path, strings.TrimSpace(out.String()), time.Since(start).Seconds())
	return true, nil
}

// copyDir copies the regular files of src into a new dst, replacing
// any dst there is.
func copyDir(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err == nil {
			_, err = io.CopyBuffer(out, in, buf)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// touchDir reads every regular file of dir through, into the page cache.
func touchDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if err := touch(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// expectedHash is the FNV-1a hash of the live view writeDBOps leaves:
// every key then value, in key order.
func expectedHash(keys int) uint64 {
	h := fnv.New64a()
	var kb, vb []byte
	for j := range keys {
		kb, vb = key(kb, 2*j), value(vb, 2*j)
		h.Write(kb)
		h.Write(vb)
	}
	return h.Sum64()
}

// verifyDB checks, untimed, both engines' whole view of the database:
// ours entry by entry against the generator, RocksDB's (the C++
// program's dbverify, on a copy) by its count and hash. It also checks
// that ours left the directory as it found it, and describes the
// database as ours reads it.
func verifyDB(cfg config, bin, dir string) (string, error) {
	path := dbPath(dir, cfg.keys)
	before, err := dirState(path)
	if err != nil {
		return "", err
	}
	db, err := rocksdb.OpenDB(path, nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	it, err := db.NewIterator(rocksdb.DefaultColumnFamily, nil)
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	n := 0
	var kb, vb []byte
	for ok := it.First(); ok; ok = it.Next() {
		kb, vb = key(kb, 2*n), value(vb, 2*n)
		if n >= cfg.keys || !bytes.Equal(it.Key(), kb) || !bytes.Equal(it.Value(), vb) {
			it.Close()
			return "", fmt.Errorf("ours: entry %d is %q = %x, want %q = %x", n, it.Key(), it.Value(), kb, vb)
		}
		h.Write(kb)
		h.Write(vb)
		n++
	}
	if err := it.Close(); err != nil {
		return "", fmt.Errorf("ours: scan: %w", err)
	}
	if n != cfg.keys {
		return "", fmt.Errorf("ours: %d entries, want %d", n, cfg.keys)
	}
	want := fmt.Sprintf("%016x", h.Sum64())

	cp := dbCopyPath(dir, cfg.keys)
	if err := copyDir(path, cp); err != nil {
		return "", err
	}
	defer os.RemoveAll(cp)
	out, err := exec.Command(bin, "dbverify", cp).Output()
	if err != nil {
		return "", fmt.Errorf("%s dbverify: %v", bin, err)
	}
	if got := string(out); got != fmt.Sprintf("entries %d\nfnv %s\n", cfg.keys, want) {
		return "", fmt.Errorf("RocksDB's view: %q, want %d entries with hash %s (the generator's and ours)", got, cfg.keys, want)
	}

	files, err := db.Files(rocksdb.DefaultColumnFamily)
	if err != nil {
		return "", err
	}
	perLevel := map[int]int{}
	var size uint64
	top := 0
	for _, f := range files {
		perLevel[f.Level]++
		size += f.Size
		top = max(top, f.Level)
	}
	var levels []string
	for l := 0; l <= top; l++ {
		if perLevel[l] > 0 {
			levels = append(levels, fmt.Sprintf("L%d %d", l, perLevel[l]))
		}
	}
	var logs int64
	ents, _ := os.ReadDir(path)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			if fi, err := e.Info(); err == nil {
				logs += fi.Size()
			}
		}
	}
	if err := db.Close(); err != nil {
		return "", err
	}
	after, err := dirState(path)
	if err != nil {
		return "", err
	}
	if after != before {
		return "", fmt.Errorf("ours changed %s:\nbefore %s\nafter  %s", path, before, after)
	}
	return fmt.Sprintf("%.1f MB in %d tables (%s), a write-ahead log of %.0f KB holding %d writes, last sequence number %d",
		float64(size)/1e6, len(files), strings.Join(levels, ", "), float64(logs)/1e3, db.LogEntries(rocksdb.DefaultColumnFamily), db.LastSequence()), nil
}

// dirState lists dir's files with their sizes and modification times.
func dirState(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s:%d:%d ", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), nil
}

// measureDB runs one round of impl over the database: cfg.opens opens
// (the median, ms), then on the last one a full scan and the Gets.
func measureDB(cfg config, impl, bin, keysPath, dir string, l lookups) (sample, error) {
	if impl == "rocksdb" {
		cp := dbCopyPath(dir, cfg.keys)
		if err := copyDir(dbPath(dir, cfg.keys), cp); err != nil {
			return nil, err
		}
		defer os.RemoveAll(cp)
		return measureDBCxx(cfg, bin, keysPath, cp)
	}
	path := dbPath(dir, cfg.keys)
	if err := touchDir(path); err != nil {
		return nil, err
	}
	var opens []float64
	var o *oursDB
	for k := range cfg.opens {
		c, err := cache.New(cfg.cacheBytes)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		db, err := rocksdb.OpenDB(path, &rocksdb.DBOptions{Cache: c})
		elapsed := time.Since(start)
		if err != nil {
			c.Close()
			return nil, err
		}
		opens = append(opens, float64(elapsed.Nanoseconds())/1e6)
		o = &oursDB{db: db, c: c}
		if k < cfg.opens-1 {
			if err := o.close(); err != nil {
				return nil, err
			}
		}
	}
	s := sample{"open": median(opens)}
	err := dbPasses(cfg, o, l, s)
	if cerr := o.close(); err == nil {
		err = cerr
	}
	return s, err
}

// measureDBCxx runs the C++ program's database round on the copy cp.
func measureDBCxx(cfg config, bin, keysPath, cp string) (sample, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "dbread", cp, keysPath, strconv.FormatInt(cfg.cacheBytes, 10), strconv.Itoa(cfg.opens))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s dbread: %v\n%s", bin, err, errOut.Bytes())
	}
	s, err := parseFigures(out.String())
	if err != nil {
		return nil, err
	}
	if s["entries"] != float64(cfg.keys) || s["bytes"] != float64(cfg.keys*(keyLen+valueLen)) {
		return nil, fmt.Errorf("scan: %v entries of %v bytes, want %d of %d", s["entries"], s["bytes"], cfg.keys, cfg.keys*(keyLen+valueLen))
	}
	delete(s, "entries")
	delete(s, "bytes")
	for _, f := range dbFigures {
		if _, ok := s[f.id]; !ok {
			return nil, fmt.Errorf("no %s figure in %q", f.id, out.String())
		}
	}
	return s, nil
}

// oursDB is package rocksdb's OpenDB over the database, with a cache of
// its own.
type oursDB struct {
	db *rocksdb.DB
	c  *cache.Cache
}

func (o *oursDB) close() error {
	err := o.db.Close()
	if cerr := o.c.Close(); err == nil {
		err = cerr
	}
	return err
}

// dbPasses times a full scan of the default column family (one
// iterator, on this goroutine), then the Gets, into s.
func dbPasses(cfg config, o *oursDB, l lookups, s sample) error {
	it, err := o.db.NewIterator(rocksdb.DefaultColumnFamily, nil)
	if err != nil {
		return err
	}
	flt0 := majorFaults()
	cpu0 := cpuTime()
	start := time.Now()
	n, sum := 0, 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		sum += len(it.Key()) + len(it.Value())
	}
	elapsed := time.Since(start)
	cpu1 := cpuTime()
	err = it.Close()
	sink += sum
	if flt0 >= 0 {
		s["scan-majflt"] = float64(majorFaults() - flt0)
	}
	if err != nil {
		return err
	}
	if n != cfg.keys || sum != cfg.keys*(keyLen+valueLen) {
		return fmt.Errorf("scan: %d entries of %d bytes, want %d of %d", n, sum, cfg.keys, cfg.keys*(keyLen+valueLen))
	}
	s["scan"] = float64(elapsed.Nanoseconds()) / float64(n)
	if cpu0 >= 0 {
		s["scan-cpu"] = float64(cpu1-cpu0) / float64(n)
	}
	return timeGets(l, s, func(k []byte) ([]byte, bool, error) {
		v, err := o.db.Get(rocksdb.DefaultColumnFamily, k)
		if errors.Is(err, reader.ErrNotFound) {
			return nil, false, nil
		}
		return v, err == nil, err
	})
}
