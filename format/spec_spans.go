package format

// Version5 is Version4 (one-level or partitioned) with a span block
// after the index block (after the top-level index in a partitioned
// table) and before the properties: the table's range deletions or
// range keys, fragmented (builder.Builder.AddSpan). A builder writes
// it exactly when a table has at least one span; it is never asked
// for by Options.FormatVersion.
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
const Version5 uint32 = 5
