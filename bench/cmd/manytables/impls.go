package main

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage"
	pebblesst "github.com/cockroachdb/pebble/sstable"
	objstorage2 "github.com/cockroachdb/pebble/v2/objstorage"
	pebble2sst "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
	ldbcache "github.com/syndtr/goleveldb/leveldb/cache"
	ldbtable "github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// impl is one implementation: it builds table t of a workload into a
// directory and opens all of a directory's tables with one shared cache.
// Every implementation is configured as in cmd/compare, through the same
// internal/implsetup (see the comments there); only the caches differ:
// one cache for all the tables here. The compressions run are snappy and
// none.
type impl interface {
	name() string
	build(dir string, t int, w workload, c implsetup.Compression) error
	open(dir string, w workload, cacheBytes int64) (store, error)
}

// store is the open tables of one directory.
type store interface {
	// getter returns a lookup state for one goroutine.
	getter() getter
	// cacheStats reports the shared cache's counters; ok is false if the
	// implementation has none of the kind. evictions is -1 when the
	// implementation does not count them.
	cacheStats() (st cacheStats, ok bool)
	close() error
}

type cacheStats struct {
	Capacity  int64 `json:"capacity"`
	Size      int64 `json:"size"`
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Evictions int64 `json:"evictions"` // -1: not counted
	Held      int64 `json:"held"`      // ours: bytes of Size set aside for readers' filter copies and state (cache.Stats.Held)
}

// getter looks keys up on behalf of one goroutine. The value is valid
// until the next call.
type getter interface {
	get(t int, key []byte) (v []byte, found bool, err error)
	close() error
}

var implNames = []string{"ours", "ours-v1", "pebble", "pebble2", "goleveldb"}

func newImpl(name string) impl {
	switch name {
	case "ours":
		return ours{layout: implsetup.DefaultLayout} // the default table: format version 4
	case "ours-v1":
		return ours{suffix: "-v1", layout: implsetup.V1Layout} // no hash index: format version 1
	case "pebble":
		return pebbleImpl{}
	case "pebble2":
		return pebble2Impl{}
	case "goleveldb":
		return goleveldbImpl{}
	}
	return nil
}

// tableName is table t's file name, as a Pebble DB names table files
// (000001.sst for t = 0).
func tableName(t int, ext string) string { return fmt.Sprintf("%06d.%s", t+1, ext) }

// addEntries adds table t's entries in order through add.
func addEntries(w workload, t int, add func(k, v []byte) error) error {
	var k [keyLen]byte
	var v [valueLen]byte
	for j := 0; j < w.entries; j++ {
		w.presentKey(k[:], t, j)
		w.value(v[:], t, j)
		if err := add(k[:], v[:]); err != nil {
			return err
		}
	}
	return nil
}

// ---- ours -------------------------------------------------------------

// ours is this module, built as cmd/compare builds it (builder.New over an
// *os.File, BlockSize 4096, snappy or none, filterblock.Bloom(10), the
// default format version 4 or version 1) and read with reader.Open(path,
// &reader.Options{Cache: c}), c one cache.Cache for all the readers.
// Lookups are GetAppend into a per-goroutine buffer.
type ours struct {
	suffix string
	layout implsetup.Layout
}

func (o ours) name() string { return "ours" + o.suffix }

func (o ours) build(dir string, t int, w workload, c implsetup.Compression) error {
	b, err := implsetup.CreateOurs(filepath.Join(dir, tableName(t, "sst")), implsetup.OursOptions(c, o.layout))
	if err != nil {
		return err
	}
	if err := addEntries(w, t, b.Add); err != nil {
		b.Abort()
		return err
	}
	return b.Close()
}

func (o ours) open(dir string, w workload, cacheBytes int64) (store, error) {
	c, err := cache.New(cacheBytes)
	if err != nil {
		return nil, err
	}
	s := &oursStore{c: c}
	for t := 0; t < w.tables; t++ {
		r, err := reader.Open(filepath.Join(dir, tableName(t, "sst")), &reader.Options{Cache: s.c})
		if err != nil {
			s.close()
			return nil, err
		}
		s.rs = append(s.rs, r)
	}
	return s, nil
}

type oursStore struct {
	c  *cache.Cache
	rs []*reader.Reader
}

func (s *oursStore) getter() getter {
	return &oursGetter{rs: s.rs, buf: make([]byte, 0, valueLen)}
}

func (s *oursStore) cacheStats() (cacheStats, bool) {
	st := s.c.Stats()
	return cacheStats{Capacity: st.Capacity, Size: st.Size, Hits: st.Hits, Misses: st.Misses, Evictions: st.Evictions, Held: st.Held}, true
}

func (s *oursStore) close() error {
	var err error
	for _, r := range s.rs {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}
	s.rs = nil
	if cerr := s.c.Close(); err == nil {
		err = cerr
	}
	return err
}

type oursGetter struct {
	rs  []*reader.Reader
	buf []byte
}

func (g *oursGetter) get(t int, key []byte) ([]byte, bool, error) {
	return implsetup.OursGetAppend(g.rs[t], &g.buf, key)
}

func (g *oursGetter) close() error { return nil }

// ---- Pebble -----------------------------------------------------------

// pebbleImpl is Pebble v1.1.5's sstable package, written and read as
// cmd/compare does (WriterOptions{BlockSize 4096, restart interval 16,
// Snappy or None, bloom 10 as a whole-table filter, TableFormatRocksDBv2,
// one-level index}, the comparer whose Split makes the whole key the
// prefix), the 200 files opened through one objstorage provider over
// their directory as a DB opens its tables, with one pebble.NewCache
// shared by all the readers.
//
// Keeping files apart in the shared cache: Pebble's block cache is keyed
// by (cache ID, file number, block offset). A DB takes one ID for itself
// (Cache.NewID) and passes it with each table's file number through a
// private reader option (internal/private.SSTableCacheOpts, not
// importable). sstable.NewReader without that option, as here, takes a
// fresh Cache.NewID() for every reader, with file number 0: each reader
// is its own namespace, so blocks of different files at the same offset
// never collide, and the capacity is shared.
//
// Lookups: each goroutine has its own iterator per table, created on its
// first lookup there (iterators are not safe for concurrent use), and
// looks up with SeekPrefixGE(key, key, 0), which consults the filter,
// then an exact-key check; the value is read in place (LazyValue.Value).
type pebbleImpl struct{}

func (pebbleImpl) name() string { return "pebble" }

func (pebbleImpl) build(dir string, t int, w workload, c implsetup.Compression) error {
	// IndexBlockSize math.MaxInt32: one index block, like ours.
	wr, err := implsetup.CreatePebble(filepath.Join(dir, tableName(t, "sst")), implsetup.PebbleWriterOptions(c, math.MaxInt32))
	if err != nil {
		return err
	}
	if err := addEntries(w, t, wr.Set); err != nil {
		wr.Close()
		return err
	}
	return wr.Close()
}

func (pebbleImpl) open(dir string, w workload, cacheBytes int64) (store, error) {
	prov, err := implsetup.OpenPebbleProvider(dir)
	if err != nil {
		return nil, err
	}
	s := &pebbleStore{prov: prov, cache: pebble.NewCache(cacheBytes)}
	for t := 0; t < w.tables; t++ {
		r, err := implsetup.OpenPebble(prov, t+1, s.cache)
		if err != nil {
			s.close()
			return nil, err
		}
		s.rs = append(s.rs, r)
	}
	return s, nil
}

type pebbleStore struct {
	prov  objstorage.Provider
	cache *pebble.Cache
	rs    []*pebblesst.Reader
}

func (s *pebbleStore) getter() getter {
	return &pebbleGetter{rs: s.rs, its: make([]pebblesst.Iterator, len(s.rs))}
}

func (s *pebbleStore) cacheStats() (cacheStats, bool) {
	m := s.cache.Metrics()
	return cacheStats{Capacity: s.cache.MaxSize(), Size: m.Size, Hits: m.Hits, Misses: m.Misses, Evictions: -1}, true
}

func (s *pebbleStore) close() error {
	var err error
	for _, r := range s.rs {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}
	s.rs = nil
	s.cache.Unref()
	if cerr := s.prov.Close(); err == nil {
		err = cerr
	}
	return err
}

type pebbleGetter struct {
	rs  []*pebblesst.Reader
	its []pebblesst.Iterator // its[t]: created by the first lookup in table t
}

func (g *pebbleGetter) get(t int, key []byte) ([]byte, bool, error) {
	return implsetup.PebbleGet(g.rs[t], &g.its[t], key)
}

func (g *pebbleGetter) close() error {
	var err error
	for i, it := range g.its {
		if it != nil {
			if cerr := it.Close(); err == nil {
				err = cerr
			}
			g.its[i] = nil
		}
	}
	return err
}

// ---- Pebble v2 --------------------------------------------------------

// pebble2Impl is Pebble v2.1.7's sstable package, written and read as
// cmd/compare's pebble2 (implsetup's Pebble v2 comment: TableFormatPebblev7,
// columnar blocks, BlockSize 4096, restart interval 16, the default
// columnar key schema, bloom 10 as a whole-table filter over whole keys,
// snappy or none, IndexBlockSize math.MaxInt32: one index block), the
// files opened through one objstorage provider over their directory as a
// DB opens its tables.
//
// The cache: one pebble.NewCache(cacheBytes) and one handle on it
// (Cache.NewHandle, implsetup.NewPebble2Cache), shared by all the readers
// as a DB shares its one handle among its tables. Pebble v2's block cache
// is keyed by (handle, file number, block offset); each reader gets its
// table's own file number, t+1, the number in its file name
// (ReaderOptions.CacheOpts.FileNum, through implsetup.OpenPebble2File), as
// the DB's file cache passes each table's DiskFileNum, so blocks of
// different tables at the same offset never collide. The cache's memory is
// manually managed: C calloc with cgo (outside the Go heap, but in
// RssAnon), the Go heap without cgo.
//
// Lookups: as for Pebble v1, each goroutine has its own iterator per table
// (Reader.NewIter(NoTransforms, nil, nil, AssertNoBlobHandles)), created on
// its first lookup there, reused for every later one and closed at the
// end; SeekPrefixGE(key, key, 0), which consults the filter, then an
// exact-key check; the value read in place (InternalKV.Value(nil)).
type pebble2Impl struct{}

func (pebble2Impl) name() string { return "pebble2" }

func (pebble2Impl) build(dir string, t int, w workload, c implsetup.Compression) error {
	wr, err := implsetup.CreatePebble2(filepath.Join(dir, tableName(t, "sst")), implsetup.Pebble2WriterOptions(c, math.MaxInt32))
	if err != nil {
		return err
	}
	if err := addEntries(w, t, wr.Set); err != nil {
		wr.Close()
		return err
	}
	return wr.Close()
}

func (pebble2Impl) open(dir string, w workload, cacheBytes int64) (store, error) {
	prov, err := implsetup.OpenPebble2Provider(dir)
	if err != nil {
		return nil, err
	}
	s := &pebble2Store{prov: prov, cache: implsetup.NewPebble2Cache(cacheBytes)}
	for t := 0; t < w.tables; t++ {
		r, err := implsetup.OpenPebble2File(prov, uint64(t+1), s.cache)
		if err != nil {
			s.close()
			return nil, err
		}
		s.rs = append(s.rs, r)
	}
	return s, nil
}

type pebble2Store struct {
	prov  objstorage2.Provider
	cache *implsetup.Pebble2Cache
	rs    []*pebble2sst.Reader
}

func (s *pebble2Store) getter() getter {
	return &pebble2Getter{rs: s.rs, its: make([]pebble2sst.Iterator, len(s.rs))}
}

func (s *pebble2Store) cacheStats() (cacheStats, bool) {
	m := s.cache.Cache.Metrics()
	return cacheStats{Capacity: s.cache.Cache.MaxSize(), Size: m.Size, Hits: m.Hits, Misses: m.Misses, Evictions: -1}, true
}

func (s *pebble2Store) close() error {
	var err error
	for _, r := range s.rs {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}
	s.rs = nil
	s.cache.Close() // the handle, then the cache
	if cerr := s.prov.Close(); err == nil {
		err = cerr
	}
	return err
}

type pebble2Getter struct {
	rs  []*pebble2sst.Reader
	its []pebble2sst.Iterator // its[t]: created by the first lookup in table t
}

func (g *pebble2Getter) get(t int, key []byte) ([]byte, bool, error) {
	return implsetup.Pebble2Get(g.rs[t], &g.its[t], key)
}

func (g *pebble2Getter) close() error {
	var err error
	for i, it := range g.its {
		if it != nil {
			if cerr := it.Close(); err == nil {
				err = cerr
			}
			g.its[i] = nil
		}
	}
	return err
}

// ---- goleveldb --------------------------------------------------------

// goleveldbImpl is goleveldb's leveldb/table package, written and read as
// cmd/compare does (bloom 10, snappy or none, 4 KiB blocks; pread, no
// mmap; Find(key, true, nil), which consults the filter, and an exact-key
// check), with one cache.NewCache(cache.NewLRU(cacheBytes)) shared by all
// the readers, each reading through its own NamespaceGetter (NS = table
// number, as goleveldb's DB uses the file number), and one buffer pool,
// as the DB shares one.
type goleveldbImpl struct{}

func (goleveldbImpl) name() string { return "goleveldb" }

func (goleveldbImpl) build(dir string, t int, w workload, c implsetup.Compression) error {
	wr, err := implsetup.CreateGoleveldb(filepath.Join(dir, tableName(t, "ldb")), implsetup.GoleveldbOptions(c))
	if err != nil {
		return err
	}
	if err := addEntries(w, t, wr.Append); err != nil {
		wr.Abort()
		return err
	}
	return wr.Close()
}

func (goleveldbImpl) open(dir string, w workload, cacheBytes int64) (store, error) {
	s := &goleveldbStore{
		cache: ldbcache.NewCache(ldbcache.NewLRU(int(cacheBytes))),
		bpool: implsetup.GoleveldbBufferPool(),
	}
	opts := implsetup.GoleveldbOptions(implsetup.Snappy) // one for all the readers, as a DB shares one
	for t := 0; t < w.tables; t++ {
		r, err := implsetup.OpenGoleveldb(filepath.Join(dir, tableName(t, "ldb")), int64(t+1), s.cache, s.bpool, opts)
		if err != nil {
			s.close()
			return nil, err
		}
		s.rs = append(s.rs, r)
	}
	return s, nil
}

type goleveldbStore struct {
	cache *ldbcache.Cache
	bpool *util.BufferPool
	rs    []*ldbtable.Reader
}

func (s *goleveldbStore) getter() getter { return goleveldbGetter{rs: s.rs} }

func (s *goleveldbStore) cacheStats() (cacheStats, bool) {
	st := s.cache.GetStats()
	return cacheStats{Capacity: int64(s.cache.Capacity()), Size: st.Size, Hits: st.HitCount, Misses: st.MissCount, Evictions: -1}, true
}

func (s *goleveldbStore) close() error {
	for _, r := range s.rs {
		r.Release() // closes the file
	}
	s.rs = nil
	s.cache.Close(true)
	return nil
}

type goleveldbGetter struct{ rs []*ldbtable.Reader }

func (g goleveldbGetter) get(t int, key []byte) ([]byte, bool, error) {
	return implsetup.GoleveldbGet(g.rs[t], key)
}

func (goleveldbGetter) close() error { return nil }
