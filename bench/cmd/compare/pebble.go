package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// pebbleImpl is github.com/cockroachdb/pebble v1.1.5's sstable package,
// configured as a Pebble DB would configure it, with every fair advantage:
//
//   - Writer: sstable.NewWriter with WriterOptions{BlockSize: 4096,
//     BlockRestartInterval: 16, Compression: Snappy or None,
//     FilterPolicy: bloom.FilterPolicy(10), FilterType: TableFilter (one
//     whole-table filter, which Pebble recommends), TableFormat:
//     TableFormatRocksDBv2 (the writer's default in v1.1.5, and the table
//     format of a DB at the default FormatMostCompatible; it has table
//     filters), IndexBlockSize: math.MaxInt32, Parallelism: false (a DB's
//     default: MaxWriterConcurrency is 0)}. IndexBlockSize defaults to
//     BlockSize, which gives 1M entries a two-level index (a top-level
//     index over 4 KiB index blocks); math.MaxInt32, as the option's
//     documentation suggests, keeps one index block like ours and made
//     hit lookups 10-15% faster here (go run ./cmd/compare -impls
//     pebble,pebble-2lvl compares the two). The writer writes through a
//     256 KiB bufio-backed objstorage.Writable (Pebble's own
//     NewFileWritable buffers only 4 KiB and fsyncs in Finish; the harness
//     fsyncs every implementation untimed instead).
//   - Comparer: a copy of sstable.DefaultComparer (bytewise, same name)
//     with Split = len(key): the whole key is the prefix, so the filter
//     holds whole keys and SeekPrefixGE can consult it.
//   - Reader: the file is opened the way a Pebble DB opens tables, through
//     objstorageprovider.Open(DefaultSettings(vfs.Default, dir)) and
//     OpenForReading (vfs.RandomReadsOption, read-ahead for scans); then
//     sstable.NewReader with ReaderOptions{Cache: pebble.NewCache(256 MiB),
//     Comparer: the comparer above, Filters: {bloom policy name: policy}}.
//     (objstorageprovider has no exported NewFileReadable in v1.1.5.)
//   - Lookups: one iterator from Reader.NewIter(nil, nil), reused for every
//     lookup (cheaper than pebble.DB.Get, which builds an iterator per
//     call), iter.SeekPrefixGE(key, key, 0), the only call that consults
//     the filter; the returned user key must equal key; the value is read
//     with LazyValue.Value(nil), which returns it in place (no copy).
//   - Scans: a fresh NewIter(nil, nil), First/Next, LazyValue.Value(nil).
type pebbleImpl struct {
	indexBlockSize int                 // WriterOptions.IndexBlockSize; 0 means Pebble's default
	suffix         string              // appended to the name "pebble"
	prov           objstorage.Provider // opened by prepare, taken by open
	cache          *pebble.Cache       // made by prepare, taken by open
}

// pebbleFileNum is the table's file number in its directory.
const pebbleFileNum = 1

func (p *pebbleImpl) name() string { return "pebble" + p.suffix }

// supports: with cgo, Pebble v1.1.5 decodes zstd blocks with
// github.com/DataDog/zstd, which this module has at v1.5.7 (Pebble v2
// needs it); that version's Decompress allocates a new buffer for the
// frames v1.1.5's streaming encoder writes (they carry no content size),
// and v1.1.5 rejects the result ("decompressed into unexpected buffer").
// So v1.1.5 runs zstd only without cgo (klauspost's decoder); Pebble v2
// runs it either way.
func (p *pebbleImpl) supports(c implsetup.Compression) bool {
	return c != implsetup.Zstd || !cgoEnabled
}

// tablePath names the table as a Pebble DB would (000001.sst), in a
// directory of its own for the provider to list.
func (p *pebbleImpl) tablePath(dir string, c implsetup.Compression) string {
	return filepath.Join(dir, "pebble"+p.suffix+"-"+string(c), fmt.Sprintf("%06d.sst", pebbleFileNum))
}

func (p *pebbleImpl) build(path string, d *dataset, c implsetup.Compression) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	w, err := implsetup.CreatePebble(path, implsetup.PebbleWriterOptions(c, p.indexBlockSize))
	if err != nil {
		return err
	}
	return fillPebble(w, d)
}

// prepare opens the object-storage provider over the table's directory
// and makes the block cache, as a Pebble DB does once at startup; the
// harness calls it untimed, so the Open figure covers OpenForReading and
// sstable.NewReader only (and ours reader.Open alone).
func (p *pebbleImpl) prepare(path string) error {
	if p.prov == nil {
		prov, err := implsetup.OpenPebbleProvider(filepath.Dir(path))
		if err != nil {
			return err
		}
		p.prov = prov
	}
	if p.cache == nil {
		p.cache = pebble.NewCache(blockCacheSz)
	}
	return nil
}

func (p *pebbleImpl) open(path string) (table, error) {
	if err := p.prepare(path); err != nil { // when the caller did not
		return nil, err
	}
	prov, cache := p.prov, p.cache
	p.prov, p.cache = nil, nil
	r, err := implsetup.OpenPebble(prov, pebbleFileNum, cache)
	if err != nil {
		cache.Unref()
		prov.Close()
		return nil, err
	}
	return &pebbleTable{prov: prov, cache: cache, r: r}, nil
}

type pebbleTable struct {
	prov  objstorage.Provider
	cache *pebble.Cache
	r     *sstable.Reader
	it    sstable.Iterator // created by the first get, reused by later ones
}

func (t *pebbleTable) get(key []byte) ([]byte, bool, error) {
	return implsetup.PebbleGet(t.r, &t.it, key)
}

func (t *pebbleTable) scan(visit func(k, v []byte)) (int, error) {
	return implsetup.PebbleScan(t.r, visit)
}

func (t *pebbleTable) offHeapBytes() int64 {
	if !cgoEnabled {
		return 0 // already counted in the Go heap
	}
	return t.cache.Metrics().Size
}

func (t *pebbleTable) close() error {
	err := implsetup.ClosePebble(t.r, t.it)
	t.cache.Unref()
	if cerr := t.prov.Close(); err == nil {
		err = cerr
	}
	return err
}

// pebbleWriter is what Pebble v1's and v2's sstable writers have in
// common.
type pebbleWriter interface {
	Set(key, value []byte) error
	Close() error
}

// fillPebble adds d's entries to w, in key order, and closes it.
func fillPebble(w pebbleWriter, d *dataset) error {
	for i := 0; i < d.n; i++ {
		if err := w.Set(d.key(i), d.value(i)); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
