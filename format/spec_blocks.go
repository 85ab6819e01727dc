package format

// Block compression types: the first byte of every block trailer.
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
const (
	BlockTypeRaw    byte = 0 // stored bytes are the block contents
	BlockTypeSnappy byte = 1 // stored bytes are a snappy block-format encoding
	BlockTypeZstd   byte = 2 // stored bytes are one Zstandard frame (RFC 8878) with its content size
	// BlockTypeMinLZ: stored bytes are one MinLZ block (github.com/minio/minlz block format).
	BlockTypeMinLZ byte = 3
	// BlockTypeZstdDict: stored bytes are one Zstandard frame with its
	// content size, encoded with the table's dictionary (property tag 28).
	BlockTypeZstdDict byte = 4
)
