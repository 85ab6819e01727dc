// Package diskcache keeps the bytes of immutable objects (tables on
// object storage) in a directory on local disk, between a reader's memory
// cache and the bucket, so that a working set larger than memory, and
// everything read before a restart, is served without a request:
//
//	dc, err := diskcache.Open("/var/cache/tables", &diskcache.Options{Capacity: 10 << 30})
//	...
//	r, err := reader.New(dc.ReaderAt(bucket+"/"+name+"@"+version, size, bucketReader), size, opts)
//
// The package depends on nothing else in this module: any io.ReaderAt
// over an immutable object of known size can be cached.
//
// # Chunks
//
// An object is cached in chunks of ChunkSize (64 KiB) bytes, chunk i
// holding the object's bytes [i*ChunkSize, min((i+1)*ChunkSize, size)).
// A ReadAt that needs chunks not on disk reads each run of consecutive
// missing chunks from the source in one ReadAt, so a read of n bytes makes
// at most one source request per run, never one per chunk. The size comes
// from the read pattern of reader.New over an io.ReaderAt: a tail read of
// 256 KiB at open (4 or 5 chunks, one request), a few KiB per data block
// or partition on a lookup (one chunk, two when the block straddles a
// boundary, one request either way), and read-ahead windows of 64 KiB
// growing to 1 MiB on scans (1 to 17 chunks, one request). Smaller chunks
// would cut the bytes a cold lookup fetches but multiply files and index
// entries; larger ones (SlateDB caches 4 MiB parts) make every cold
// lookup fetch megabytes and let a small cache hold only a handful of
// parts: with a Capacity of 8 MiB, 4 MiB parts keep two places of the
// object, 64 KiB chunks keep 128. Pebble's shared cache for remote
// objects caches aligned blocks for the same reason.
//
// # Files
//
// Each chunk is one file, named from a SHA-256 of the object key, the
// object's size and the chunk's index. The file begins with a header that
// repeats the chunk's identity (object key, object size, chunk index,
// data length, chunk size) and a CRC-32C (Castagnoli) of each 1 KiB page
// of the data, followed by a CRC-32C of the header itself; the data
// follows from the next 4 KiB boundary. Every read from disk checks the header against the identity
// asked for and the pages it returns against their CRCs, so a file torn by
// kill -9 or a power loss, flipped, truncated, replaced or deleted is
// never served: the chunk is dropped (its file removed) and read again
// from the source. Checking pages rather than the whole chunk keeps a
// lookup's read from disk to the few KiB it needs. The Cache keeps up to
// Options.MaxOpenFiles chunk files open with their checked headers, so
// that a read from disk is then one pread of the pages it needs, checked
// against the kept page CRCs: damage to a page is still found on every
// read; damage to the header of a file kept open is harmless, as the
// header is not read again.
//
// A chunk is written to a temporary file ("tmp-" prefix) and renamed into
// place, without fsync: the rename keeps partial files out of the index of
// the running process, and the checks on read make a torn or lost file
// after a crash harmless (it fails its check and is fetched again). Open
// removes temporary files left by a crashed process.
//
// # Restarts
//
// Open lists the directory and indexes every chunk file by its name and
// size, without reading them: an Open of a directory of N chunks costs one
// directory listing and N lstat calls, 5-7 µs per file on this project's
// shared machine (BenchmarkOpen: 53-71 ms for 10,000 files), so about
// 0.1 s per GiB of chunks; it then serves every indexed chunk without a
// source request. A damaged file is found by its check at its first read.
// The directory is flat: a cache of hundreds of GiB (millions of files)
// would want a second level of directories, not built.
//
// One directory serves one Cache at a time: Open takes an exclusive flock
// on the file LOCK in it (on Unix systems) and fails with ErrLocked while
// another Cache, in this process or another, holds it.
//
// # Capacity and eviction
//
// Every file is charged its size rounded up to 4 KiB (the usual file
// system block), and a chunk's charge is reserved before its temporary
// file is created, so the charged bytes, temporary files included, never
// exceed Options.Capacity; files in the directory that are not the
// cache's own are charged too and never removed. When a new chunk does
// not fit, chunks are evicted by CLOCK (second chance): a read from disk
// marks its chunk, and the eviction hand passes over marked chunks once,
// clearing the mark, and removes the first unmarked one. The disk cache
// sits below a memory cache that already absorbs the hottest blocks, so
// what reaches it is the next tier of reuse, which recency serves well;
// CLOCK approximates LRU without moving an entry on every hit, and after
// a restart every chunk starts unmarked in directory order.
//
// # Failures
//
// A read returns the source's bytes or the source's error, never other
// bytes. When a chunk cannot be written (a full disk, a directory made
// unwritable after Open, a file size limit), the read is served from the
// bytes fetched, the chunk is not cached, and Stats.WriteErrors counts it;
// the cache keeps serving what it has and fetching what it lacks. A
// failed check of a file on disk is counted in Stats.Dropped. That counts
// only files the running Cache indexed: it keeps no record of its files
// across Close, so a file deleted while the directory had no Cache is
// simply not listed by the next Open, and its chunk is an ordinary miss.
//
// Concurrent reads of many objects from many goroutines are safe; reads
// that miss the same chunk at the same time share one source read.
package diskcache
