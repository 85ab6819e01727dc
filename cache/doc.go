// Package cache is a block cache that many table readers share under one
// byte budget, with its memory off the Go heap.
//
// A storage engine keeps hundreds of tables open; a private cache per
// table makes their memory add up with nothing to bound it. One Cache,
// handed to every reader (reader.Options.Cache), bounds the decoded blocks
// of all of them by one number, as Pebble's, RocksDB's and goleveldb's
// shared block caches do:
//
//	c, err := cache.New(256 << 20)
//	if err != nil { ... }
//	defer c.Close() // after every reader using it is closed
//	r, err := reader.Open(path, &reader.Options{Cache: c})
//
// # Memory
//
// New reserves the whole budget as one anonymous memory mapping
// (MAP_NORESERVE): pages take memory only once a block is written to them,
// the garbage collector never sees them, and an evicted block's bytes are
// reused for the next block. Stats.Size, the bytes held by cached blocks,
// never exceeds Capacity. The budget is split into shards (at most 16, each
// of at least 4 MiB); a block larger than one shard is not cached, and its
// reader serves it from a buffer of its own. If the mapping cannot be made
// (an address-space limit such as ulimit -v), New returns an error rather
// than taking the budget from the Go heap. A capacity below MinCapacity
// (64 bytes; 0 and negative ones too) is an error wrapping ErrTooSmall,
// not a cache that holds nothing.
//
// A mapped reader's copy of its version 4 filter counts against the
// budget (Stats.Held) but lies in a small mapping of its own, which lasts
// until the reader is garbage: a Get racing the reader's Close may still
// probe it, and never the cache's memory. What is held (that copy, and
// the readers' state on the Go heap that the cache is charged for) takes
// none of the budget's memory besides: each shard keeps it in a region
// at its top that blocks never enter and whose pages are given back, so
// that at most Capacity less Stats.Held of the budget is resident (and a
// slack: under 2% of it from 1 MiB up).
//
// Close gives the cache's memory back at once: the budget's mapping is
// unmapped, its pages with it, and so is its metadata but for the
// entries (3% of the capacity), which lose their pages at once and their
// address range once the Cache is garbage (a Get racing its reader's
// Close may still read one). Nothing is kept for a later New.
//
// Besides the budget, a Cache's mapping holds 64 bytes of entry state per
// 2 KiB of capacity (2 MiB for 64 MiB) and a bitmap of one bit per 64
// bytes (128 KiB for 64 MiB) with an index of its free runs (under 6
// bytes per 4 KiB: 92 KiB for 64 MiB), whose pages come as they are
// used; the Go heap holds 16 bytes per entry in use, and each reader 8
// bytes per data block (charged to the budget, Stats.Held).
// Finding room for a block costs O(log capacity), however fragmented the
// cache is.
// Blocks smaller than 2 KiB on average are limited by entries rather than
// bytes.
//
// # Eviction
//
// Each shard evicts with S3-FIFO (Juncheng Yang, Yazhuo Zhang, Ziyue Qiu,
// Yao Yue, Rashmi Vinayak: "FIFO queues are all you need for cache
// eviction", SOSP 2023): a new block enters a small FIFO queue holding
// about 10% of the shard's bytes and moves to the main queue only if it is
// read again before it leaves; the main queue is a FIFO with reinsertion.
// A scan that reads each block once therefore only churns the small queue
// and leaves the blocks that lookups keep using in the main queue.
//
// # Lifetime
//
// A Cache is safe for concurrent use. Close it after every reader opened
// with it is closed: until then Close returns an error wrapping ErrInUse
// and the cache stays usable.
package cache
