package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// pebble2Impl is github.com/cockroachdb/pebble/v2 v2.1.7's sstable
// package writing TableFormatPebblev7 (columnar blocks), configured as
// implsetup's Pebble v2 comment says, with every fair advantage: one index
// block (IndexBlockSize math.MaxInt32, as for v1.1.5 above), a Bloom
// filter of 10 bits per key over whole keys as one table filter, a 256
// MiB pebble.Cache reached through a cache handle, the file opened
// through objstorageprovider as a DB opens it, and lookups through
// SeekPrefixGE on one reused iterator.
type pebble2Impl struct {
	indexBlockSize int                     // WriterOptions.IndexBlockSize; 0 means Pebble's default
	suffix         string                  // appended to the name "pebble2"
	prov           objstorage.Provider     // opened by prepare, taken by open
	cache          *implsetup.Pebble2Cache // made by prepare, taken by open
}

func (p *pebble2Impl) name() string { return "pebble2" + p.suffix }

// tablePath names the table as a Pebble DB would (000001.sst), in a
// directory of its own for the provider to list.
func (p *pebble2Impl) tablePath(dir string, c implsetup.Compression) string {
	return filepath.Join(dir, "pebble2"+p.suffix+"-"+string(c), fmt.Sprintf("%06d.sst", implsetup.Pebble2FileNum))
}

func (p *pebble2Impl) build(path string, d *dataset, c implsetup.Compression) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	w, err := implsetup.CreatePebble2(path, implsetup.Pebble2WriterOptions(c, p.indexBlockSize))
	if err != nil {
		return err
	}
	return fillPebble(w, d)
}

// prepare opens the object-storage provider over the table's directory
// and makes the block cache, as a Pebble DB does once at startup
// (untimed, as ours' cache is).
func (p *pebble2Impl) prepare(path string) error {
	if p.prov == nil {
		prov, err := implsetup.OpenPebble2Provider(filepath.Dir(path))
		if err != nil {
			return err
		}
		p.prov = prov
	}
	if p.cache == nil {
		p.cache = implsetup.NewPebble2Cache(blockCacheSz)
	}
	return nil
}

func (p *pebble2Impl) open(path string) (table, error) {
	if err := p.prepare(path); err != nil { // when the caller did not
		return nil, err
	}
	prov, cache := p.prov, p.cache
	p.prov, p.cache = nil, nil
	r, err := implsetup.OpenPebble2(prov, cache)
	if err != nil {
		cache.Close()
		prov.Close()
		return nil, err
	}
	return &pebble2Table{prov: prov, cache: cache, r: r}, nil
}

type pebble2Table struct {
	prov  objstorage.Provider
	cache *implsetup.Pebble2Cache
	r     *sstable.Reader
	it    sstable.Iterator // created by the first get, reused by later ones
}

func (t *pebble2Table) get(key []byte) ([]byte, bool, error) {
	return implsetup.Pebble2Get(t.r, &t.it, key)
}

func (t *pebble2Table) scan(visit func(k, v []byte)) (int, error) {
	return implsetup.Pebble2Scan(t.r, visit)
}

func (t *pebble2Table) offHeapBytes() int64 {
	if !cgoEnabled {
		return 0 // already counted in the Go heap
	}
	return t.cache.OffHeapBytes()
}

func (t *pebble2Table) close() error {
	err := implsetup.ClosePebble2(t.r, t.it)
	t.cache.Close()
	if cerr := t.prov.Close(); err == nil {
		err = cerr
	}
	return err
}
