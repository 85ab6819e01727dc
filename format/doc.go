// Package format specifies table formats 1 to 5, byte for byte, and holds
// what a user of the builder and reader needs of them: the version and
// compression constants, Properties, BlockHandle, Splitter, and the
// corruption errors every decoder returns (ErrCorrupt, CorruptError).
// The codec that reads and writes these bytes is internal to the module;
// this documentation is its specification, enough to write another
// implementation from. Version 2 is version 1
// plus a hash index section. Version 3 is version 1, or version 2 when
// the table has a hash index, with the filter and index block cut into
// partitions under a top-level index, for tables whose index and filter
// would exceed a threshold (240 KiB by default: more than fits the 256
// KiB tail a reader over an io.ReaderAt reads on open). Version 4, what
// builders write by default, is version 2 or partitioned version 3 with a
// compact hash index, over data blocks whose entries share prefixes with
// their block's first key ("Version 4" below). Version 5 is version 4 with
// a span block (range deletions or range keys, fragmented), written
// exactly when a table has spans ("Span block (version 5)" below).
// Builders write versions 1 to 3 when asked for them; readers read all
// five.
//
// # Conventions
//
// Fixed-width integers are little-endian. A uvarint is the unsigned
// base-128 varint of encoding/binary (at most 10 bytes). Nothing is stored
// in native byte order or with a platform-dependent size. Keys are ordered
// by bytes.Compare.
//
// # File
//
// A table is a sequence of sections, each immediately after the previous
// one, so every byte belongs to exactly one section:
//
//	offset 0
//	+--------------------------+
//	| data block 0  | trailer  |   data section: DataSize bytes
//	| data block 1  | trailer  |
//	| ...                      |
//	+--------------------------+
//	| hash index    | trailer  |   HashIndexSize bytes (only with a hash index)
//	+--------------------------+
//	| filter section | trailer |   FilterSize bytes
//	+--------------------------+
//	| index block   | trailer  |   IndexSize bytes
//	+--------------------------+
//	| span block    | trailer  |   SpanBlockSize bytes (version 5 only)
//	+--------------------------+
//	| properties    | trailer  |
//	+--------------------------+
//	| footer (64 bytes)        |
//	+--------------------------+  file size
//
// Every block and section is followed by a trailer carrying its checksum,
// and the footer carries its own, so every byte of the file is covered by
// some CRC-32C; the magic number is checked by value.
//
// # Block trailer
//
// Each stored block is followed by 5 bytes:
//
//	+------+----------------------+
//	| type | masked CRC-32C (LE)  |
//	+------+----------------------+
//	 1 byte        4 bytes
//
// type is 0 for raw bytes, 1 for snappy (the block format of
// github.com/golang/snappy), 2 for zstd (as in LevelDB), 3 for MinLZ and
// 4 for zstd with the table's dictionary (both below). The CRC is CRC-32C (Castagnoli) of the stored
// bytes followed by the type byte, masked as LevelDB does:
// ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2^32). A block handle
// (offset, length) gives the stored bytes only; the trailer follows at
// offset+length. Data blocks are snappy-compressed by default, or
// zstd-compressed when the builder is asked to, and stored raw when
// compression saves less than 12.5%. The hash index, filter
// section, index block, span block and properties block are always stored raw, so a
// memory-mapped reader uses them in place.
//
// A zstd block is exactly one Zstandard frame (RFC 8878) whose header
// records the frame content size (single-segment frames always do); a
// writer omits the frame checksum, which the trailer's CRC makes
// redundant. A reader takes the content size as the decoded length,
// refuses a frame without one, checks it against the largest-block
// property (tag 16) before decoding, and never decodes past it, so a frame
// claiming or producing more ("a zstd bomb") is a corruption, as is one
// decoding to fewer bytes than it claims. Readers of this package bound
// tag 16 by 22·DataSize+16 (snappy's worst expansion), so a writer stores
// a zstd block that would decode to more than 22 times its stored size
// plus 16 bytes as snappy instead (only extremely repetitive blocks
// compress that well). The zstd level is a writer's choice and is not
// recorded.
//
// A MinLZ block (type 3; data blocks of tables with compression 4, tag
// 11) is one block in the block format of github.com/minio/minlz
// (its SPEC.md, version 1.0): a 0 byte, the decoded length as a uvarint
// (at most 8 MiB), then MinLZ's literal and copy elements; a decoded
// length of 0 means the rest of the block is literals, which are the
// contents. A first byte other than 0 (which minlz's own decoder takes
// for a snappy or S2 block) is a corruption, as is a block decoding to
// other than its decoded length. A reader checks the decoded length
// against tag 16 before decoding, as for zstd: MinLZ's own expansion is
// not bounded usefully (one 4-byte repeat element copies up to 2^24+29
// bytes, so a block's decoded length is bounded only by MinLZ's 8 MiB
// and the table's tag 16), so a writer stores a block whose MinLZ
// encoding would decode to more than 22·stored+16 bytes, or a block of
// more than 8 MiB, as snappy instead, keeping tag 16 within the bound
// above. Writers store MinLZ blocks only when they save at least 12.5%,
// as for the other codecs, so literal-only blocks appear only from other
// writers. The MinLZ level is a writer's choice and is not recorded.
//
// A zstd dictionary block (type 4) is one Zstandard frame as for type 2,
// whose frame header names (Dictionary_ID, RFC 8878 section 3.1.1.1.3)
// the table's dictionary, property tag 28, and which decodes with it.
// The dictionary is a Zstandard dictionary as RFC 8878 section 5
// defines it: magic number 0xEC30A437 (LE), a non-zero 4-byte
// Dictionary_ID (LE), the entropy tables (Huffman literals table, FSE
// offset, match length and literal length tables), three repeat
// offsets (4 bytes LE each), then the content, the history each frame
// is decoded after. Writers of this package give it ID 32768 and train
// it (github.com/klauspost/compress/dict, BuildZstdDict) from the
// decoded contents of the table's first data blocks, up to 100 times the
// requested content size; its content is at most the requested size,
// and the tables come on top. A table with a dictionary may hold type 2
// blocks too (writers of this package store blocks over 32 KiB so). A type 4 block in a table without tag 28,
// a frame naming another ID (or none), and a tag 28 that does not parse
// as a dictionary are corruptions. The decoded length is the frame
// content size, bounded by tag 16 exactly as for type 2, and the writer
// falls back to snappy as for type 2. Only data blocks use types 3 and
// 4. A table with a dictionary, or with MinLZ blocks, keeps its format
// version (any of 1 to 5): readers before types 3 and 4 skip tag 28 and report
// a type 3 or 4 block as an unknown compression type, a corruption,
// never a wrong value; readers before compression 4 report tag 11 = 4 as
// corrupt at open.
//
// # Data block
//
// A data block holds entries in increasing key order, at least one.
// Each key is prefix-compressed against the previous key (shared is the
// length of their longest common prefix); every RestartInterval-th entry
// (property tag 15: 16 by default, 32 in version 4), the first included,
// is a restart point, stored with shared = 0, whose offset goes in the
// restart array:
//
//	entry:
//	+----------------+------------------+-----------------+-------------------+-------+
//	| shared uvarint | unshared uvarint | valueLen uvarint| key[shared:] bytes| value |
//	+----------------+------------------+-----------------+-------------------+-------+
//
//	block:
//	+---------+---------+-----+---------------------+---------------------+---------------+
//	| entry 0 | entry 1 | ... | restart[0] uint32LE | ... restart[n-1]    | n uint32LE    |
//	+---------+---------+-----+---------------------+---------------------+---------------+
//
// restart[0] is 0. A block with no entries (only the index block of an
// empty table) has n = 0 and is just the 4-byte count. A builder cuts a
// block once its encoded size reaches the target block size (4096 bytes
// by default), so an entry larger than the target simply makes a larger
// block. Lookups binary-search the restart points,
// whose keys are stored whole, then scan at most one restart interval.
//
// In a table with a hash index (version 2, or version 3 with property tag
// 17) every entry has shared = 0 (keys are stored whole, as at a restart
// point), so an entry can be decoded from its own offset; restart points
// and the restart array are kept as in version 1.
//
// # Index block
//
// The index block has the data block layout with a restart interval of 1,
// one entry per data block, in file order. The key is a separator k with
//
//	last key of block i <= k < first key of block i+1
//
// shortened as LevelDB's FindShortestSeparator does, with
// one exception for long keys: where LevelDB keeps the last key whole (its
// byte after the common prefix is one below the next key's), a last key of
// more than 64 bytes is cut after its first byte past
// that one that is not 0xff, incremented, unless that byte is its last
// (the key is then kept whole). The last block's key is shortened
// as FindShortSuccessor does. So an index key is at most a
// few bytes longer than the common prefix of the keys it separates (for the
// last block, than the 0xff bytes the last key starts with), whatever their
// length, except after a key whose tail is all 0xff bytes. Readers rely only
// on the inequality above: how a writer shortens is its choice. The value is
// the data block's handle:
//
//	+-----------------+-----------------+
//	| offset uvarint  | length uvarint  |
//	+-----------------+-----------------+
//
// Because every index entry is a restart point, entry i is found by a
// binary search without decoding the block into memory, and i numbers the
// data block.
//
// # Filter section
//
// One filter covers every key of the table:
//
//	+------------------+-------------+-----------------+--------------+
//	| nameLen uvarint  | name bytes  | zero padding    | filter bytes |
//	+------------------+-------------+-----------------+--------------+
//
// name is the filter policy's name (for the default policy,
// "sstkit.CacheLocalBloom.xxh64"). The padding, 0 to 63 zero bytes, makes
// the filter start at a file offset that is a multiple of 64, so each
// 64-byte line of the default filter sits in one cache line of a mapped
// file. The filter's encoding belongs to the policy and is specified in
// package filterblock (the binary fuse filter "sstkit.BinaryFuse8.xxh64"
// is a 16-byte header then one fingerprint byte per slot); the default
// one is:
//
//	+---------------------------------+--------+
//	| L lines of 64 bytes (512 bits)  | k byte |
//	+---------------------------------+--------+
//
// # Hash index section (version 2, and version 3 with a hash index)
//
// The hash index maps every key to its entry, so a point lookup reads one
// slot and one entry instead of searching the index block and a data
// block. It is laid out the same way in both versions (and, with the
// changes "Version 4" below gives, in version 4), and in a version 3
// table too it covers the whole table: its slots and block offsets name
// the table's data blocks by their numbers in the file, whatever
// partition's index holds them:
//
//	 0       1           2            3       4                 8                16
//	+-------+-----------+------------+-------+-----------------+----------------+
//	| width | blockBits | offsetBits | flags | numBlocks u32LE | numSlots u64LE |
//	+-------+-----------+------------+-------+-----------------+----------------+
//	| zero padding                                                             |
//	+--------------------------------------------------------------------------+
//	| numSlots slots of width bytes (unsigned, little-endian)                  |
//	+--------------------------------------------------------------------------+
//	| numBlocks+1 block offsets, u64LE (u32LE with flags bit 4, version 4)     |
//	+--------------------------------------------------------------------------+
//	| numBlocks+1 decoded starts, u64LE (only with flags bit 1)                |
//	+--------------------------------------------------------------------------+
//
// width is 4 to 8. flags bit 0 (value 1, file offsets) says slots hold
// entries' file offsets (the block's file offset plus the entry's offset
// in it); bit 1 (value 2, decoded offsets) says they hold entries' offsets
// in the concatenation of all decoded data blocks, whose starts follow the
// block offsets (0 first, increasing by at least the 4-byte restart count,
// the total decoded size last); with neither, offsets are in the decoded
// block. At most one of the two is set. Bits 2 to 4 (values 4, 8 and 16)
// are version 4's ("Version 4" below) and 0 in versions 2 and 3; bits 5
// to 7 are always 0. The padding, 0 to 63 zero bytes, makes the slots
// start at a file offset that is a multiple of 64, so its length follows
// from the section's offset. numBlocks equals the data block count. Block offset i
// is the file offset of data block i; the last one is DataSize. Block i's
// handle is (offset i, offset i+1 - offset i - 5), so the offsets start at
// 0 and increase by at least the 5-byte trailer.
//
// A slot of value v holds three fields, from the low bits up:
//
//	offset = v & (2^offsetBits - 1)                  entry offset in the decoded block, or in the file
//	block  = (v >> offsetBits) & (2^blockBits - 1)   data block number + 1; 0 marks an empty slot
//	tag    = v >> (offsetBits + blockBits)           tagBits = 8·width - blockBits - offsetBits
//
// Slots are placed by linear probing. For a key, h = XXH64(key, seed 0)
// and m is h put through the SplitMix64 finaliser:
//
//	m = (h ^ h>>30) · 0xbf58476d1ce4e5b9
//	m = (m ^ m>>27) · 0x94d049bb133111eb
//	m = m ^ m>>31                                    (all mod 2^64)
//
// The key's home slot is the high 64 bits of the 128-bit product
// m · numSlots (Lemire's multiply-shift range reduction), and its tag is
// m & (2^tagBits - 1). A lookup reads slots home, home+1, ... (wrapping to
// 0 after numSlots-1) until an empty slot; each slot with the key's tag
// names an entry whose key is compared with the one sought. The writer
// uses numSlots = n + n/2 + 1 for n entries (n distinct prefixes with a
// splitter, tag 20; load at most 2/3, at least one empty slot), blockBits
// = bit length of numBlocks (0 for a table without data blocks), and the
// smallest width from 4 to 8 bytes leaving at least 8 tag bits (8 if none
// does). It sets the file-offsets flag when every data block is stored
// raw and blockBits + bit length of DataSize + 8 <= 64; otherwise, when
// some data block is compressed, the decoded-offsets flag if blockBits +
// bit length of the total decoded size + 8 <= 64; else neither. With the
// file-offsets flag offsetBits is the bit length of DataSize, with the
// decoded-offsets flag that of the total decoded size, and with neither
// that of the largest offset, in its decoded block, of an entry with a
// slot. A reader then goes from the slot's value straight to the entry, in
// the mapped file for raw blocks, or, subtracting the block's decoded
// start, in its cached decoded block.
//
// A reader trusts a slot only as far as its checksum: a slot crafted to
// point into the middle of a value whose bytes happen to encode an entry
// would be believed by Get. Verify walks every entry and checks that the
// hash index leads to each at its exact offset and to nothing else.
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
//
// # Version 4
//
// Version 4 is what builders write by default. It is version 2 (one-level:
// data blocks, hash index section, filter section, index block) or, past
// the partition threshold, version 3 with a hash index (data blocks, hash
// index section, partitions, top-level index), with three changes that
// make the hash index cost about 4.6 bytes per entry instead of 10 to 12,
// and cost version 1's file no whole keys:
//
// 1. Data blocks. Every entry that is not a restart point is
// prefix-compressed against the block's first key (entry 0, always a
// restart point and stored whole), not against the previous entry: shared
// is the length of the longest common prefix of the entry's key and the
// first key. Keys are sorted, so that prefix is never longer than the
// one the entry shares with its predecessor, whose first shared bytes
// equal the first key's: a version 4 block is a valid version 1 block
// and is read as one (iterators, restart points and the restart array are
// unchanged). A reader given an entry's offset decodes its key as the
// first key's first shared bytes followed by the entry's unshared bytes,
// with no other entry read: the first entry's header starts at offset 0.
//
// 2. Hash index section. Laid out as in version 2, with flags bit 2
// (value 4, first key) set and bits 0 and 1 clear: a slot's offset field
// is the entry's offset in its decoded block, and offsetBits the bit
// length of the largest such offset of an entry with a slot. Flags bit 4
// (value 16, narrow offsets) is set when DataSize is below 2^32, and then
// each block offset is 4 bytes, u32LE, instead of 8 (u64LE, bit 4 clear,
// for larger tables). The writer uses numSlots = n + n/9 + 1 for n
// entries (or distinct prefixes; load at most 0.9: a successful probe
// reads about 5.5 slots, within one or two cache lines; an unsuccessful
// one about 50), and the smallest width from 4 to 8 bytes leaving at
// least 5 tag bits: 4-byte slots while the block number and the offset in
// a block fit in 27 bits (up to about 2M entries in 4 KiB blocks), 5
// bytes or more beyond. The decoded-starts table is never present.
//
// 3. Whole filter. In a partitioned version 4 table (property tag 22
// present) the hash index section also has flags bit 3 set, and after the
// block offsets, to the end of the section, holds the filter of the
// table's every key (or, with a splitter, distinct prefix), under the
// table's filter policy (tag 12), encoded as a filter partition is. The
// partitions keep their own filters. The section is then:
//
//	+---------------------------------------------------------+
//	| header (16 bytes), flags = 4 | 8 | 16 (28)              |
//	+---------------------------------------------------------+
//	| zero padding                                            |
//	+---------------------------------------------------------+
//	| numSlots slots of width bytes                           |
//	+---------------------------------------------------------+
//	| numBlocks+1 block offsets, u32LE                        |
//	+---------------------------------------------------------+
//	| whole filter: at least 1 byte, to the section's end     |
//	+---------------------------------------------------------+
//
// (flags = 4 | 8 and u64LE block offsets when DataSize is 2^32 or more).
// A one-level version 4 table has flags = 4 | 16 (20), or 4 from 2^32
// bytes of data blocks, and no filter after the block offsets: its
// filter section is already whole.
//
// Property tag 22 (partitioned, value 1) marks a partitioned version 4 (or 5)
// table; it appears in no other table. Its footer, top-level index,
// partitions and property tags 9 and 10 are exactly those of a version 3
// table with a hash index. The footer and properties record version 4
// either way, and every version 4 table has a hash index section (tag
// 17). Why two filters: a memory-mapped reader probes the whole one
// (readers of this package copy it to the heap on their first Get, so that an absent
// key costs a hash and one cache line), while a reader over an
// io.ReaderAt reads one partition, filter and index together, and never
// the hash index section, keeping a cold lookup of a large table on
// object storage within a few KiB and three reads. The whole filter costs
// 1.25 bytes per key at 10 bits per key.
//
// Readers before version 4 refuse a version 4 table by its footer
// ("unsupported format version 4"). Builders still write versions 1, 2
// and 3 byte for byte when asked for them (builder.Options.FormatVersion,
// or HashIndex).
//
// # Span block (version 5)
//
// A span is a key range [start, end), start < end in bytes.Compare
// order, with a value the writer gives it meaning: a range deletion's
// sequence number, a range key's suffix and value. Keys and values are
// opaque, as point entries are. A table stores its spans fragmented, as
// Pebble's keyspan.Fragmenter does: the fragments are sorted, do not
// overlap, cover exactly the union of the spans, and each lists the
// values of every span covering it, in the order the writer added the
// spans; every fragment bound is some span's start or end. So the spans
// covering a key are those listed by the one fragment holding it, found
// by one binary search. Fragments are not merged: two touching fragments
// may list the same values.
//
// A version 5 table is a version 4 table (one-level or partitioned),
// byte for byte as a builder writes it, with the span block inserted
// after the index block (in a partitioned table, after the top-level
// index) and before the properties block, followed by its block trailer
// (type 0: stored raw, like every metadata block; CRC-32C as every
// block). The footer's index handle still names the index block (the
// top-level index), and its properties handle the properties block: the
// span block occupies exactly the bytes between them, [index end,
// properties offset), where index end = index offset + index length + 5,
// and property tag 23 gives its size with the trailer, which must equal
// properties offset - index end. The span block's contents are:
//
//	+-------------------+-----+---------------------+---------------+-----+-----------------+---------+
//	| fragment record 0 | ... | fragment record n-1 | index entry 0 | ... | index entry n-1 | n u32LE |
//	+-------------------+-----+---------------------+---------------+-----+-----------------+---------+
//
//	fragment record:
//	+------------------+-------+----------------+-----+----------------+------------------------------------------+
//	| startLen uvarint | start | endLen uvarint | end | count uvarint  | count × (valueLen uvarint | value bytes) |
//	+------------------+-------+----------------+-----+----------------+------------------------------------------+
//
//	index entry (12 bytes):
//	+------------------+----------------------------------------------+
//	| offset u32LE     | prefix: start's first 8 bytes, zero-padded   |
//	+------------------+----------------------------------------------+
//
// n, the fragment count, is at least 1 and equals property tag 25. Index
// entry i's offset is the offset of fragment record i from the start of
// the block's contents: entry 0's offset is 0, each record ends exactly
// where the next begins, and the last ends where index entry 0 begins
// (12·n + 4 bytes before the end of the contents). Its prefix is the
// first 8 bytes of fragment i's start key, followed by zero bytes when
// the key is shorter (so the 8 prefix bytes, read as a big-endian
// integer, order the start keys, up to ties, without reading the
// records). Every uvarint is in its shortest encoding, so a block has
// exactly one encoding. For every fragment start < end and count >= 1;
// the fragments are in increasing order and do not overlap: end of
// fragment i <= start of fragment i+1. Values may be empty. A reader
// finds the fragment covering key k by binary search over the index
// entries for the last fragment whose start is <= k, comparing k's
// zero-padded 8-byte prefix with the entries' and reading a start key in
// its record only when the prefixes tie, and then checks k < end; it
// never decodes the block into memory. The offsets are 4 bytes, so a span
// block's contents are less than 4 GiB; a writer refuses more.
//
// A table without spans is version 4 and has no span block, tag 23 to
// 27: byte for byte what it was before version 5. A table with spans is
// always version 5. Readers before version 5 refuse it by its footer
// ("unsupported format version 5"), so no reader misreads a table whose
// range deletions it would not see. Builders write version 5 only on the
// version 4 layout: spans with format version 1, 2 or 3 are an error.
//
// Property tags 23 to 27 (version 5 only, all present in it, none in
// other versions, except as below): tag 23 the span block's size (bytes,
// trailer included), tag 24 the number of spans the writer added (the
// spans before fragmentation, at least 1), tag 25 the number of
// fragments, tag 26 the first fragment's start (the smallest key any span
// covers) and tag 27 the last fragment's end (exclusive: every spanned
// key is below it). As for tags 4 and 5, a bound of more than 1024 bytes
// (MaxPropertiesKeyLen) is left out, tag 26 or 27 then absent with no
// length record: a reader takes it from the span block's first or last
// record. Tags 4 and 5 (and 18, 19, the entry count) stay those of the
// point entries; a table's keys and spans together lie between
// min(tag 4, tag 26) and max(tag 5, tag 27), the latter exclusive when
// it is tag 27's.
//
// # Properties block
//
// A sequence of records in strictly increasing tag order; readers skip tags
// they do not know, so properties can be added without a version change:
//
//	+-------------+----------------+--------------+
//	| tag uvarint | length uvarint | value bytes  |
//	+-------------+----------------+--------------+
//
// Integer values are a single uvarint filling the value; strings and keys
// are raw bytes. The tags of format version 1:
//
//	tag 1:  format version
//	tag 2:  entry count
//	tag 3:  data block count
//	tag 4:  smallest key
//	tag 5:  largest key
//	tag 6:  raw key bytes
//	tag 7:  raw value bytes
//	tag 8:  data size (bytes, trailers included)
//	tag 9:  index size (bytes, trailer included)
//	tag 10: filter size (bytes, trailer included)
//	tag 11: compression (1 none, 2 snappy, 3 zstd, 4 minlz)
//	tag 12: filter policy name
//	tag 13: filter bits per key, in 1/1000 bits (0 for a policy not sized so: BinaryFuse8)
//	tag 14: target block size (bytes)
//	tag 15: restart interval (entries)
//	tag 16: largest decoded data block (bytes)
//	tag 17: hash index size (bytes, trailer included; tables with a hash index only)
//	tag 18: smallest key's length, instead of tag 4 for a key of more than 1024 bytes
//	tag 19: largest key's length, instead of tag 5 for a key of more than 1024 bytes
//	tag 20: splitter name (1 to 255 bytes; tables built with a Splitter only)
//	tag 21: user properties (tables with at least one only)
//	tag 22: partitioned (value 1; partitioned version 4 and 5 tables only)
//	tag 23: span block size (bytes, trailer included; version 5 only)
//	tag 24: span count (spans added; version 5 only)
//	tag 25: span fragment count (version 5 only)
//	tag 26: smallest span key, the first fragment's start (version 5, unless more than 1024 bytes)
//	tag 27: largest span key, the last fragment's end, exclusive (version 5, unless more than 1024 bytes)
//	tag 28: zstd dictionary (the dictionary's bytes; tables with one only)
//
// When the entry count is non-zero, exactly one of tags 4 and 18 is present,
// and one of tags 5 and 19; otherwise none of them. A writer stores the
// smallest and largest keys whole (tags 4 and 5) when they have at most 1024
// bytes (MaxPropertiesKeyLen), and otherwise records only the length (tags 18
// and 19, a uvarint above 1024): the key is the table's first (last) entry's,
// stored once, in its data block, and a reader that wants it reads it from
// there. Writers before tags 18 and 19 stored every key whole, which readers
// still accept; readers before them report a table with tag 18 or 19 and
// without tag 4 or 5 as corrupt. Tag
// 16 bounds the size a reader will decompress a data block to. Tag 17 is
// present exactly in version 2 tables, in version 3 tables built with
// a hash index and in every version 4 table, where the data size plus the
// hash index size is the offset of the filter section (in a partitioned
// table, of the first partition, the footer's filter handle's offset); in
// version 1, and version 3 without a hash index, the data size is that
// offset.
//
// Tags 20 and 21 are written only when present, so tables without a
// splitter or user properties are byte for byte as before. Tag 20 names
// the Splitter the table's keys were split with (the built-in Suffix(n)
// is "sstkit.Suffix(n)", n in decimal: a key's prefix is all but its last
// n bytes, and a key shorter than n bytes is its own prefix). In such a
// table the filter holds each distinct prefix key[:Split(key)] once,
// instead of each key, and the hash index (versions 2 to 4) maps each
// distinct prefix (hashed as a key is) to the table's first entry with
// that prefix, so it has one occupied slot per distinct prefix.
// Consecutive keys never have decreasing prefixes, so the keys of a
// prefix are contiguous. A reader that does
// not know the splitter must neither probe the filter with whole keys nor
// look whole keys up in the hash index; readers of this package then read
// the table as if it had no filter and no hash index. (Readers written
// before tag 20 existed skip it and would do both: they see false
// negatives.)
//
// Tag 21's value is a sequence of user properties, in strictly increasing
// bytes order of name, names unique:
//
//	+-------------------+------------+--------------------+-------------+
//	| nameLen uvarint   | name bytes | valueLen uvarint   | value bytes |
//	+-------------------+------------+--------------------+-------------+
//
// A name is 1 to 255 bytes; a value may be empty. Writers of this package
// also keep values to at most 64 KiB, at most 1000 properties, and the
// whole tag 21 value to at most 512 KiB (MaxUserProperties and the other
// limits), well inside the 1 MiB readers allow the properties block. The
// properties block's trailer CRC covers them like every other record.
//
// # Footer
//
// The last 64 bytes of the file:
//
//	 0                16               32                48        52        56
//	+----------------+----------------+-----------------+---------+---------+------------------+
//	| index handle   | filter handle  | properties hdl  | version | CRC-32C | magic            |
//	| off,len u64LE  | off,len u64LE  | off,len u64LE   | u32LE   | masked  | u64LE            |
//	+----------------+----------------+-----------------+---------+---------+------------------+
//
// The handles are fixed-width here so the footer has a fixed size. version
// is 1, 2, 3, 4 or 5, as in the properties. The CRC is the masked CRC-32C
// of bytes [0, 52). The magic number is
// the bytes 8b 53 53 54 0d 0a 1a 0a ("\x8bSST\r\n\x1a\n", uint64 LE
// 0x0a1a0a0d5453538b): like PNG's signature, its first byte is not ASCII
// and its tail catches line-ending translation.
//
// # Reading
//
// A reader checks, in order: the file is at least 64 bytes; the magic
// number; the footer CRC; the version; that the handles lie inside the
// file and the sections follow each other as drawn above; the properties
// CRC and their agreement with the footer. The hash index, filter section
// and index block are checked on first use (a reader may read them with
// the footer, in one read of the file's tail); each data block's CRC is
// checked before its contents are first used. In a version 2 table, Get
// reads only the hash index and the entries its slots name; MayContain
// still probes the filter. In a version 3 table the top-level index is
// checked on first use like an index block (its handles must tile the
// bytes from DataSize + HashIndexSize to its own offset), and each
// partition before its first use. A version 3 table with a hash index is
// read as version 2 is when mapped, except that Get probes no filter
// partition (the slots' tags reject absent keys), and as version 3
// without one over an io.ReaderAt. A version 5 table is read as version 4
// is, except that the properties may start after the index block's end:
// the gap must equal tag 23, and the span block, there, is checked on
// first use (its checksum, that it is stored raw, every record, length
// and offset as "Span block (version 5)" above gives them, and its
// fragment count and bounds against tags 25 to 27); a reader over an
// io.ReaderAt takes it from the tail it read on open when it lies there,
// else reads it once. Every failure wraps ErrCorrupt as a
// *CorruptError naming the section and the byte offset.
package format
