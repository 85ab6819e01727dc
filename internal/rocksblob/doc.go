// Package rocksblob reads the blob files of RocksDB's integrated BlobDB
// (enable_blob_files) and decodes the blob indexes its tables store in
// place of large values, in pure Go, read-only.
//
// A blob file, NNNNNN.blob beside the tables (db/blob/blob_log_format.h;
// integers little-endian):
//
//	header, 30 bytes: magic 0x00248f37 (u32), version 1 (u32), column
//	    family ID (u32), flags (byte, bit 0: has TTL), compression type
//	    (byte), expiration range (2 x u64)
//	records, each: key length (u64), value length (u64), expiration (u64),
//	    header CRC (u32), blob CRC (u32), the key, the value
//	footer, 32 bytes: magic (u32), record count (u64), expiration range
//	    (2 x u64), footer CRC (u32)
//
// Every CRC is CRC-32C masked as LevelDB masks it: the header CRC covers the
// record's first 24 bytes (the lengths and the expiration), the blob CRC
// the key then the value as stored, the footer CRC the footer's first 28
// bytes. The file header has no CRC. A value is compressed with the type the
// file header names, alone (no dictionary), framed as a block-based table's
// blocks of format_version 2 are: snappy raw, every other type behind a
// varint of the decompressed size; it stays compressed even when that is
// larger. The value length is the stored length.
//
// A table's blob index (DecodeIndex) names the file, the value's offset
// (the value itself, not its record), its stored size and its compression;
// File.Value finds the record from it, checks it as RocksDB's BlobFileReader
// does with verify_checksums, and returns the value.
//
// Integrated BlobDB writes files without TTL (flags 0, expiration ranges
// and record expirations 0) and always closes a file with its footer
// before the MANIFEST lists it; RocksDB 11's blob direct write reads files
// still being written without one (Options.AllowNoFooter). The legacy
// stacked BlobDB (utilities/blob_db) wrote TTL files and TTL indexes, which
// integrated BlobDB, and this package, refuse as corrupt.
//
// Damaged bytes give errors wrapping format.ErrCorrupt: a
// *format.CorruptError naming the file, the section (SectionHeader,
// SectionRecord, SectionFooter, SectionIndex) and the byte offset. Nothing
// read from a file makes the package panic, and no length read from one
// makes it allocate more than the file's size (or, decompressing, what the
// stored bytes can expand to).
package rocksblob
