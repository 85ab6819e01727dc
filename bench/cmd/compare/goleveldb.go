package main

import (
	"path/filepath"

	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/syndtr/goleveldb/leveldb/cache"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	ldbtable "github.com/syndtr/goleveldb/leveldb/table"
)

// goleveldbImpl is github.com/syndtr/goleveldb (v1.0.1-0.20220721030215-
// 126854af5e6d)'s leveldb/table package, configured as goleveldb's own DB
// configures it (leveldb/table.go, newTableOps and tOps.open):
//
//   - Writer: ldbtable.NewWriter(w, &opt.Options{Filter:
//     filter.NewBloomFilter(10), Compression: opt.SnappyCompression or
//     opt.NoCompression, BlockSize: 4096}, nil, 0): restart interval 16,
//     LevelDB-style filter blocks (one filter per 2 KiB of data offsets).
//     Its output goes through a 256 KiB bufio.Writer (goleveldb's DB
//     writes to the file unbuffered, one write per block; the buffer is a
//     fair advantage). Strict mode stays the default (block checksums are
//     verified when a block is read).
//   - Reader: ldbtable.NewReader(*os.File, size, FileDesc{TypeTable, 1},
//     &cache.NamespaceGetter{Cache: cache.NewCache(cache.NewLRU(256 MiB)),
//     NS: 1}, util.NewBufferPool(4096+5), same options): the DB's block
//     cache and buffer pool, at 256 MiB. No mmap: blocks are read with
//     pread and kept decoded in the cache.
//   - Lookups: Reader.Find(key, true, nil), the only path that consults
//     the filter (Reader.Get never does), then an exact-match check of the
//     returned key. Find returns a copy of the value (with a buffer pool).
//   - Scans: NewIterator(nil, nil), First/Next, Key, Value.
type goleveldbImpl struct {
	cache *cache.Cache // made by prepare, taken by open
}

func (goleveldbImpl) name() string { return "goleveldb" }

// supports: goleveldb's table writer has snappy and none only.
func (goleveldbImpl) supports(c implsetup.Compression) bool { return c != implsetup.Zstd }

func (goleveldbImpl) tablePath(dir string, c implsetup.Compression) string {
	return filepath.Join(dir, "goleveldb-"+string(c)+".ldb")
}

func (goleveldbImpl) build(path string, d *dataset, c implsetup.Compression) error {
	w, err := implsetup.CreateGoleveldb(path, implsetup.GoleveldbOptions(c))
	if err != nil {
		return err
	}
	for i := 0; i < d.n; i++ {
		if err := w.Append(d.key(i), d.value(i)); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// prepare makes the block cache (untimed), as every implementation's is.
func (g *goleveldbImpl) prepare(path string) error {
	if g.cache == nil {
		g.cache = cache.NewCache(cache.NewLRU(int(blockCacheSz)))
	}
	return nil
}

func (g *goleveldbImpl) open(path string) (table, error) {
	g.prepare(path) // when the caller did not
	bc := g.cache
	g.cache = nil
	r, err := implsetup.OpenGoleveldb(path, 1, bc, implsetup.GoleveldbBufferPool(), implsetup.GoleveldbOptions(implsetup.Snappy))
	if err != nil {
		bc.Close(true)
		return nil, err
	}
	return &goleveldbTable{r: r, cache: bc}, nil
}

type goleveldbTable struct {
	r     *ldbtable.Reader
	cache *cache.Cache
}

func (t *goleveldbTable) get(key []byte) ([]byte, bool, error) {
	return implsetup.GoleveldbGet(t.r, key)
}

func (t *goleveldbTable) scan(visit func(k, v []byte)) (int, error) {
	var it iterator.Iterator = t.r.NewIterator(nil, nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		if visit != nil {
			visit(k, v)
		}
		n++
	}
	err := it.Error()
	it.Release()
	return n, err
}

func (t *goleveldbTable) offHeapBytes() int64 { return 0 }

func (t *goleveldbTable) close() error {
	t.r.Release() // closes the file
	t.cache.Close(true)
	return nil
}
