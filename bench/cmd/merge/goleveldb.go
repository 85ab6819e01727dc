package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/syndtr/goleveldb/leveldb/cache"
	"github.com/syndtr/goleveldb/leveldb/comparer"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	ldbtable "github.com/syndtr/goleveldb/leveldb/table"
)

// goleveldb: the same tables written with goleveldb's table package
// (implsetup.GoleveldbOptions: 4 KiB blocks, snappy, Bloom filter of 10
// bits per key; it has no range deletions, so the tables hold the point
// entries only), opened as goleveldb's DB opens them, with one shared
// LRU block cache of -cache-mib, and read through
// iterator.NewMergedIterator over the eight table iterators, newest
// first. That iterator merges only: it returns every table's entry of a
// key, duplicates included, and knows nothing of deletions. Its figures
// are per merged entry (all the tables' entries), not per live key.

func goleveldbPath(dir string, t int) string {
	return filepath.Join(dir, "goleveldb", fmt.Sprintf("%06d.ldb", t+1))
}

func buildGoleveldb(dir string, w *workload) error {
	if err := os.MkdirAll(filepath.Join(dir, "goleveldb"), 0o755); err != nil {
		return err
	}
	v := make([]byte, 0, valueLen)
	for t, tb := range w.tables {
		gw, err := implsetup.CreateGoleveldb(goleveldbPath(dir, t), implsetup.GoleveldbOptions(implsetup.Snappy))
		if err != nil {
			return err
		}
		for _, j := range tb.keys {
			if err := gw.Append(w.key(int(j)), value(v, t, int(j))); err != nil {
				gw.Abort()
				return err
			}
		}
		if err := gw.Close(); err != nil {
			return err
		}
	}
	return nil
}

type goleveldbEngine struct {
	rs    []*ldbtable.Reader // newest first
	cache *cache.Cache
	seek  iterator.Iterator
}

func openGoleveldb(dir string, n int, cacheBytes int64) (*goleveldbEngine, error) {
	e := &goleveldbEngine{cache: cache.NewCache(cache.NewLRU(int(cacheBytes)))}
	bpool := implsetup.GoleveldbBufferPool()
	for t := n - 1; t >= 0; t-- {
		r, err := implsetup.OpenGoleveldb(goleveldbPath(dir, t), int64(t+1), e.cache, bpool, implsetup.GoleveldbOptions(implsetup.Snappy))
		if err != nil {
			e.close()
			return nil, err
		}
		e.rs = append(e.rs, r)
	}
	return e, nil
}

func (e *goleveldbEngine) name() string { return "goleveldb" }

func (e *goleveldbEngine) merged() iterator.Iterator {
	its := make([]iterator.Iterator, len(e.rs))
	for i, r := range e.rs {
		its[i] = r.NewIterator(nil, nil)
	}
	return iterator.NewMergedIterator(its, comparer.DefaultComparer, true)
}

func (e *goleveldbEngine) scan(reverse bool, visit func(k, v []byte)) (int, error) {
	it := e.merged()
	defer it.Release()
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
	return n, it.Error()
}

func (e *goleveldbEngine) seekNext(key []byte, nexts int) (int, error) {
	if e.seek == nil {
		e.seek = e.merged()
	}
	it := e.seek
	n := 0
	for ok := it.Seek(key); ok; ok = it.Next() {
		sink += len(it.Key()) + len(it.Value())
		if n++; n > nexts {
			break
		}
	}
	return n, it.Error()
}

func (e *goleveldbEngine) close() error {
	if e.seek != nil {
		e.seek.Release()
	}
	for _, r := range e.rs {
		r.Release()
	}
	e.cache.Close(true)
	return nil
}
