// Package blockcache implements package cache: a block cache that many table readers share under one
// byte budget, with its memory off the Go heap.
//
// A storage engine keeps hundreds of tables open; a private cache per
// table makes their memory add up with nothing to bound it. One Cache,
// handed to every reader (reader.Options.Cache), bounds the decoded blocks
// of all of them by one number, as Pebble's, RocksDB's and goleveldb's
// shared block caches do.
//
// # Memory
//
// New reserves the whole budget as one anonymous memory mapping
// (golang.org/x/sys/unix.Mmap, MAP_NORESERVE): pages take memory only once
// a block is written to them, the garbage collector never sees them, and
// an evicted block's bytes are reused for the next block, never left to
// the garbage collector. The mapping is split into shards, each with its
// own lock, and each shard into 64-byte chunks (one cache line); a block
// occupies a run of contiguous chunks, so neighbouring blocks of a scan lie
// almost back to back: with 512-byte chunks, which left gaps of up to 511
// bytes between 4 KiB blocks, a warm scan ran 10-20% slower. A segment
// tree over the chunk bitmap (runTree, 8 children to a node) finds a run of free chunks for a
// block in O(log chunks), whatever the capacity and however fragmented
// the shard: scanning the bitmap cost 0.7 µs per insert in a thrashing
// 64 MiB cache of mixed block sizes and 62 µs at 4 GiB
// (BenchmarkInsertThrash). Free chunks anywhere in the shard are used
// before a block is evicted. Stats.Size,
// the bytes of chunks held by blocks, never exceeds Capacity, because
// blocks are only ever placed inside the mapping. A block larger than one shard (Capacity / Shards bytes) is not
// cached: Reserve reports false and the caller serves it from its own
// buffer.
//
// Reserve faults in each 2 MiB range of the mapping on its first use,
// with one call (MADV_POPULATE_WRITE) rather than a page fault per 4 KiB
// as blocks are written: in a VM that traps to its host on every fault,
// 512 faults took 6-7.5 ms and the one call 0.2-0.5 ms. Where the kernel
// can give transparent huge pages, the mapping asks for them only while
// they come cheap enough: the first time a range's fault takes over
// 20 ms (direct compaction), it asks for none from then on, and ranges
// are faulted in as small pages. A huge page a VM's host must back anew
// (4-9 ms measured) is kept: small pages cost that VM about half as
// much to fault in and write first, and every later lookup more.
//
// Besides the budget, a Cache keeps 64 bytes of entry state (one cache
// line) per 2 KiB of capacity (2 MiB for 64 MiB), a chunk bitmap of one
// bit per 64 bytes (128 KiB for 64 MiB) and its run tree, under 6 bytes
// per 4 KiB (92 KiB for 64 MiB): blocks smaller than 2 KiB on average
// are limited by entries rather than bytes. All of it lies in the
// budget's mapping, after the blocks' memory, not on the Go heap (whose
// collector neither scans it nor counts it), and takes pages only as it
// is used: New writes none of it but for the odd end of a shard, so a
// cache costs the same to make whatever its capacity (about 50-100 µs
// with its Close, BenchmarkNew; 3.4 ms at 256 MiB when the entries were
// linked up on the Go heap). An entry holds no pointers: its Table and
// Hold's memory are kept by its shard, on the Go heap, 16 bytes per entry
// used. A Table keeps 8 bytes per block slot.
//
// At 4 GiB that metadata is about 150 MB (and the slots of tables three
// times the cache, 20 MB), far beyond the CPU's caches, and an insert
// into a full cache would wait on memory for each line its eviction
// touches: the victim's entry and the one queued before it, the victim's
// slot (which records its ghost), its bitmap word and run tree
// summaries. Each eviction therefore prefetches those lines for the next
// victim of either queue, so that they arrive while the caller fills its
// block and makes its next lookup. In a thrashing cache of mixed block
// sizes, blocks not written (BenchmarkInsertThrash, write=false, fastest
// of 5 runs on a shared 2-core VM), an insert or lookup costs about 310
// ns at 64 MiB and 630-680 ns at 4 GiB (770-860 ns before the prefetches
// and 64-byte entries). Of the gap, about 200 ns per operation (CPU
// profile) are the lookups' own misses, which no eviction work can hide:
// the slot a Get reads first and, on a hit, the block's entry.
//
// Table.Hold, a reader's copy of its table's whole filter, is counted in
// the budget but lies in a private mapping of its own, a whole number of
// pages: a reader probes that copy
// before it pins itself, so a probe may race the reader's Close and the
// cache's, and read the copy after its Release. The copy's pages go back
// to the kernel at the Release; its mapping, reading as zeros from then
// on, stays until the reader's Table is garbage (runtime.AddCleanup), and
// a probe can always reach the Table through its reader. The cache's own
// mapping is then read by no one after Close, which unmaps it at once:
// when held copies lay in it, Close had to keep the whole range mapped
// for ever, and 50 cycles of a 1 GiB cache, a reader and both Closes
// added 50 GiB of virtual size. Probes pay nothing for it: no atomic, no
// lock.
//
// What Hold and Charge set aside (a reader's filter copy and its state on
// the Go heap) is thus counted in the budget and lies elsewhere, so the
// budget's memory must not hold it a second time: each shard sets aside
// from its top down, one region that blocks never enter, whose pages are
// given back as it grows (MADV_DONTNEED) and never faulted in, and the
// 2 MiB range the region starts inside is asked for small pages (see
// shard.setAside). The budget's memory in use is then at most what its
// blocks take: over 200 readers sharing a 64 MiB cache (bench/cmd/
// manytables), 17.4 MiB of Held, the process's anonymous memory came
// down from 88.8 MiB to 71.1 at the peak.
//
// Close gives all of it back at once: the budget and the metadata are
// unmapped, and the entries, which a Get racing its Table's Close may
// still read, lose their pages, their address range unmapped once the
// Cache is garbage. No closed cache's mapping is kept for a later New
// (until issue 49, up to 1 GiB of them were, their pages freed lazily:
// two closed caches left 265 MB resident).
//
// # Eviction
//
// Each shard evicts with S3-FIFO (Juncheng Yang, Yazhuo Zhang, Ziyue Qiu,
// Yao Yue, Rashmi Vinayak: "FIFO queues are all you need for cache
// eviction", SOSP 2023): a new block enters a small FIFO queue holding
// about 10% of the shard's bytes; a block referenced again before it
// reaches the small queue's tail moves to the main queue, others are
// evicted and remembered as ghosts; a ghost that is inserted again goes
// straight to the main queue; the main queue is a FIFO with reinsertion,
// where a block's access count (0 to 3) buys it another trip round the
// queue. A scan that reads each block once therefore only churns the
// small queue and leaves the blocks that lookups keep using in the main
// queue. Ghosts cost no memory of their own: an evicted block's slot in
// its Table records when it was evicted.
//
// Table.ReserveAdmitted adds an admission filter for callers whose miss
// costs little to repeat (a memory-mapped table's decompression): once a
// shard is full (no run of free chunks for the block, or no free entry,
// as in a shard of small blocks), a block missed for the first time is not inserted at
// all but recorded as a ghost at once, and only a second miss within the
// ghost window admits it, to the main queue. Lookups spread over tables
// many times the cache then mostly decode into their own memory, with no
// insertion and no eviction to pay for, and the blocks in the cache are
// those looked up more than once.
//
// # Pinning
//
// Table.Get and Table.Reserve return a Handle that pins its block by
// reference count until Handle.Release. Eviction never frees a pinned
// block: it skips it. A lookup pins a block with one compare-and-swap on
// the block's entry, taking no lock; it then checks that the entry still
// holds the block it asked for, so a slot read just before the block was
// evicted and its entry reused can never hand out another block's bytes.
// Built with the tag sstable_poison, freed chunks are overwritten with the
// byte 0xDB, so that a read after free shows up as wrong data in tests.
package blockcache
