// Package rocksdb reads RocksDB's block-based tables, as RocksDB 7.8 to
// 11 writes them (format_version 0 to 7), in pure Go, read-only.
//
// A block-based table is LevelDB's table, grown (RocksDB's table/format.h
// and .cc, table/block_based/, the wiki page "Rocksdb BlockBasedTable
// Format"):
//
//	+---------------------+  data blocks: prefix-compressed entries of
//	| data block 0        |  internal keys, a restart point every 16
//	| ...                 |  (block_restart_interval), the restart array,
//	| data block n-1      |  a u32 footer: restart count, bit 31 set when
//	+---------------------+  a data-block hash index precedes it
//	| filter              |  a full filter (FastLocalBloom, legacy Bloom,
//	|  (or its partitions |  Ribbon), or partitions under an index of
//	|   and their index)  |  their own
//	+---------------------+
//	| index               |  separator -> data block handle: one block,
//	|  (or its partitions |  or partitions under a top-level index;
//	|   and top level)    |  user-key separators, delta-encoded handles
//	+---------------------+
//	| compression dict    |  meta blocks, named in the metaindex:
//	| range deletions     |  rocksdb.compression_dict, rocksdb.range_del,
//	| properties          |  rocksdb.properties, fullfilter.*, ...
//	+---------------------+
//	| metaindex           |  meta block name -> handle (and rocksdb.index
//	+---------------------+  from format_version 6)
//	| footer, 53 bytes    |  checksum type, handles or the footer's own
//	+---------------------+  checksum, format_version, magic number
//
// Every block is followed by a 5-byte trailer: a compression type byte
// and a checksum of the block and that byte, of the type the footer names
// (none, CRC-32C masked as LevelDB's, xxHash32, the low 32 bits of
// xxHash64 or of XXH3), to which format_version 6 and up add a modifier
// from the block's offset. Compression types: none, snappy, zlib (raw
// deflate), bzip2, LZ4, LZ4HC and zstd, from format_version 2 with a
// varint of the decoded size in front, LZ4 and zstd with the table's
// dictionary; xpress and custom compressors (0x80 and up) are refused
// with ErrUnsupported naming them.
//
// Internal keys are the user key then 8 bytes, little-endian seq<<8 |
// kind, ordered by user key (bytewise, or reverse bytewise), then
// sequence number descending. Kinds: value, delete, single delete, merge,
// blob index, wide-column entity, value with a preferred sequence number,
// delete with timestamp; range deletions live in their own block. An
// ingested file's global sequence number
// (rocksdb.external_sst_file.global_seqno) replaces the zeros its
// entries store.
//
// # Reading
//
// OpenTable (mapped) and NewTable (any io.ReaderAt) open a table.
// Table.Get finds a user key's newest version at or below a sequence
// number, after the table's filter; TableIterator walks every version in
// table order, with seeks and bounds; RangeDeletions, Properties (every
// entry of rocksdb.properties, under RocksDB's names), Info and Verify
// (every checksum, key order, the separators, the filter against every
// key) describe and check the table. Table.Level makes the table a merge
// level with RocksDB's sequence-number rules: a key's newest version, a
// point under a newer range deletion of its own table deleted, the
// range deletions hiding older levels; a stack of tables, newest first,
// reads and compacts as one through package merge (MergeOptions).
//
// The table engine (block cache, index search, iterators, Get, the fault
// guard against a file truncated under its mapping) is package
// leveldb's, shared; what differs lives here: the footers, the meta
// blocks, the index encodings, the filters.
//
// # Databases
//
// OpenDB opens a RocksDB database directory read-only, as RocksDB's
// DB::OpenForReadOnly reads it, and writes nothing to it: CURRENT names
// the MANIFEST, whose version edits (db/version_edit.h: column families
// added and dropped, each family's log number, tables, blob files,
// atomic groups) give each column family's live tables; the write-ahead
// logs a family has not flushed are replayed (recyclable records
// included) into an in-memory table read by the same engine. Each
// column family is a stack of merge levels, newest first: the replayed
// logs, each level 0 table, then levels 1 and up; a table's range
// deletions are cut to the key range its MANIFEST entry gives it, as
// RocksDB truncates them. Blob indexes are read from the blob files
// (checked against their CRCs, decompressed as written); merge operands
// through the caller's operator for the column family
// (DBOptions.MergeOperators, or with OptionsMergeOperators the built-in
// one its OPTIONS file names), gathered from the newest visible version
// down as RocksDB's merge helper does; without one, ErrUnresolved. A
// damaged log is read as RocksDB's default recovery mode reads it
// (point-in-time: the replay ends at the first bad record); a damaged
// MANIFEST is an error, but for a torn last record, which ends it. A
// database a RocksDB process holds is refused (ErrLocked), and a LevelDB
// directory is named as such (ErrLevelDB).
//
// # What a table alone cannot give
//
// A merge operand needs the database's merge operator and the key's
// older versions, a blob index the blob file: Table.Get returns such a
// version with an *UnresolvedError, and a level stops on it with the same
// error, rather than show the stored bytes as the key's value. A
// wide-column entity reads as its default column's value
// (DefaultColumn). A comparator other than bytewise and reverse
// bytewise, user-defined timestamps among them, is refused
// (ErrUnsupported); a reverse bytewise table iterates in its own order
// and cannot be a merge level. A filter this package does not know is
// skipped: the table is read without it.
//
// # Errors
//
// Damaged bytes give an error wrapping format.ErrCorrupt, a
// *format.CorruptError naming the file, the section and the byte offset;
// a file without a block-based table's magic number wraps ErrNotTable
// too. Nothing read from a file makes the package panic, and every block
// is checked against its checksum before use, so damage reads as an
// error, not as other entries (a table written with checksum type none
// has nothing to check it against).
package rocksdb
