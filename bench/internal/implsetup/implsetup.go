// Package implsetup is what the benchmark commands share about the
// implementations they measure (this module, Pebble v1.1.5's and
// v2.1.7's sstable packages and goleveldb's table package): the options
// each table is built and read with, and the way each is looked up and
// scanned. cmd/compare, cmd/manytables and cmd/objstore all use it, so
// that their figures are of one configuration.
package implsetup

// Table shape, the same for every implementation.
const (
	BlockSize  = 4096 // target data block size, bytes
	BitsPerKey = 10   // bloom filter bits per key
)

// Compression names a data block codec as the commands' -compression
// flags spell it.
type Compression string

// The codecs. Not every command runs every one.
const (
	Snappy Compression = "snappy" // the default of all three
	None   Compression = "none"
	// Zstd: ours uses github.com/klauspost/compress/zstd (pure Go,
	// default level); Pebble v1.1.5 uses github.com/DataDog/zstd (cgo,
	// the reference C library at level 3) when built with cgo, and
	// klauspost's otherwise. goleveldb has no zstd.
	Zstd Compression = "zstd"
)
