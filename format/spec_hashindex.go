package format

// Version2 adds a hash index section after the data blocks, and stores
// every data block entry whole (shared = 0) so that the hash index can
// point at it. Builders write it when asked for a hash index.
//
// # Hash index section (version 2, and version 3 with a hash index)
//
// The hash index maps every key to its entry, so a point lookup reads one
// slot and one entry instead of searching the index block and a data
// block. It is laid out the same way in both versions (and, with the
// changes [Version4] gives, in version 4), and in a version 3
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
// are version 4's ([Version4]) and 0 in versions 2 and 3; bits 5
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
const Version2 uint32 = 2
