// Package leveldb reads LevelDB's tables and whole LevelDB databases, as
// written by LevelDB (1.x, the C++ library) and goleveldb, read-only.
//
// # Tables
//
// OpenTable (a file, memory-mapped) and NewTable (any io.ReaderAt) open
// one table. A LevelDB table (LevelDB's doc/table_format.md) shares this
// module's version 1 block layer, and differs in what surrounds it:
//
//	+-------------------+  data blocks: prefix-compressed entries, a restart
//	| data block 0      |  point every 16 entries, then the restart array;
//	| ...               |  each block followed by its 5-byte trailer (type
//	| data block n-1    |  byte: 0 raw, 1 snappy; masked CRC-32C)
//	+-------------------+
//	| filter block      |  one filter per 2 KiB of data-block start offsets
//	+-------------------+  (base lg 11), always raw
//	| metaindex block   |  "filter.<policy name>" -> filter block handle
//	+-------------------+
//	| index block       |  separator key -> data block handle, restart
//	+-------------------+  interval 1
//	| footer, 48 bytes  |  metaindex handle, index handle (uvarint pairs),
//	+-------------------+  zero padding to 40 bytes, magic 0xdb4775248b80fb57
//
// The footer has no checksum and no version; every block has its trailer,
// and every block read is checked against it. LevelDB 1.23 snappy-
// compresses any block whose compressed form saves 12.5% (index and
// metaindex blocks included), goleveldb every block but the filter block;
// both are read. Mojang's fork of LevelDB, which stores Minecraft Bedrock
// Edition's worlds, adds two block types, also read: 2, a zlib stream,
// and 4, raw deflate (Bedrock's default); its trailers' checksums are
// LevelDB's (CompressionZlib, CompressionZlibRaw).
//
// Keys are internal keys: the user key followed by 8 bytes, little-endian
// seq<<8 | kind, where seq is the write's sequence number (up to 2^56-1)
// and kind is KindValue (1) or KindDeletion (0). They sort by user key
// ascending (bytes.Compare, LevelDB's leveldb.BytewiseComparator), then by
// sequence number descending, so that a user key's newest version comes
// first. A table may hold several versions of one user key.
//
// A table written by LevelDB's TableBuilder directly, outside a database
// (LevelDB's own table tests, golang/leveldb's test tables), holds plain
// keys instead: the keys it was given, with no trailer. OpenTable detects
// such a table from its index (KeyForm: a separator shorter than a
// trailer, or separators in bytewise but not internal key order; a table
// of internal keys is never taken for one) and reads each key as a value
// at sequence number 0; TableOptions.Keys chooses instead. OpenDB reads
// its tables as internal keys.
//
// The filter block is consulted by Table.Get when its policy is LevelDB's
// built-in bloom filter, which LevelDB names
// "filter.leveldb.BuiltinBloomFilter2" and goleveldb
// "filter.leveldb.BuiltinBloomFilter" (the bits are the same:
// filterblock.LevelDBBloom). Filters are built over user keys. A table
// with another filter, or none (such as Pebble's TableFormatLevelDB
// tables, whose whole-table filter LevelDB ignores too), is read without
// one.
//
// # Databases
//
// OpenDB opens a database directory read-only and gives its live view:
// CURRENT names the MANIFEST, a log (LevelDB's doc/log_format.md) of
// version edits (db/version_edit.cc) naming each level's live tables, the
// comparator and the last sequence number; the write-ahead logs the
// MANIFEST has not yet seen flushed are replayed into a memory level, the
// newest. The view is a stack of merge levels, newest first: the replayed
// logs, then level 0's tables (which overlap) one level each, newest
// file number first, then levels 1 to 6, each a run of non-overlapping
// tables. merge.NewIterator, merge.Get and merge.Compact read it, with
// DB.MergeOptions telling deletions apart; DB.NewIterator and DB.Get are
// the shortcuts. Each user key reads as its newest version, and a key
// whose newest version is a deletion is absent, as LevelDB's own
// iterator and Get at the latest sequence number show it.
//
// A database that a LevelDB or goleveldb process has open is refused
// (ErrLocked): such a process deletes tables as it compacts, so no
// consistent view could be read from under it. While a DB is open, it
// holds a shared lock on the directory's LOCK file, both the fcntl lock
// LevelDB takes and the flock goleveldb takes, so neither can open the
// database for writing until Close. A comparator other than
// leveldb.BytewiseComparator is refused (ErrComparator).
//
// # Iterators
//
// The names follow one rule: a table or a level makes its iterator with
// NewIter(opts), as reader.Reader.NewIter and merge.Level's NewIter do
// (Table.NewIter; DB.Levels' NewIter); a database makes its view's with
// NewIterator(opts), as LevelDB's DB::NewIterator (DB.NewIterator, a
// merge.Iterator). No other names are given for them. Every iterator
// copies the bounds it is given (IterOptions, SetBounds), as reader's and
// merge's do: the caller may reuse its slices at once. An iterator is
// closed before what made it; after its table's or database's Close, its
// moves return false with an error wrapping ErrClosed, and so do the
// DB's Get and Verify and the levels' methods.
//
// # Scans
//
// A scan reads and decodes its blocks on its own goroutine.
// Options.ReadAhead (TableOptions.ReadAhead for a single table) turns on
// a read-ahead: a forward scan that has moved from one data block to the
// next twice in a row has the table's next blocks (up to 16, 64 KiB of
// buffers per table iterator) read ahead of it on another goroutine,
// their checksums, their snappy decoding and the first touch of the
// file's pages done on a second CPU while the scan reads the current
// block, as RocksDB's asynchronous prefetching of a scan does. It buys
// wall time with a second core's CPU time: each entry takes less time
// where that core is idle, but more CPU time in all (a goroutine started
// every few blocks, each block handed over between cores: 1.3-1.6x the
// CPU time per entry in bench/cmd/leveldb), so a process running many
// scans at once, or one with a single core, reads fewer entries per
// second with it. Hence it is off by default, and stays off with
// GOMAXPROCS 1. The
// worker exits once it has caught up with the scan, so an iterator left
// unclosed leaves no goroutine running; Close and seeks stop it and wait
// for it. A block it cannot read (a checksum that fails) is left to the
// scan, which reports the error as it would have.
//
// # Errors
//
// Damaged bytes give an error wrapping format.ErrCorrupt, a
// *format.CorruptError naming the table file, the section ("footer",
// "index block", "metaindex block", "filter block", "data block") and the
// byte offset; damage in a MANIFEST or log names that file and offset the
// same way. Nothing read from a file can make the package panic or
// return a wrong value. One case reads as LevelDB reads it: a record cut
// short at the very end of the MANIFEST or of a log (fragmented over
// blocks or not), the mark of a write torn by a crash, ends that file,
// and the view is the one before the torn write. Other damage in a
// write-ahead log is an error, as it is for LevelDB with paranoid_checks;
// Options.SkipLogDamage skips it instead, as LevelDB 1.23 does by
// default (DB.LogDamage says what was skipped). A MANIFEST whose edits
// lack the log number, the next file number or the last sequence number
// is corrupt, and so is one that names a table missing from the
// directory, as is a directory lacking the MANIFEST that CURRENT names
// (both errors also wrap os.ErrNotExist, which alone means a directory
// holding no database).
package leveldb
