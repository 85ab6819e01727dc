package format

// Version4 is what builders write by default: Version2's hash index,
// made compact, on Version1's layout or Version3's partitions. Data
// block entries share prefixes with their block's first key (not with
// the previous entry), so any entry decodes from its offset and the
// block's first entry without the keys being stored whole; the hash
// index holds about 1.1 slots of 4 bytes per entry (for tables of up
// to about 2M entries in 4 KiB blocks), each the entry's block and
// offset in it; and a partitioned table's hash index section also
// carries the whole table's filter, so a memory-mapped reader rules
// out an absent key with one probe.
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
const Version4 uint32 = 4
