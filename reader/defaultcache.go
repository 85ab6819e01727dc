package reader

import (
	"sync"

	"github.com/sstkit/sstable/cache"
)

// DefaultCacheSize is the capacity, in bytes, of DefaultCache: 64 MiB for
// all readers opened without a cache of their own, not per reader.
//
// To size a cache for point lookups, aim for the decoded size of the
// blocks that lookups keep using: for compressed tables about 1.4 times
// their file size for a working set of whole tables (16-byte keys,
// 100-byte values, snappy), for memory-mapped uncompressed tables nothing
// at all (their blocks are read in place), and for readers without a
// mapping (New, Options.NoMmap) also their index and filter sections, as
// Properties().IndexSize and FilterSize give, and, in a table that is not
// partitioned, HashIndexSize (such a reader never reads a partitioned
// table's hash index).
const DefaultCacheSize = 64 << 20

var (
	defaultCacheOnce sync.Once
	defaultCache     *cache.Cache
	defaultCacheErr  error
)

// DefaultCache returns the process-wide cache, of DefaultCacheSize bytes,
// that readers opened with a nil Options.Cache share. It is created on
// first use and never closed. It returns cache.New's error if the cache's
// memory could not be reserved, and the same error on every later call.
func DefaultCache() (*cache.Cache, error) {
	defaultCacheOnce.Do(func() { defaultCache, defaultCacheErr = cache.New(DefaultCacheSize) })
	return defaultCache, defaultCacheErr
}
