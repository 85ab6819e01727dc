package builder

import (
	"fmt"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Default option values.
const (
	DefaultBlockSize       = 4096 // bytes
	DefaultRestartInterval = 16   // entries, in tables of format versions 1 to 3
	// DefaultRestartIntervalV4 is the default restart interval of format
	// version 4 data blocks, in entries. Point lookups there go through
	// the hash index, not the restart points, so fewer of them (4 bytes
	// each, and a key stored whole) save about 0.2 bytes per entry of
	// 16-byte keys; a seek scans up to 31 entries past its restart point
	// instead of 15.
	DefaultRestartIntervalV4 = 32
	DefaultBitsPerKey        = 10 // bits per key of the default filter

	// DefaultPartitionThreshold is the default Options.PartitionThreshold,
	// in bytes: 240 KiB of index block and filter together, so that a
	// one-level table's index and filter, with its properties and footer,
	// fit in the 256 KiB tail a reader over an io.ReaderAt reads on open
	// (reader.DefaultTailSize; the other 16 KiB leave room for the
	// properties, the footer and the filter section's name). Tables whose
	// index and filter fit in it keep the one-level layout (version 4's,
	// or that of Version1, Version2 with a hash index, byte for byte as
	// builders before Version3 wrote them); larger ones are partitioned.
	// The threshold counts bytes, not entries, so where a table crosses
	// it depends on its keys, its blocks and its filter: with random
	// 16-byte keys, 100-byte values, 4 KiB blocks and 10 bits per key
	// (about 1.8 bytes of index and filter per entry) it is crossed at
	// about 120k-135k entries; a table of 10k entries (about 17 KiB of
	// index and filter) is not partitioned, tables of 200k, 1M and 5M
	// entries (about 0.4, 1.7 and 8.8 MB) are; longer keys or more bits
	// per key cross it sooner. See Options.PartitionThreshold for why.
	DefaultPartitionThreshold = 240 << 10
	// DefaultPartitionSize is the default Options.PartitionSize, in bytes:
	// a partition's filter and index together, about 10 KiB and 6 KiB
	// with 16-byte keys and 10 bits per key.
	DefaultPartitionSize = 16 << 10
)

// Options configure a Builder. A nil *Options, or the zero value, means
// every default: format version 4, 4096-byte blocks, a restart point
// every 32 entries (DefaultRestartIntervalV4), snappy compression,
// filterblock.Bloom(10), and a partitioned index and filter past 240 KiB
// of them (DefaultPartitionThreshold). Each field's zero value means its
// default; what a negative value means, and which values are invalid
// (rejected by Validate, and so by Create and New), is given field by
// field.
type Options struct {
	// BlockSize is the target size of a data block's contents before
	// compression, in bytes. A block is cut once it reaches this size, so
	// a single large entry makes a larger block. 0 or negative means
	// DefaultBlockSize (4096); more than MaxBlockSize (1 GiB) is invalid.
	BlockSize int
	// RestartInterval is the number of entries between restart points in
	// data blocks. 0 or negative means DefaultRestartIntervalV4 (32) in
	// format version 4, DefaultRestartInterval (16) in versions 1 to 3.
	// Any positive value is valid; one larger than a block's entries
	// gives the block a single restart point.
	RestartInterval int
	// Compression selects data block compression: DefaultCompression (the
	// zero value) means SnappyCompression; NoCompression, ZstdCompression
	// and MinLZCompression are the others, and any other value is invalid.
	Compression format.Compression
	// CompressionLevel selects the zstd encoder's level when Compression
	// is ZstdCompression (format.LevelDefault when zero), and MinLZ's when
	// it is MinLZCompression (LevelDefault and LevelFastest: minlz's
	// LevelFastest; LevelBetter: LevelBalanced; LevelBest:
	// LevelSmallest); it is ignored otherwise, but must still be one of
	// the four levels (Validate). Higher levels build more slowly and give
	// smaller tables; they decode at about the same speed.
	CompressionLevel format.CompressionLevel
	// DictionarySize, with ZstdCompression, is the size in bytes of a zstd
	// dictionary the builder trains from the table's first data blocks,
	// stores once in the table (property tag 28) and encodes every data
	// block with; 0, the default, means no dictionary. It must be 0 or
	// from 256 bytes to 256 KiB (MinDictionarySize,
	// MaxDictionarySize), and only with ZstdCompression. RocksDB's
	// max_dict_bytes is the same idea; 16 KiB suits tables of small
	// records with 4 KiB blocks, where blocks compressed alone share no
	// history. The builder holds the first DictionaryTrainingFactor
	// times DictionarySize bytes of data blocks in memory, uncompressed,
	// trains the dictionary from them (each block one sample), then writes
	// them and every later block of up to 32 KiB encoded with it (larger
	// blocks, of large values, stay plain zstd frames: they have history
	// enough of their own, and decode faster without); a table with less data
	// trains from all of it at Finish. The first blocks are the sample
	// because the dictionary must exist before any block encoded with it
	// is written, and holding them (rather than sampling the whole table)
	// bounds the memory; for tables of similar records they are typical
	// of the rest (RocksDB samples data blocks too, up to
	// zstd_max_train_bytes, about 100 times max_dict_bytes). The builder keeps the dictionary
	// only when the sampled blocks encoded with it, plus the dictionary
	// itself (its content, at most DictionarySize bytes, and its entropy
	// tables, usually under 200 bytes), take fewer bytes than the blocks
	// encoded without one; otherwise, and when the samples yield no
	// dictionary, the table is written with plain zstd blocks and no
	// dictionary. Training takes about 0.2 s for a 16 KiB dictionary
	// and holds a table of up to 12 MiB besides the queued blocks.
	DictionarySize int
	// SerialCompression compresses each data block in Add, on the
	// calling goroutine. Otherwise a build with compression, no
	// dictionary and no Splitter, on more than one core (GOMAXPROCS),
	// compresses its data blocks past the first 64 KiB on a goroutine of
	// its own, 64 KiB at a time, up to four batches ahead of the writes
	// (256 KiB, and as much again of compressed output): 1.1-1.3 times the
	// throughput of a serial build (1M entries, snappy, 2 cores), for
	// about a fifth more CPU time. Set it where every core is busy
	// anyway (many builds at once), or where compression is a small
	// part of the work. The table is the same either way, byte for byte.
	SerialCompression bool
	// Filter is the filter policy built over every key (or, with a
	// Splitter, every distinct prefix) of the table. nil means
	// filterblock.Bloom(DefaultBitsPerKey), 10 bits per key; NoFilter
	// builds a table without a filter. A policy's name must be 1 to
	// filterblock.MaxNameLen bytes, and a policy that reports its bits
	// per key (filterblock.Sized) must report 0 to MaxBitsPerKey
	// (Validate).
	Filter filterblock.Policy
	// Splitter, when set, splits each key into a prefix and a suffix (see
	// format.Splitter, and format.Suffix for versioned keys): the filter,
	// and the hash index if any, are built over the distinct prefixes,
	// each added once, and the table records the splitter's name
	// (properties tag 20). Readers then answer MayContainPrefix and
	// Iterator.SeekPrefixGE from the filter, and with a hash index
	// SeekPrefixGE goes straight to a prefix's first entry. Add returns an
	// error wrapping ErrPrefixOrder for keys whose prefixes decrease, and
	// an error for a Split result outside [0, len(key)]. A reader must
	// know the splitter (built-in, or in reader.Options.Splitters) to use
	// the filter and hash index. nil: whole keys, as without this field.
	// A splitter that format.CheckSplitter refuses (an empty or too long
	// name, format.Suffix of a negative n) is invalid.
	Splitter format.Splitter
	// HashIndex adds a hash index section (format Version2): a slot per
	// key, found from the key's hash, holding the data block number and
	// the entry's offset in the block, so that Reader.Get reads one slot
	// and one entry instead of binary-searching the index block and a
	// data block. It costs about 1.5 slots of 4 to 8 bytes per entry (the
	// smallest width holding the block number, the offset and an 8-bit
	// tag), and prefix compression of keys in data blocks, since every
	// entry is stored whole: for 1M random 16-byte keys with 100-byte
	// random values in 4 KiB snappy blocks, 7-byte slots, 10.7 bytes per
	// entry of hash index and 12.5 bytes per entry (10.5%) more file
	// (SSTABLE_LONG_TESTS=1 go test ./builder -run TestHashIndexCost -v
	// measures it).
	//
	// A table whose index and filter exceed PartitionThreshold is
	// partitioned all the same (format Version3 with the hash index
	// section kept, still covering the whole table): a memory-mapped
	// reader looks keys up through the hash index, a reader over an
	// io.ReaderAt through one partition and never reads the hash index.
	HashIndex bool
	// FormatVersion chooses the table format. 0 (or format.Version4)
	// writes version 4, the default: the compact hash index that every
	// Get goes through, about 4.6 bytes per entry (format.Version4's doc), on the one-level layout or, past
	// PartitionThreshold, on partitions. format.Version1, Version2 or
	// Version3 write the layouts builders wrote before version 4, byte for
	// byte: version 1, or version 2 with HashIndex, partitioned into
	// version 3 past PartitionThreshold. HashIndex alone also asks for
	// those layouts. Other values, and HashIndex with version 4, are
	// invalid (Validate).
	FormatVersion uint32
	// PartitionThreshold is the size, in bytes, of the index block and
	// filter together (the index block's contents and the filter's bits,
	// as one-level tables store them) above which the builder partitions
	// them (format Version3, or Version4 with Properties.Partitioned; the
	// format package documentation): a reader over object storage then
	// reads one partition of a few KiB per lookup rather than the whole
	// index and filter. This is RocksDB's partitioned index and filters
	// (kTwoLevelIndexSearch with partition_filters) and Pebble's two-level
	// index.
	//
	// 0 means DefaultPartitionThreshold (240 KiB); a negative value never
	// partitions; a positive value partitions every table whose index and
	// filter exceed it (1 partitions every non-empty table). The default
	// is the rule "partition whenever the index and filter do not fit in
	// the default tail" (reader.DefaultTailSize, 256 KiB, less room for the
	// properties and footer). A reader over an io.ReaderAt (object
	// storage, where every ReadAt is a request) reads the tail on open; a
	// one-level table whose index and filter are in it answers a cold
	// lookup with one more read (the data block), and one whose index and
	// filter are not must read them, whole, on its first lookup: 1.7 MB
	// at 1M entries, 8.8 MB at 5M, in a read of their own. A partitioned
	// table's top-level index stays in the tail, and a cold lookup reads
	// one 64 KiB window of partitions and the data block: at most 3 reads
	// counting the tail for a present key, 2 for an absent one, and at
	// most 64 KiB beyond the tail and the data block, at every size. In
	// format version 4 memory-mapped readers pay nothing for it: their Gets
	// go through the hash index and the whole filter the hash index
	// section carries (1.25 bytes per key more file). In a version 3 table
	// the price is theirs: a partitioned table costs their lookups a
	// binary search of the top-level index and a partition's checks
	// before the filter (mapped Gets of absent keys measured about 40-60
	// ns slower on 1M-entry tables). Tables served only from local files
	// may set a larger threshold (4 << 20 keeps tables of up to about 2M
	// such entries one-level, without the second filter), or -1 for the
	// one-level layout at every size; a reader with a larger
	// Options.TailSize than the default may be given a matching
	// threshold.
	//
	// The partitioned layout is built only with a filter policy whose
	// generator takes key hashes and builds one filter per call with no
	// fallback: the default Bloom policies (filterblock.Bloom,
	// filterblock.BloomFPR). Tables with another policy (the LevelDB
	// filter; filterblock.BinaryFuse8, whose construction may fail and
	// fall back to Bloom, which would give a table partitions of two
	// policies) and tables without a filter (NoFilter) are written in the
	// one-level layout whatever their size, as before;
	// Properties().FormatVersion and Partitioned tell which layout a table
	// got.
	// With HashIndex, the hash index section is written before the
	// partitions and is not counted against the threshold (format.Version3's doc,
	// "Partitioned index and filter"). With a
	// Splitter, each partition's filter holds the prefixes of its keys, a
	// prefix continuing from the previous partition included.
	PartitionThreshold int
	// PartitionSize is the target size, in bytes, of one partition of a
	// partitioned table (Version3, or Version4 with Properties.Partitioned):
	// its filter and its index together. A partition is cut after the
	// data block that makes it reach this size. 0 or negative means
	// DefaultPartitionSize (16 KiB).
	PartitionSize int
}

// Limits of Options fields, checked by Validate.
const (
	// MaxBlockSize is the largest Options.BlockSize, in bytes (1 GiB): a
	// block's restart array holds 32-bit offsets, and a hash index slot
	// gives an entry's offset in its block at most 32 bits, so a block
	// must stay well under 4 GiB even after the entry that ends it.
	MaxBlockSize = 1 << 30
	// MinDictionarySize and MaxDictionarySize bound a non-zero
	// Options.DictionarySize, in bytes: smaller dictionaries hold too
	// little to help, and larger ones would crowd the properties block
	// (readers bound it to 1 MiB, which user properties share).
	MinDictionarySize = codec.MinZstdDictSize
	MaxDictionarySize = codec.MaxZstdDictSize
	// DictionaryTrainingFactor is how many times Options.DictionarySize
	// the builder samples, in decoded data block bytes, to train the
	// dictionary: RocksDB's guidance for zstd_max_train_bytes is about 100
	// times max_dict_bytes.
	DictionaryTrainingFactor = 100
	// MaxBitsPerKey is the largest bits per key a filter policy may report
	// (filterblock.Sized): a Bloom filter at 100 bits per key already
	// has a false positive rate below 10^-12, and larger values are
	// mistakes (a size in bytes, or bits for the whole table).
	MaxBitsPerKey = 1000
)

// Validate reports whether every option of o is valid, before a build
// starts: it returns nil, or an error naming the first invalid field, its
// value and the values allowed. A nil o is valid (every default). Create
// calls it before creating any file, New before writing anything.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.BlockSize > MaxBlockSize {
		return fmt.Errorf("sstable: builder: Options.BlockSize %d: want at most %d (1 GiB), or 0 for %d", o.BlockSize, MaxBlockSize, DefaultBlockSize)
	}
	switch o.Compression {
	case format.DefaultCompression, format.NoCompression, format.SnappyCompression, format.ZstdCompression, format.MinLZCompression:
	default:
		return fmt.Errorf("sstable: builder: Options.Compression %v: unknown compression; want format.DefaultCompression (snappy), NoCompression, SnappyCompression, ZstdCompression or MinLZCompression", o.Compression)
	}
	if o.DictionarySize != 0 {
		if o.Compression != format.ZstdCompression {
			return fmt.Errorf("sstable: builder: Options.DictionarySize %d with Options.Compression %v: a dictionary is for ZstdCompression only", o.DictionarySize, o.Compression)
		}
		if o.DictionarySize < MinDictionarySize || o.DictionarySize > MaxDictionarySize {
			return fmt.Errorf("sstable: builder: Options.DictionarySize %d: want 0 (none) or %d to %d bytes", o.DictionarySize, MinDictionarySize, MaxDictionarySize)
		}
	}
	if o.CompressionLevel < format.LevelDefault || o.CompressionLevel > format.LevelBest {
		return fmt.Errorf("sstable: builder: Options.CompressionLevel %v: unknown compression level; want format.LevelDefault, LevelFastest, LevelBetter or LevelBest", o.CompressionLevel)
	}
	if err := checkFilter(o.Filter); err != nil {
		return err
	}
	if o.Splitter != nil {
		if err := format.CheckSplitter(o.Splitter); err != nil {
			return fmt.Errorf("sstable: builder: Options.Splitter: %w", err)
		}
	}
	if o.FormatVersion == format.Version5 {
		return fmt.Errorf("sstable: builder: Options.FormatVersion 5: version 5 is version 4 with spans, written when AddSpan is called; want 0 (default), %s", versionList())
	}
	if o.FormatVersion > format.Version {
		return fmt.Errorf("sstable: builder: Options.FormatVersion %d: want 0 (default), %s", o.FormatVersion, versionList())
	}
	if o.HashIndex && o.FormatVersion == format.Version4 {
		return fmt.Errorf("sstable: builder: Options.HashIndex with Options.FormatVersion 4: HashIndex asks for the hash index of versions 2 and 3; version 4 always has its own (leave HashIndex false, or set FormatVersion 0 to 3)")
	}
	return nil
}

// versionList returns "1, 2, 3 or 4": the format versions a builder is
// asked for (version 5 follows from AddSpan).
func versionList() string {
	var s string
	for v := format.Version1; v <= format.Version4; v++ {
		switch {
		case v == format.Version4:
			s += fmt.Sprintf(" or %d", v)
		case v > format.Version1:
			s += fmt.Sprintf(", %d", v)
		default:
			s += fmt.Sprint(v)
		}
	}
	return s
}

// checkFilter checks the policy of Options.Filter: its name must fit in a
// table and be empty only for NoFilter, and the bits per key it reports
// must be a number the properties can hold.
func checkFilter(p filterblock.Policy) error {
	if p == nil {
		return nil
	}
	name := p.Name()
	switch {
	case len(name) > filterblock.MaxNameLen:
		return fmt.Errorf("sstable: builder: Options.Filter: policy name of %d bytes exceeds %d", len(name), filterblock.MaxNameLen)
	case name == "" && p != NoFilter:
		return fmt.Errorf("sstable: builder: Options.Filter: policy %T has an empty name, which tables reserve for no filter; use builder.NoFilter for a table without one", p)
	}
	if s, ok := p.(filterblock.Sized); ok {
		if bpk := s.BitsPerKey(); !(bpk >= 0 && bpk <= MaxBitsPerKey) {
			return fmt.Errorf("sstable: builder: Options.Filter: policy %q reports %v bits per key; want 0 to %d", name, bpk, MaxBitsPerKey)
		}
	}
	return nil
}
