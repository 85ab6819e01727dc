package format

// Version1 is the base layout: data blocks, filter section, index
// block, properties, footer.
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
const Version1 uint32 = 1
