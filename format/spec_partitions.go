package format

// Version3 is Version1 with a partitioned index and filter: the
// index block and the filter are cut into partitions of a few KiB,
// each partition's filter stored next to its index, and a small
// top-level index, which the footer's index handle names, leads to the
// partition of a key. Builders write it for tables whose index and
// filter would be large (builder.Options.PartitionThreshold). A table
// built with a hash index is Version2 partitioned the same way: it
// keeps its whole keys and its hash index section, before the
// partitions (HashIndexSize is not 0).
//
// # Partitioned index and filter (version 3)
//
// A version 3 table replaces the filter section and the index block of
// version 1 by partitions and a top-level index, so that a reader of a
// large table on object storage reads, per lookup, one partition of a few
// KiB instead of the whole filter and index (megabytes at millions of
// keys). This is RocksDB's partitioned index and filters (the index type
// kTwoLevelIndexSearch with partition_filters = true; "Partitioned
// Index/Filters" in the RocksDB wiki) and Pebble's two-level index
// (sstable.WriterOptions.IndexBlockSize: an index larger than that is cut
// into partitions under a top-level index), with each partition's
// filter stored next to its index so that one read fetches both:
//
//	offset 0
//	+--------------------------------------------+
//	| data blocks, as in version 1 (2)           |   DataSize bytes
//	+--------------------------------------------+
//	| hash index               | trailer (5)     |   HashIndexSize bytes (only with a hash index)
//	+--------------------------------------------+
//	| filter partition 0       | trailer (5)     |   partition 0
//	| index partition 0        | trailer (5)     |
//	+--------------------------------------------+
//	| ...                                        |
//	+--------------------------------------------+
//	| filter partition P-1     | trailer (5)     |   partition P-1
//	| index partition P-1      | trailer (5)     |
//	+--------------------------------------------+
//	| top-level index          | trailer (5)     |   IndexSize bytes
//	+--------------------------------------------+
//	| span block               | trailer (5)     |   (version 5 only)
//	+--------------------------------------------+
//	| properties               | trailer (5)     |
//	+--------------------------------------------+
//	| footer (64 bytes)                          |
//	+--------------------------------------------+  file size
//
// Partition p covers the consecutive data blocks FirstBlock(p) to
// FirstBlock(p+1)-1 (the last one, to the last data block); P >= 1 and
// every partition covers at least one block. Its index partition has the
// layout of a version 1 index block (restart interval 1; separators and
// handles exactly as there) with one entry per data block it covers, in
// file order, so its entry i is data block FirstBlock(p)+i. Its filter
// partition is the filter policy's encoding (as in a version 1 filter
// section, without the name and padding: the policy is named by property
// tag 12) over exactly the keys of those data blocks. In a table with a
// splitter (tag 20) it holds instead the distinct prefixes of those keys,
// each once: a prefix whose keys run over several partitions is in the
// filter of each of them, so that the filter of a key's partition holds
// the key's prefix. Both are stored raw with a trailer of their own.
//
// The top-level index has the index block layout (restart interval 1)
// with one entry per partition, in file order. The key of partition p's
// entry is the last key of its last data block (not a separator: with a
// splitter, a reader looking for a prefix's first key needs the prefix of
// each partition's last key), so a key k can only be in the first
// partition whose key is >= k; k is in no partition if every key is < k.
// The first key with prefix q is in the first partition whose key's
// prefix is >= q, since prefixes never decrease from key to key; a key
// search for q itself may land earlier, on keys of smaller prefixes that
// sort after q (format.Suffix with a user key that is a proper prefix of
// another). The value is four uvarints:
//
//	+-----------------+--------------------+-------------------+--------------------+
//	| offset uvarint  | filterLen uvarint  | indexLen uvarint  | firstBlock uvarint |
//	+-----------------+--------------------+-------------------+--------------------+
//
// offset is the file offset of the filter partition; filterLen and
// indexLen the stored lengths of the filter and index partitions,
// trailers excluded. The index partition starts at offset + filterLen + 5,
// and the partition ends at offset + filterLen + indexLen + 10, where the
// next one starts: partition 0 at DataSize + HashIndexSize (DataSize
// without a hash index), and the last one ends where the top-level index
// starts. firstBlock is 0 for partition 0 and
// increases strictly, below the data block count. A reader reads a
// partition, both blocks and their trailers, with one read of
// filterLen + indexLen + 10 bytes, and checks both checksums, that both
// are stored raw, and that the index partition has one entry per data
// block it covers, before using it.
//
// The footer's index handle names the top-level index; its filter handle
// spans the partitions: offset DataSize + HashIndexSize, length the
// partitions' total size minus 5, so that, as in every version, the filter handle's end
// (offset + length + 5) is the index handle's offset; the last 5 bytes so
// spanned are the last index partition's trailer. Property tag 9 (index
// size) is the top-level index's size with its trailer, tag 10 (filter
// size) the partitions' total size. A builder cuts a partition after the
// data block whose index entry brings the partition's estimated filter
// and index bytes to its target (16 KiB by default: about 10 KiB of
// filter and 6 KiB of index with 16-byte keys and 10 bits per key), and
// writes version 3 only when the index and filter would exceed its
// threshold (240 KiB by default; the hash index does not count) and the
// filter policy is Bloom; other tables keep version 1 (or 2), byte for
// byte.
//
// A version 3 table with a hash index (property tag 17 present) is a
// version 2 table whose filter and index are partitioned: every data
// block entry is stored whole, as in version 2; the hash index section
// comes right after the data blocks, laid out exactly as in version 2
// (its padding counted from its own offset, DataSize) and covering every
// data block of the table (numBlocks is the data block count, block
// offset i is data block i's offset, the last one DataSize); the
// partitions follow it, laid out and cut as in a version 3 table without
// a hash index, over the table's data blocks. A key (or, with a
// splitter, a prefix) is thus in its partition's filter and has its one
// slot in the hash index: a prefix whose keys run over several
// partitions is in the filter of each, but its slot names its first
// entry only, as in version 2. Which of the two a lookup uses is the reader's
// choice: readers of this package use the hash index of a memory-mapped
// table, as in version 2, and over an io.ReaderAt read only the key's
// partition and data block, so that no lookup reads the hash index
// (megabytes at millions of keys) from object storage. Readers written
// before version 3 tables could carry a hash index refuse such a table
// with an error naming the properties block.
const Version3 uint32 = 3
