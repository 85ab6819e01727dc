package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	pebble "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// Pebble v2.1.7, as a Pebble DB holds the same tables:
//
//   - Each table written with sstable.NewWriter in the DB's table format
//     (implsetup.Pebble2WriterOptions: TableFormatPebblev7, 4 KiB blocks,
//     snappy, a whole-table Bloom filter of 10 bits per key, one index
//     block, as cmd/compare writes them), its range deletions with
//     Writer.DeleteRange, its keys with Writer.Set.
//   - A DB opened at FormatNewest with DisableAutomaticCompactions, the
//     same comparer, key schema and filter policy (every level), and a
//     block cache (pebble.NewCache) of -cache-mib, the size ours gets;
//     the tables ingested one by one, oldest first (DB.Ingest of a hard
//     link), so that they stack: the first lands in L6 (nothing overlaps
//     it), every later one in L0, a sublevel each (it overlaps the data
//     below). Read through DB.NewIter and DB.Get.
//   - Compaction: a new DB with the same tables ingested the same way,
//     then DB.Compact(ctx, "", 0xff..., false) into one level with
//     TargetFileSizes of 64 MiB, timed; the DB is then closed and
//     removed. Its block cache, of the same size, is a new one each
//     round, or with -kept-compact-cache one kept from round to round
//     (the new DB's blocks not in it).
//   - NewExternalIter over the eight table files, newest first, one per
//     level: no block cache, no filters, as that API reads.

// pebbleSrc is table t's file as written (t = 0 the oldest), the source
// of the ingestions and of NewExternalIter.
func pebbleSrc(dir string, t int) string {
	return filepath.Join(dir, "pebble-src", fmt.Sprintf("%06d.sst", t+1))
}

// buildPebble writes every table of w into dir/pebble-src.
func buildPebble(dir string, w *workload) error {
	if err := os.MkdirAll(filepath.Join(dir, "pebble-src"), 0o755); err != nil {
		return err
	}
	v := make([]byte, 0, valueLen)
	for t, tb := range w.tables {
		pw, err := implsetup.CreatePebble2(pebbleSrc(dir, t), implsetup.Pebble2WriterOptions(implsetup.Snappy, math.MaxInt32))
		if err != nil {
			return err
		}
		for _, s := range tb.spans {
			start, end := w.spanKeys(s)
			if err := pw.DeleteRange(start, end); err != nil {
				pw.Close()
				return err
			}
		}
		for _, j := range tb.keys {
			if err := pw.Set(w.key(int(j)), value(v, t, int(j))); err != nil {
				pw.Close()
				return err
			}
		}
		if err := pw.Close(); err != nil {
			return err
		}
	}
	return nil
}

// quietLogger drops Pebble's informational messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// pebbleOptions returns the DB's options: see the comment above.
func pebbleOptions(cache *pebble.Cache, target int64) *pebble.Options {
	o := &pebble.Options{
		Cache:                       cache,
		Comparer:                    implsetup.Pebble2Comparer,
		KeySchema:                   implsetup.Pebble2KeySchema.Name,
		KeySchemas:                  sstable.MakeKeySchemas(&implsetup.Pebble2KeySchema),
		FormatMajorVersion:          pebble.FormatNewest,
		DisableAutomaticCompactions: true,
		Logger:                      quietLogger{},
		Filters:                     map[string]pebble.FilterPolicy{implsetup.Pebble2Filter.Name(): implsetup.Pebble2Filter},
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = implsetup.Pebble2Filter
		o.Levels[i].FilterType = pebble.TableFilter
	}
	for i := range o.TargetFileSizes {
		o.TargetFileSizes[i] = target
	}
	return o
}

// pebbleDB is a DB holding the tables.
type pebbleDB struct {
	db    *pebble.DB
	cache *pebble.Cache
	dir   string
}

// openPebbleDB creates a DB in dbDir with block cache c (nil: a new
// cache of cacheBytes) and ingests the n tables of srcDir into it,
// oldest first, one by one.
func openPebbleDB(srcDir, dbDir string, n int, c *pebble.Cache, cacheBytes, target int64) (*pebbleDB, error) {
	cache := c
	if cache == nil {
		cache = pebble.NewCache(cacheBytes)
	} else {
		cache.Ref()
	}
	db, err := pebble.Open(dbDir, pebbleOptions(cache, target))
	if err != nil {
		cache.Unref()
		return nil, err
	}
	p := &pebbleDB{db: db, cache: cache, dir: dbDir}
	for t := range n {
		// Ingest moves its input into the DB: give it a link.
		link := filepath.Join(dbDir, fmt.Sprintf("ingest-%06d.sst", t+1))
		if err := os.Link(pebbleSrc(srcDir, t), link); err != nil {
			p.close()
			return nil, err
		}
		if err := db.Ingest(context.Background(), []string{link}); err != nil {
			p.close()
			return nil, fmt.Errorf("ingest table %d: %w", t+1, err)
		}
	}
	return p, nil
}

// shape describes the LSM: tables (and sublevels) per non-empty level.
func (p *pebbleDB) shape() string {
	m := p.db.Metrics()
	var parts []string
	for l, lm := range m.Levels {
		if lm.TablesCount == 0 {
			continue
		}
		s := fmt.Sprintf("L%d: %d table", l, lm.TablesCount)
		if lm.TablesCount != 1 {
			s += "s"
		}
		if l == 0 {
			s += fmt.Sprintf(" in %d sublevels", lm.Sublevels)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func (p *pebbleDB) close() error {
	err := p.db.Close()
	p.cache.Unref()
	return err
}

// pebbleEngine reads a pebbleDB.
type pebbleEngine struct {
	p    *pebbleDB
	seek *pebble.Iterator // the iterator of the seek measurements, reused
	buf  []byte           // Get's copy of the value
}

func (e *pebbleEngine) name() string { return "pebble" }

func (e *pebbleEngine) scan(reverse bool, visit func(k, v []byte)) (int, error) {
	it, err := e.p.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	return scanPebble(it, reverse, visit, true)
}

// scanPebble walks it to its end, then closes it if closeIt.
func scanPebble(it *pebble.Iterator, reverse bool, visit func(k, v []byte), closeIt bool) (int, error) {
	n := 0
	if reverse {
		for ok := it.Last(); ok; ok = it.Prev() {
			k, v := it.Key(), it.Value()
			if visit != nil {
				visit(k, v)
			}
			sink += len(k) + len(v)
			n++
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if visit != nil {
				visit(k, v)
			}
			sink += len(k) + len(v)
			n++
		}
	}
	err := it.Error()
	if closeIt {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}
	return n, err
}

func seekPebble(it *pebble.Iterator, key []byte, nexts int) (int, error) {
	n := 0
	for ok := it.SeekGE(key); ok; ok = it.Next() {
		sink += len(it.Key()) + len(it.Value())
		if n++; n > nexts {
			break
		}
	}
	return n, it.Error()
}

func (e *pebbleEngine) seekNext(key []byte, nexts int) (int, error) {
	if e.seek == nil {
		it, err := e.p.db.NewIter(nil)
		if err != nil {
			return 0, err
		}
		e.seek = it
	}
	return seekPebble(e.seek, key, nexts)
}

func (e *pebbleEngine) get(key []byte) ([]byte, bool, error) {
	v, closer, err := e.p.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// The value lives until Close: ours returns a copy the caller owns,
	// so Pebble's is copied too (into a reused buffer).
	e.buf = append(e.buf[:0], v...)
	return e.buf, true, closer.Close()
}

func (e *pebbleEngine) close() error {
	var err error
	if e.seek != nil {
		err = e.seek.Close()
	}
	if cerr := e.p.close(); err == nil {
		err = cerr
	}
	return err
}

// compactPebble opens a new DB in dbDir with block cache c (nil: a new
// cache of cacheBytes; a DB's blocks are keyed by its own cache handle,
// so none of the new DB's is in c), ingests the tables, and times a
// manual compaction of all of them into one level. It returns the
// seconds, the entries (counted by a scan when count is set) and tables
// of the output, and the LSM's shape before and after.
func compactPebble(srcDir, dbDir string, n int, c *pebble.Cache, cacheBytes, target int64, count bool) (sec float64, entries int64, tables int, before, after string, err error) {
	p, err := openPebbleDB(srcDir, dbDir, n, c, cacheBytes, target)
	if err != nil {
		return 0, 0, 0, "", "", err
	}
	defer func() {
		if cerr := p.close(); err == nil {
			err = cerr
		}
		os.RemoveAll(dbDir)
	}()
	before = p.shape()
	end := []byte(strings.Repeat("\xff", keyLen+1))
	sec, err = timed(func() error { return p.db.Compact(context.Background(), []byte{}, end, false) })
	if err != nil {
		return 0, 0, 0, "", "", err
	}
	after = p.shape()
	m := p.db.Metrics()
	for _, lm := range m.Levels {
		tables += int(lm.TablesCount)
	}
	if m.Levels[0].TablesCount != 0 {
		return 0, 0, 0, "", "", fmt.Errorf("Pebble's compaction left %s", after)
	}
	if count {
		// The compacted DB still shows the live view.
		c, err := (&pebbleEngine{p: p}).scan(false, nil)
		if err != nil {
			return 0, 0, 0, "", "", err
		}
		entries = int64(c)
	}
	return sec, entries, tables, before, after, nil
}

// externalEngine reads the table files through NewExternalIter.
type externalEngine struct {
	it *pebble.Iterator
}

func openExternal(srcDir string, n int) (*externalEngine, error) {
	o := &pebble.Options{
		Comparer:   implsetup.Pebble2Comparer,
		KeySchema:  implsetup.Pebble2KeySchema.Name,
		KeySchemas: sstable.MakeKeySchemas(&implsetup.Pebble2KeySchema),
		Logger:     quietLogger{},
	}
	o.EnsureDefaults()
	var files [][]sstable.ReadableFile
	closeAll := func() {
		for _, l := range files {
			for _, f := range l {
				f.Close()
			}
		}
	}
	for t := n - 1; t >= 0; t-- { // newest first
		f, err := vfs.Default.Open(pebbleSrc(srcDir, t))
		if err != nil {
			closeAll()
			return nil, err
		}
		files = append(files, []sstable.ReadableFile{f})
	}
	it, err := pebble.NewExternalIter(o, nil, files)
	if err != nil {
		return nil, err
	}
	return &externalEngine{it: it}, nil
}

func (e *externalEngine) name() string { return "external" }

func (e *externalEngine) scan(reverse bool, visit func(k, v []byte)) (int, error) {
	return scanPebble(e.it, reverse, visit, false)
}

func (e *externalEngine) seekNext(key []byte, nexts int) (int, error) {
	return seekPebble(e.it, key, nexts)
}

func (e *externalEngine) close() error { return e.it.Close() }
