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
// mapping (New, Options.NoMmap) also their index, filter and hash index
// sections, as Properties().IndexSize, FilterSize and HashIndexSize give.
const DefaultCacheSize = 64 << 20

var (
	defaultCacheOnce sync.Once
	defaultCache     *cache.Cache
)

// DefaultCache returns the process-wide cache, of DefaultCacheSize bytes,
// that readers opened with a nil Options.Cache share. It is created on
// first use and never closed.
func DefaultCache() *cache.Cache {
	defaultCacheOnce.Do(func() { defaultCache = cache.New(DefaultCacheSize) })
	return defaultCache
}
