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
// their block's first key ([Version4]). Version 5 is version 4 with
// a span block (range deletions or range keys, fragmented), written
// exactly when a table has spans ([Version5]).
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
// # Sections
//
// Each part of the file is specified, byte for byte, in the documentation
// of the declaration it belongs to (go doc
// github.com/sstkit/sstable/format.Version2 shows the hash index section's;
// go doc -all shows them all, after this overview):
//
//   - [BlockTypeRaw] and the other block types: the block trailer, and the
//     snappy, zstd, MinLZ and zstd dictionary block formats;
//   - [Version1]: the data block, the index block and the filter section;
//   - [Version2]: the hash index section (versions 2 to 4);
//   - [Version3]: the partitioned index and filter;
//   - [Version4]: what version 4 changes in data blocks and the hash index
//     section, and the whole filter of a partitioned table;
//   - [Version5]: the span block;
//   - [Properties]: the properties block and its tags.
//
// The footer and what a reader checks follow here.
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
// and offset as [Version5] gives them, and its
// fragment count and bounds against tags 25 to 27); a reader over an
// io.ReaderAt takes it from the tail it read on open when it lies there,
// else reads it once. Every failure wraps ErrCorrupt as a
// *CorruptError naming the section and the byte offset.
package format
