// # Memory
//
// Decoded data blocks live in a cache.Cache (Options.Cache, or the
// process-wide DefaultCache of DefaultCacheSize bytes), shared by any
// number of readers and bounded by its capacity, off the Go heap. A
// memory-mapped reader reads raw data blocks and its index block, filter
// and hash index in place from the mapping: those pages are the OS page
// cache's, not the cache's. A reader without a mapping (New, or Open with
// Options.NoMmap) keeps those sections in the cache too, unless one is
// larger than a cache shard (Capacity / Shards bytes), which the reader
// then keeps on the Go heap.
//
// Opening a reader without a mapping reads the file's tail
// (Options.TailSize bytes) into memory the cache lends (a buffer of its
// own when no shard can lend it), and copies the sections in it, and a
// span block, to cache slots of their own as read: they are checked on
// first use. A section the cache cannot take is checked at once and kept
// on the Go heap, and such a span block is kept on the heap until its
// first use. When the tail also holds data blocks or partitions (a
// table of less than about TailSize bytes of filter and index), the
// reader keeps it, one cache entry evicted like any other;
// otherwise it is released before New returns. The first lookup of a
// table whose filter and index block did not fit reads them into one
// buffer, dropped once they are in the cache.
//
// Besides the cache, a Reader holds on the Go heap 12 bytes per data block
// (an 8-byte cache slot and, for a mapped file, 4 bytes recording which
// blocks' checksums have been checked) and about 11 KiB more: the Reader
// itself, its pooled lookup buffers, and its smallest and largest keys
// (from the properties, or, for a key the properties leave out, from the
// first or last data block: a copy of the key, whatever its size). A
// memory-mapped table of 50,000 entries in 1,470 blocks measured 29 KiB
// of Go heap per reader after Gets. The per-block arrays, and a
// partitioned table's per-partition state below, are charged to the
// cache (cache.Stats Held and Size) from their first use to Close,
// whenever one of them reaches 4 KiB (512 data blocks of slots, 1,024 of
// flags), as RocksDB charges its block cache for table readers' memory:
// the cache then holds that many bytes fewer of blocks, so the budget
// bounds the cache and the readers' state together. A charge the cache
// cannot take (its shards' blocks all pinned) is left uncounted. A table
// with spans adds, from its first SpanAt or span iterator, 24 bytes per
// fragment value and 4 per fragment (the decoded span block's slices), and
// for a reader without a mapping the span block itself, all charged the
// same way. A version 4 table without a splitter adds, from its first
// Get or Has, 8 bytes per data block (fences: the start of each block's
// first key, recorded as lookups read the blocks, which lets a lookup
// pass over a hash index slot whose tag matches but whose block cannot
// hold the key), charged the same way.
//
// A partitioned table (format.Version3, or Version4 with
// Properties.Partitioned) adds, per partition, 32 bytes of
// handle, its top-level key (kept on the Go heap from the top-level
// index's first load) and an 8-byte cache slot, or for a mapped file a
// 1-byte checked flag; its partitions, of a few KiB each, live in the
// cache like data blocks (read in place when mapped). A lookup that
// misses them reads them through a buffer lent by the cache, or allocated
// when no shard can lend it: PartitionWindow (64 KiB) bytes, or once per
// reader, on its second miss, all the partitions not cached yet, at most
// 1/PartitionPrefetchShare of the cache's capacity. An iterator over a
// ReaderAt that scans across partitions reads them ahead into a buffer
// of its own of at most PartitionReadahead (1 MiB) bytes, reused until
// it is closed.
//
// A memory-mapped reader of a format version 4 table copies the table's
// whole filter (the filter section of a one-level table; the copy in the
// hash index section of a partitioned one) into its cache on its first
// Get or Has (a reader that only scans makes none): 1.25 bytes per key
// at 10 bits per key (1.2 MiB at 1M keys), so that Get, Has and
// MayContain rule an absent key out without pinning the reader or reading
// the mapping. The copy counts against the cache's capacity (cache.Stats
// Held and Size), is never evicted, and is released at Close (or, while
// iterators opened before Close are open, when the last is closed: calls
// in flight at Close still probe it), so the cache's budget bounds it,
// not the Go heap. Its bytes lie in a small mapping of their own (Table.Hold),
// whose pages go back to the kernel at the release and which is unmapped
// once the reader is garbage, so that a cache's Close gives its whole
// address range back at once. When the cache cannot take
// it (a filter larger than one shard, Capacity/16 for caches of 64 MiB and
// more), the reader makes no copy and probes the mapped filter in place.
// Readers without a mapping make no such copy.
//
// A memory-mapped reader admits a compressed data block it decoded to
// the cache while the cache has room; once it is full, only a block
// missed twice within a while (blockcache's ghost window), so that lookups
// spread over tables many times the cache decode one-off blocks into the
// lookup's own buffer rather than churn the cache with them
// (cache.Stats Refused counts those). A reader without a mapping admits
// every block it reads, since a refused block would cost a read again.
//
// A Get or an iterator pins each cached block it reads until it is done
// with it (for an iterator, until it moves to another block or is
// closed), so that eviction never frees a block in use.
package reader
