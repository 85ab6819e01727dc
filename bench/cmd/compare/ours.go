package main

import (
	"path/filepath"

	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
)

// ours is this module, configured as its README shows:
//
//   - builder.New over an *os.File with implsetup.OursOptions: BlockSize
//     4096, Filter filterblock.Bloom(10) and the compression spelled out,
//     everything else the builder's defaults. For ours (and ours-default,
//     ours-ra) that is the default table, format version 4, exactly what
//     builder.Create(path, nil) writes: the compact hash index, and
//     partitions past the default PartitionThreshold (240 KiB: about 120k
//     such entries; so at 1M entries). ours-v2 asks for format version 2
//     (HashIndex: true) and ours-v1 for version 1 (FormatVersion: 1), both
//     one-level (implsetup.LocalPartitionThreshold), for comparison. The
//     builder buffers its output itself (256 KiB). builder.Create would
//     also fsync and rename; the harness fsyncs every implementation's
//     file untimed instead.
//   - reader.Open(path, &reader.Options{Cache: cache.New(256 MiB)}), a new
//     cache for each open as Pebble gets, made by prepare before the open
//     is timed, as every implementation's cache is (see preparer): an
//     engine makes its cache once and opens every table into it. The file
//     is memory-mapped;
//     decoded snappy blocks are kept in the cache (S3-FIFO, off the Go
//     heap), of the 256 MiB the others get rather than the default
//     64 MiB, so that the decoded table fits as it does for them. Raw
//     blocks of an uncompressed table are served from the mapping and
//     never cached. (-impls ours-default runs reader.Open(path, nil), the
//     shared 64 MiB default cache, for comparison.)
//   - Lookups: Reader.GetAppend(buf[:0], key) with one reused buffer, so a
//     hit copies the value and allocates nothing. Reader.Get (which
//     returns a fresh copy) is reported on a separate row.
//   - Scans: NewIterator, First/Next, Key and Value (which alias the
//     mapping for uncompressed blocks).
type ours struct {
	cacheBytes int64            // > 0: each open gets a cache.Cache of this capacity; 0: the default cache
	suffix     string           // appended to the name "ours"
	layout     implsetup.Layout // which table format the builder writes
	noMmap     bool             // reader.Options.NoMmap: read through ReadAt
	prepared   *cache.Cache     // made by prepare, taken by open
}

func (o *ours) name() string { return "ours" + o.suffix }

func (o *ours) tablePath(dir string, c implsetup.Compression) string {
	return filepath.Join(dir, o.name()+"-"+string(c)+".sst")
}

func (o *ours) build(path string, d *dataset, c implsetup.Compression) error {
	opts := implsetup.OursOptions(c, o.layout)
	w, err := implsetup.CreateOurs(path, opts)
	if err != nil {
		return err
	}
	for i := 0; i < d.n; i++ {
		if err := w.Add(d.key(i), d.value(i)); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// prepare makes the table's cache (untimed), as a store makes its cache
// once at startup; Pebble's and goleveldb's are made the same way.
func (o *ours) prepare(path string) error {
	if o.cacheBytes <= 0 || o.prepared != nil {
		return nil
	}
	c, err := cache.New(o.cacheBytes)
	if err != nil {
		return err
	}
	o.prepared = c
	return nil
}

func (o *ours) open(path string) (table, error) {
	if err := o.prepare(path); err != nil { // when the caller did not
		return nil, err
	}
	c := o.prepared
	o.prepared = nil
	var opts *reader.Options
	if c != nil {
		opts = &reader.Options{Cache: c}
	}
	if o.noMmap {
		o2 := reader.Options{NoMmap: true}
		if opts != nil {
			o2 = *opts
			o2.NoMmap = true
		}
		opts = &o2
	}
	r, err := reader.Open(path, opts)
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, err
	}
	return &oursTable{r: r, c: c, buf: make([]byte, 0, valueLen)}, nil
}

type oursTable struct {
	r   *reader.Reader
	c   *cache.Cache // the table's own cache; nil for the default one
	buf []byte
}

func (t *oursTable) get(key []byte) ([]byte, bool, error) {
	return implsetup.OursGetAppend(t.r, &t.buf, key)
}

func (t *oursTable) getCopy(key []byte) ([]byte, bool, error) { return implsetup.OursGet(t.r, key) }

func (t *oursTable) scan(visit func(k, v []byte)) (int, error) { return implsetup.OursScan(t.r, visit) }

// offHeapBytes is what the reader's cache holds: decoded blocks, in an
// anonymous mapping outside the Go heap.
func (t *oursTable) offHeapBytes() int64 {
	if t.c == nil {
		c, err := reader.DefaultCache()
		if err != nil {
			return 0
		}
		return c.Stats().Size
	}
	return t.c.Stats().Size
}

func (t *oursTable) close() error {
	err := t.r.Close()
	if t.c != nil {
		if cerr := t.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
