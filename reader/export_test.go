package reader

import "github.com/sstkit/sstable/cache"

// Test hooks into the reader's use of the block cache.

// CachedBlock reports whether data block i of r is in the cache. It pins
// and releases the block, which counts as a hit.
func CachedBlock(r *Reader, i int) bool {
	if r.blocks == nil || i >= r.blocks.Len() {
		return false
	}
	h, ok := r.blocks.Get(i)
	h.Release()
	return ok
}

// BlockTable returns r's cache table of data blocks, nil if it has none.
func BlockTable(r *Reader) *cache.Table { return r.blocks }
