package main

// The implementations measured: ours in each layout, Pebble v1 and
// Pebble v2, each building a table and opening a reader of it.

import (
	"io"
	"math"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/sstable"
	sstable2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
)

// table is an open reader of some implementation.
type table interface {
	// getter returns a lookup function of its own (with an iterator of
	// its own where the implementation needs one), for one goroutine,
	// and a function that releases it.
	getter() (get func(key []byte) (bool, error), done func())
	scan() (int, error)
	close() error
}

// impl builds and opens tables of one kind.
type impl struct {
	name  string
	build func(path string, n int) error
	open  func(src io.ReaderAt, size int64) (table, error)
	ours  bool // this module's reader: the read caps apply
	// oneLevel: ours with the one-level layout forced at every size,
	// whose first lookup reads the whole index and filter once they do
	// not fit the tail; the byte cap is reported, not required, for it.
	oneLevel bool
	v2       bool // Pebble v2: ours must make no more reads
}

// ours

// oursTable is a reader with a cache of its own, so that every row starts
// from an empty cache.
type oursTable struct {
	r *reader.Reader
	c *cache.Cache
}

func (t oursTable) getter() (func([]byte) (bool, error), func()) {
	return func(k []byte) (bool, error) {
		_, found, err := implsetup.OursGet(t.r, k)
		return found, err
	}, func() {}
}

func (t oursTable) scan() (int, error) { return implsetup.OursScan(t.r, nil) }

func (t oursTable) close() error {
	err := t.r.Close()
	if cerr := t.c.Close(); err == nil {
		err = cerr
	}
	return err
}

// buildOurs builds our table: with opts.PartitionThreshold -1, version 1
// whatever its size; with 1, version 3 whatever its size; with 0, the
// default threshold (240 KiB of index and filter: whatever does not fit
// the default tail) decides.
func buildOurs(opts builder.Options) func(string, int) error {
	return func(path string, n int) error {
		b, err := implsetup.CreateOurs(path, &opts)
		if err != nil {
			return err
		}
		var k, v []byte
		for i := range n {
			k, v = key(k, i, n), value(v, i)
			if err := b.Add(k, v); err != nil {
				b.Abort()
				return err
			}
		}
		return b.Close()
	}
}

func openOurs(src io.ReaderAt, size int64) (table, error) {
	c, err := cache.New(cacheBytes)
	if err != nil {
		return nil, err
	}
	r, err := reader.New(src, size, &reader.Options{Cache: c})
	if err != nil {
		c.Close()
		return nil, err
	}
	return oursTable{r, c}, nil
}

// Pebble v1.1.5, configured as bench/cmd/compare configures it.

func buildPebble(indexBlockSize int) func(string, int) error {
	return func(path string, n int) error {
		w, err := implsetup.CreatePebble(path, implsetup.PebbleWriterOptions(implsetup.Snappy, indexBlockSize))
		if err != nil {
			return err
		}
		return fillPebble(w, n)
	}
}

// pebbleWriter is what Pebble v1's and v2's sstable writers have in
// common.
type pebbleWriter interface {
	Set(key, value []byte) error
	Close() error
}

// fillPebble adds the n entries of the data set to w and closes it.
func fillPebble(w pebbleWriter, n int) error {
	var k, v []byte
	for i := range n {
		k, v = key(k, i, n), value(v, i)
		if err := w.Set(k, v); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

type pebbleTable struct {
	cache *pebble.Cache
	r     *sstable.Reader
}

func openPebble(src io.ReaderAt, size int64) (table, error) {
	c := pebble.NewCache(cacheBytes)
	r, err := sstable.NewReader(&pebbleReadable{ra: src, size: size}, implsetup.PebbleReaderOptions(c))
	if err != nil {
		c.Unref()
		return nil, err
	}
	return &pebbleTable{cache: c, r: r}, nil
}

// getter looks keys up as a Pebble user does with a filter check:
// SeekPrefixGE on one reused iterator (one per goroutine).
func (t *pebbleTable) getter() (func([]byte) (bool, error), func()) {
	var it sstable.Iterator
	return func(k []byte) (bool, error) {
			_, found, err := implsetup.PebbleGet(t.r, &it, k)
			return found, err
		}, func() {
			if it != nil {
				it.Close()
			}
		}
}

func (t *pebbleTable) scan() (int, error) { return implsetup.PebbleScan(t.r, nil) }

func (t *pebbleTable) close() error {
	err := t.r.Close()
	t.cache.Unref()
	return err
}

// Pebble v2.1.7, TableFormatPebblev7, configured as bench/cmd/compare
// configures it, reading through Pebble's own remote-object readable
// (objstorageprovider.NewRemoteReadable, with its read-ahead).

func buildPebble2(indexBlockSize int) func(string, int) error {
	return func(path string, n int) error {
		w, err := implsetup.CreatePebble2(path, implsetup.Pebble2WriterOptions(implsetup.Snappy, indexBlockSize))
		if err != nil {
			return err
		}
		return fillPebble(w, n)
	}
}

type pebble2Table struct {
	cache *implsetup.Pebble2Cache
	r     *sstable2.Reader
}

func openPebble2(src io.ReaderAt, size int64) (table, error) {
	c := implsetup.NewPebble2Cache(cacheBytes)
	r, err := implsetup.OpenPebble2Remote(src, size, c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &pebble2Table{cache: c, r: r}, nil
}

func (t *pebble2Table) getter() (func([]byte) (bool, error), func()) {
	var it sstable2.Iterator
	return func(k []byte) (bool, error) {
			_, found, err := implsetup.Pebble2Get(t.r, &it, k)
			return found, err
		}, func() {
			if it != nil {
				it.Close()
			}
		}
}

func (t *pebble2Table) scan() (int, error) { return implsetup.Pebble2Scan(t.r, nil) }

func (t *pebble2Table) close() error {
	err := t.r.Close()
	t.cache.Close()
	return err
}

var impls = []impl{
	// The builder's defaults: version 4, one-level while the index and
	// filter fit the default tail, partitioned above.
	{name: "ours default", build: buildOurs(builder.Options{}), open: openOurs, ours: true},
	// Version 2's hash index, or version 3 with it above the default
	// threshold.
	{name: "ours hash index v2", build: buildOurs(builder.Options{HashIndex: true}), open: openOurs, ours: true},
	{name: "ours v1 (forced)", build: buildOurs(builder.Options{FormatVersion: 1, PartitionThreshold: -1}), open: openOurs, ours: true, oneLevel: true},
	{name: "ours v3 (forced)", build: buildOurs(builder.Options{FormatVersion: 1, PartitionThreshold: 1}), open: openOurs, ours: true},
	{name: "pebble 1-level", build: buildPebble(math.MaxInt32), open: openPebble},
	{name: "pebble 2-level", build: buildPebble(0), open: openPebble},
	{name: "pebble2 1-level", build: buildPebble2(math.MaxInt32), open: openPebble2, v2: true},
	{name: "pebble2 2-level", build: buildPebble2(0), open: openPebble2, v2: true},
}
