package main

import "github.com/sstkit/sstable/bench/internal/implsetup"

// limited is implemented by implementations that lack some compressions;
// the harness skips those.
type limited interface {
	supports(c implsetup.Compression) bool
}

// supports reports whether im can build tables with c.
func supports(im impl, c implsetup.Compression) bool {
	l, ok := im.(limited)
	return !ok || l.supports(c)
}

// blockCacheSz is the block cache budget in bytes, the same for every
// implementation: 256 MiB, or -cache-mib.
var blockCacheSz int64 = 256 << 20

// impl is one SSTable implementation under test.
type impl interface {
	// name is the short name used in the report: ours, pebble, goleveldb.
	name() string
	// build writes d's entries as a table at path (from tablePath),
	// returning once the table is complete in the page cache. It does not
	// fsync; the harness syncs, untimed, afterwards.
	build(path string, d *dataset, c implsetup.Compression) error
	// open opens the table at path for reading.
	open(path string) (table, error)
	// tablePath is where this implementation's table for c lives in dir.
	tablePath(dir string, c implsetup.Compression) string
}

// table is an open table.
type table interface {
	// get looks key up the way the implementation's users look up one key,
	// with a filter check first. It returns the value (valid until the next
	// call) and whether the key was found.
	get(key []byte) ([]byte, bool, error)
	// scan walks every entry in key order and returns the entry count.
	// visit, if not nil, sees every entry (for correctness checks; the
	// timed scans pass nil).
	scan(visit func(k, v []byte)) (int, error)
	// offHeapBytes is memory the table holds outside the Go heap (Pebble's
	// block cache, allocated with C malloc when cgo is on), 0 if none.
	offHeapBytes() int64
	close() error
}

// copier is implemented by tables that also have a copying lookup (ours:
// Reader.Get, which allocates a fresh value), reported as an extra row.
type copier interface {
	getCopy(key []byte) ([]byte, bool, error)
}

// preparer is implemented by implementations with per-store setup that a
// real store does once, not per table: the block cache (every
// implementation: cache.New for ours, pebble.NewCache, goleveldb's LRU)
// and Pebble's object-storage provider. The harness calls prepare untimed
// before open, so that the open figure times the same thing on every
// side: opening one table into a cache that exists. (Before, each open
// made its cache inside the timing; ours' cache.New then cost 1-3 ms of
// a 10M-entry table's 1.1-3.3 ms, where Pebble's NewCache allocates
// little up front.) Each open takes what prepare made and makes it
// itself if prepare was not called.
type preparer interface {
	prepare(path string) error
}
