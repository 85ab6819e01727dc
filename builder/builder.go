// Package builder writes table files in the format described by package
// format: it streams sorted key/value entries into data blocks and then
// writes the hash index (if asked for), the filter section and the index
// block (or, in a partitioned table, the partitions and the top-level
// index), the properties block and the footer.
package builder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync"

	"github.com/golang/snappy"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// ErrKeyOrder is wrapped by the error Add returns for a key that is not
// strictly greater, in bytes.Compare order, than the previous key. The
// builder stays usable after it.
var ErrKeyOrder = errors.New("sstable: keys not in strictly increasing order")

// ErrDuplicateKey is wrapped by the error Add returns for a key equal to
// the previous one. It wraps ErrKeyOrder, so errors.Is(err, ErrKeyOrder)
// holds for it too; a key below the previous one gives ErrKeyOrder alone.
var ErrDuplicateKey = fmt.Errorf("%w: duplicate key", ErrKeyOrder)

// ErrPrefixOrder is wrapped by the error Add returns when, with
// Options.Splitter set, a key's prefix is below the previous key's prefix
// although the key itself is greater: the splitter breaks the contract of
// format.Splitter for these keys (with format.Suffix, a user key that is a
// proper prefix of another). The builder stays usable after it.
var ErrPrefixOrder = errors.New("sstable: key prefixes not in increasing order")

// ErrClosed is returned by calls on a builder after Finish or Abort,
// whether Finish succeeded or not: the builder is closed. (bulk.ErrFinished
// is another error: a bulk.Writer's Finish called twice.)
var ErrClosed = errors.New("sstable: builder closed (after Finish or Abort)")

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
	// properties, the footer and the filter section's name). Tables up to
	// it keep the one-level layout of format Version1 (Version2 with a
	// hash index), byte for byte as builders before Version3 wrote them;
	// larger ones are partitioned, with a hash index or without. With
	// 16-byte keys, 100-byte values, 4 KiB blocks and 10 bits per key that
	// is about 120k entries: a table of 10k entries (about 20 KiB of index
	// and filter) is not partitioned, tables of 200k, 1M and 5M entries
	// (about 0.4, 1.7 and 8.8 MB) are. See Options.PartitionThreshold for
	// why.
	DefaultPartitionThreshold = 240 << 10
	// DefaultPartitionSize is the default Options.PartitionSize, in bytes:
	// a partition's filter and index together, about 10 KiB and 6 KiB
	// with 16-byte keys and 10 bits per key.
	DefaultPartitionSize = 16 << 10
)

// Options configure a Builder. A nil *Options, or a zero or negative field,
// means the default: 4096-byte blocks, a restart point every 16 entries,
// snappy compression and filterblock.Bloom(10).
type Options struct {
	// BlockSize is the target size of a data block's contents before
	// compression, in bytes. A block is cut once it reaches this size, so
	// a single large entry makes a larger block.
	BlockSize int
	// RestartInterval is the number of entries between restart points in
	// data blocks: 0 means DefaultRestartIntervalV4 (32) in format version
	// 4, DefaultRestartInterval (16) in the older versions.
	RestartInterval int
	// Compression selects data block compression; DefaultCompression means
	// snappy.
	Compression format.Compression
	// CompressionLevel selects the zstd encoder's level when Compression
	// is ZstdCompression (format.LevelDefault when zero); it is ignored
	// otherwise. Higher levels build more slowly and give smaller tables;
	// they decode at about the same speed.
	CompressionLevel format.CompressionLevel
	// Filter is the filter policy built over every key of the table.
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
	// measures it). BlockSize must then be at most 1 GiB.
	//
	// A table whose index and filter exceed PartitionThreshold is
	// partitioned all the same (format Version3 with the hash index
	// section kept, still covering the whole table): a memory-mapped
	// reader looks keys up through the hash index, a reader over an
	// io.ReaderAt through one partition and never reads the hash index.
	HashIndex bool
	// FormatVersion chooses the table format. 0 (or format.Version4)
	// writes version 4, the default: the compact hash index that every
	// Get goes through, about 4.6 bytes per entry (the format package
	// documentation, "Version 4"), on the one-level layout or, past
	// PartitionThreshold, on partitions. format.Version1, Version2 or
	// Version3 write the layouts builders wrote before version 4, byte for
	// byte: version 1, or version 2 with HashIndex, partitioned into
	// version 3 past PartitionThreshold. HashIndex alone also asks for
	// those layouts. Other values, and HashIndex with version 4, make the
	// first Add or Finish fail.
	FormatVersion uint32
	// PartitionThreshold is the size, in bytes, of the index block and
	// filter together (the index block's contents and the filter's bits,
	// as one-level tables store them) above which the builder writes
	// format Version3, a partitioned index and filter (format package
	// documentation): a reader over object storage then reads one
	// partition of a few KiB per lookup rather than the whole index and
	// filter. This is RocksDB's partitioned index and filters
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
	// policies) are written in the one-level layout whatever their size,
	// as before; Properties().FormatVersion tells which layout a table got.
	// With HashIndex, the hash index section is written before the
	// partitions and is not counted against the threshold (format
	// package documentation, "Partitioned index and filter"). With a
	// Splitter, each partition's filter holds the prefixes of its keys, a
	// prefix continuing from the previous partition included.
	PartitionThreshold int
	// PartitionSize is the target size, in bytes, of one partition of a
	// Version3 table: its filter and its index together. A partition is
	// cut after the data block that makes it reach this size. 0 means
	// DefaultPartitionSize.
	PartitionSize int
}

// sectionPool recycles hash index section buffers between builds, as
// format recycles the hash index writer's chunks: fresh memory costs a
// page fault per 4 KiB on first touch.
var sectionPool sync.Pool // *[]byte

// maxHashIndexBlockSize bounds BlockSize with HashIndex, so that entry
// offsets fit the 32 bits a slot may give them.
const maxHashIndexBlockSize = 1 << 30

// Builder writes one table. Call Add for each entry in increasing key
// order, then Finish, or Abort to give up. A Builder is not safe for
// concurrent use.
type Builder struct {
	out    *bufio.Writer
	file   *tempFile // set by Create
	offset uint64    // bytes written so far

	blockSize int
	compress  format.Compression // NoCompression, SnappyCompression or ZstdCompression
	level     format.CompressionLevel
	policy    filterblock.Policy
	filter    filterblock.Generator

	data  codec.BlockWriter
	index codec.BlockWriter

	hashIndex bool                  // a hash index section: version 2, or 3 with one, or 4
	v4        bool                  // format Version4 (compact hash index, entries sharing their block's first key)
	hashAdder filterblock.HashAdder // b.filter, when it takes hashes

	// Partitioning (Version3): with partitionable, Add keeps the hash of
	// every key (or, with a splitter, of every distinct prefix, and of a
	// prefix that continues into a new partition) in hashes instead of
	// feeding b.filter, and cuts records where partitions end; Finish then
	// writes one filter per partition, or, for a table under the
	// threshold, feeds b.filter every hash but the continued prefixes'.
	partitionable bool
	partThreshold int
	partSize      int
	bitsPerKey    float64
	hashes        hashList
	cuts          []partCut
	partBytes     int // index bytes since the last cut, estimated

	anyCompressed bool // a data block was stored compressed
	hidx          codec.HashIndexWriter
	blockOffsets  []uint64 // file offset of each data block, with HashIndex
	decodedStart  []uint64 // offset of each block's contents in their concatenation, with HashIndex
	decodedTotal  uint64

	lastKey       []byte
	splitter      format.Splitter
	lastPrefix    int    // length of lastKey's prefix, with a splitter
	filterKeys    uint64 // keys (or distinct prefixes) given to the filter
	rawData       uint64 // decoded bytes of the data blocks written so far
	userSize      int    // encoded size of props.User (tag 21's value)
	pendingIndex  bool   // a data block was flushed and awaits its index entry
	pendingHandle format.BlockHandle
	props         format.Properties

	handleBuf, sepBuf, compressBuf []byte

	err  error // sticky: a write failed or the options were invalid
	done bool
}

// New returns a Builder that writes a table to w. opts may be nil. Invalid
// options (an unknown Compression, a filter policy name longer than
// filterblock.MaxNameLen) make the first Add or Finish fail.
// Writes to w are buffered; w sees the complete table only after Finish.
func New(w io.Writer, opts *Options) *Builder {
	var o Options
	if opts != nil {
		o = *opts
	}
	b := &Builder{out: bufio.NewWriterSize(w, 256<<10)}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	v4 := o.FormatVersion == format.Version4 || o.FormatVersion == 0 && !o.HashIndex
	if o.RestartInterval <= 0 {
		o.RestartInterval = DefaultRestartInterval
		if v4 {
			o.RestartInterval = DefaultRestartIntervalV4
		}
	}
	if o.Filter == nil {
		o.Filter = filterblock.Bloom(DefaultBitsPerKey)
	}
	switch o.Compression {
	case format.DefaultCompression, format.SnappyCompression:
		b.compress = format.SnappyCompression
	case format.NoCompression:
		b.compress = format.NoCompression
	case format.ZstdCompression:
		b.compress = format.ZstdCompression
		if o.CompressionLevel < format.LevelDefault || o.CompressionLevel > format.LevelBest {
			b.err = fmt.Errorf("sstable: builder: unknown compression level %v", o.CompressionLevel)
		}
		b.level = o.CompressionLevel
	default:
		b.err = fmt.Errorf("sstable: builder: unknown compression %v", o.Compression)
	}
	b.props.Compression = b.compress
	b.blockSize = o.BlockSize
	b.data.RestartInterval = o.RestartInterval
	b.index.RestartInterval = 1
	b.policy = o.Filter
	b.filter = o.Filter.NewGenerator()
	b.hashAdder, _ = b.filter.(filterblock.HashAdder)
	_, fallback := b.filter.(filterblock.FallbackReporter)
	b.partThreshold, b.partSize = o.PartitionThreshold, o.PartitionSize
	if b.partThreshold == 0 {
		b.partThreshold = DefaultPartitionThreshold
	}
	if b.partSize <= 0 {
		b.partSize = DefaultPartitionSize
	}
	b.partitionable = b.partThreshold > 0 && b.hashAdder != nil && !fallback
	b.bitsPerKey = DefaultBitsPerKey
	if s, ok := o.Filter.(filterblock.Sized); ok && s.BitsPerKey() > 0 {
		b.bitsPerKey = s.BitsPerKey()
	}
	b.props.FormatVersion = format.Version1
	switch {
	case o.FormatVersion > format.Version:
		b.err = fmt.Errorf("sstable: builder: unknown format version %d", o.FormatVersion)
	case o.HashIndex && o.FormatVersion == format.Version4:
		b.err = fmt.Errorf("sstable: builder: HashIndex asks for the hash index of format versions 2 and 3, not version 4")
	case v4:
		b.v4, b.hashIndex = true, true
		b.data.ShareWithFirst = true
		b.hidx.FirstKeyShared = true
		b.props.FormatVersion = format.Version4
	}
	if b.v4 && o.BlockSize > maxHashIndexBlockSize {
		b.err = fmt.Errorf("sstable: builder: block size %d exceeds %d, the largest a hash index allows", o.BlockSize, maxHashIndexBlockSize)
	}
	if o.HashIndex {
		b.hashIndex = true
		b.data.WholeKeys = true
		b.props.FormatVersion = format.Version2
		if o.BlockSize > maxHashIndexBlockSize {
			b.err = fmt.Errorf("sstable: builder: block size %d exceeds %d, the largest a hash index allows", o.BlockSize, maxHashIndexBlockSize)
		}
	}
	b.props.BlockSize = uint64(o.BlockSize)
	b.props.RestartInterval = uint64(o.RestartInterval)
	b.props.FilterPolicy = o.Filter.Name()
	if len(b.props.FilterPolicy) > filterblock.MaxNameLen {
		b.err = fmt.Errorf("sstable: builder: filter policy name of %d bytes exceeds %d", len(b.props.FilterPolicy), filterblock.MaxNameLen)
	}
	if s, ok := o.Filter.(filterblock.Sized); ok {
		b.props.FilterBitsPerKey = s.BitsPerKey()
	}
	if o.Splitter != nil && b.err == nil {
		if err := format.CheckSplitter(o.Splitter); err != nil {
			b.err = fmt.Errorf("sstable: builder: %w", err)
		}
		b.splitter = o.Splitter
		b.props.Splitter = o.Splitter.Name()
	}
	return b
}

// Add appends an entry. key must be strictly greater than the previous
// key in bytes.Compare order; otherwise Add returns an error wrapping
// ErrKeyOrder (and ErrDuplicateKey too when key equals the previous key),
// and the builder is unchanged and still usable. With Options.Splitter,
// a key whose prefix is below the previous key's gives an error wrapping
// ErrPrefixOrder, and a Split result outside [0, len(key)] an error, both
// leaving the builder unchanged and usable. Empty keys and values are
// allowed. A nil value is an empty value: the table stores no difference,
// and readers return both as an empty, non-nil slice (Reader.Get,
// Iterator.Value; GetAppend appends nothing). To tell an absent or deleted
// value from an empty one, encode it in the value, as examples/mvcc does
// with a kind byte before each value. Add copies what it needs; the
// caller may reuse key and value. After a write error every call returns
// that error.
func (b *Builder) Add(key, value []byte) error {
	if b.done {
		return ErrClosed
	}
	if b.err != nil {
		return b.err
	}
	if b.props.NumEntries > 0 {
		switch c := bytes.Compare(key, b.lastKey); {
		case c == 0:
			return fmt.Errorf("%w: key %s added twice", ErrDuplicateKey, quote(key))
		case c < 0:
			return fmt.Errorf("%w: key %s after %s", ErrKeyOrder, quote(key), quote(b.lastKey))
		}
	}
	prefixLen, newPrefix := len(key), true
	if b.splitter != nil {
		prefixLen = b.splitter.Split(key)
		if prefixLen < 0 || prefixLen > len(key) {
			return fmt.Errorf("sstable: builder: splitter %q gave prefix length %d for key %s of %d bytes", b.props.Splitter, prefixLen, quote(key), len(key))
		}
		if b.props.NumEntries > 0 {
			switch c := bytes.Compare(key[:prefixLen], b.lastKey[:b.lastPrefix]); {
			case c == 0:
				newPrefix = false
			case c < 0:
				return fmt.Errorf("%w: key %s (prefix %s) after %s (prefix %s), splitter %q", ErrPrefixOrder, quote(key), quote(key[:prefixLen]), quote(b.lastKey), quote(b.lastKey[:b.lastPrefix]), b.props.Splitter)
			}
		}
	}
	cuts := len(b.cuts)
	if b.pendingIndex {
		b.sepBuf = codec.AppendSeparator(b.sepBuf[:0], b.lastKey, key)
		b.addIndexEntry(b.sepBuf)
	}
	// A prefix whose keys go on in a new partition goes in its filter
	// too, so that the filter of a key's partition holds the key's prefix.
	carry := !newPrefix && len(b.cuts) > cuts
	if carry {
		b.cuts[len(b.cuts)-1].carry = true
	}
	if b.props.NumEntries == 0 {
		b.props.SmallestKey = append([]byte{}, key...)
	}
	if b.hashIndex && b.props.NumDataBlocks >= math.MaxUint32-1 {
		b.err = fmt.Errorf("sstable: builder: more than %d data blocks for a hash index", uint32(math.MaxUint32-1))
		return b.err
	}
	off := b.data.Add(key, value)
	if newPrefix || carry {
		// With a splitter, the prefix's first entry stands for it.
		prefix := key[:prefixLen]
		var h uint64
		if b.hashIndex || b.partitionable {
			h = codec.KeyHash(prefix)
		}
		if b.hashIndex && newPrefix {
			// One slot per prefix, at its first entry: a prefix carried
			// into a new partition's filter gets no second slot.
			b.hidx.Add(h, uint32(b.props.NumDataBlocks), uint32(off))
		}
		switch {
		case b.partitionable:
			b.hashes.add(h)
		case b.hashIndex && b.hashAdder != nil:
			b.hashAdder.AddHash(h)
		default:
			b.filter.Add(prefix)
		}
		if newPrefix {
			b.filterKeys++
		}
	}
	b.lastKey = append(b.lastKey[:0], key...)
	b.lastPrefix = prefixLen
	b.props.NumEntries++
	b.props.RawKeyBytes += uint64(len(key))
	b.props.RawValueBytes += uint64(len(value))
	if b.data.EstimatedSize() >= b.blockSize {
		b.flushDataBlock()
	}
	return b.err
}

func quote(k []byte) string {
	const max = 64
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
}

func (b *Builder) addIndexEntry(sep []byte) {
	b.handleBuf = codec.AppendHandle(b.handleBuf[:0], b.pendingHandle)
	b.index.Add(sep, b.handleBuf)
	b.pendingIndex = false
	if b.partitionable {
		// An index entry costs its key, its handle, a 3-byte header at
		// most for short keys, and its 4-byte restart.
		b.partBytes += len(sep) + len(b.handleBuf) + 3 + 4
		if b.partBytes+b.filterBytes(b.hashes.len()-b.cutHash()) >= b.partSize {
			b.cut()
		}
	}
}

// partCut records the end of a partition: its last key (its key in the
// top-level index), the data block count and the count of b.hashes at
// its end, and whether the next partition's first hash is a prefix
// continued from this one.
type partCut struct {
	last              []byte
	endBlock, endHash uint64
	carry             bool
}

// cutHash returns the count of b.hashes at the last cut.
func (b *Builder) cutHash() int {
	if len(b.cuts) == 0 {
		return 0
	}
	return int(b.cuts[len(b.cuts)-1].endHash)
}

// filterBytes returns the size in bytes of a Bloom filter of n keys at
// b.bitsPerKey, as filterblock.Bloom builds it: whole 64-byte lines and a
// byte for the probe count.
func (b *Builder) filterBytes(n int) int {
	if n == 0 {
		return 1
	}
	lines := (uint64(float64(n)*b.bitsPerKey+0.5) + 511) / 512
	return int(max(lines, 1))*64 + 1
}

// cut ends a partition after the data blocks flushed so far, whose last
// key is b.lastKey.
func (b *Builder) cut() {
	b.cuts = append(b.cuts, partCut{last: bytes.Clone(b.lastKey), endBlock: b.props.NumDataBlocks, endHash: uint64(b.hashes.len())})
	b.partBytes = 0
}

func (b *Builder) flushDataBlock() {
	contents := b.data.Finish()
	b.rawData += uint64(len(contents))
	b.props.MaxBlockSize = max(b.props.MaxBlockSize, uint64(len(contents)))
	var typ byte
	b.pendingHandle, typ = b.writeBlockType(contents, b.compress)
	b.anyCompressed = b.anyCompressed || typ != format.BlockTypeRaw
	if b.hashIndex {
		b.blockOffsets = append(b.blockOffsets, b.pendingHandle.Offset)
		b.decodedStart = append(b.decodedStart, b.decodedTotal)
		b.decodedTotal += uint64(len(contents))
	}
	b.pendingIndex = true
	b.props.NumDataBlocks++
	b.data.Reset()
}

// writeBlock writes contents, compressed with c when compression saves at
// least 12.5%, followed by the block trailer.
func (b *Builder) writeBlock(contents []byte, c format.Compression) format.BlockHandle {
	h, _ := b.writeBlockType(contents, c)
	return h
}

// withinExpansion reports whether a block of decoded bytes stored in
// stored bytes stays within the ratio readers assume of a data block
// (snappy's worst case, 22·stored + 16 bytes; format
// package documentation, Block trailer).
func withinExpansion(decoded, stored int) bool { return decoded <= 22*stored+16 }

// writeBlockType is writeBlock, also returning the block type written.
func (b *Builder) writeBlockType(contents []byte, c format.Compression) (format.BlockHandle, byte) {
	stored, typ := contents, format.BlockTypeRaw
	if c == format.ZstdCompression {
		b.compressBuf = codec.AppendZstd(b.compressBuf[:0], contents, b.level)
		typ = format.BlockTypeZstd
		if !withinExpansion(len(contents), len(b.compressBuf)) {
			c = format.SnappyCompression // too repetitive for readers' bound; see format's docs
		}
	}
	if c == format.SnappyCompression {
		b.compressBuf = snappy.Encode(b.compressBuf[:cap(b.compressBuf)], contents)
		typ = format.BlockTypeSnappy
	}
	if c != format.NoCompression && len(b.compressBuf) < len(contents)-len(contents)/8 {
		stored = b.compressBuf
	} else {
		typ = format.BlockTypeRaw
	}
	h := format.BlockHandle{Offset: b.offset, Length: uint64(len(stored))}
	var trailer [format.BlockTrailerLen]byte
	b.write(stored)
	b.write(codec.AppendTrailer(trailer[:0], stored, typ))
	return h, typ
}

func (b *Builder) write(p []byte) {
	if b.err != nil {
		return
	}
	n, err := b.out.Write(p)
	b.offset += uint64(n)
	if err != nil {
		b.err = fmt.Errorf("sstable: builder: write at offset %d: %w", b.offset, err)
	}
}

// Finish writes the last data block, the filter section, the index block,
// the properties block and the footer, and flushes the output. For a
// builder from Create it then fsyncs the temporary file, renames it to the
// target path and fsyncs the directory; on any error the temporary file is
// removed and nothing is left at the path. Finish returns the first error
// met; later calls return ErrClosed.
func (b *Builder) Finish() error {
	if b.done {
		return ErrClosed
	}
	b.done = true
	err := b.finish()
	if b.file != nil {
		if err != nil {
			b.file.abort()
		} else {
			err = b.file.commit()
		}
	}
	return err
}

func (b *Builder) finish() error {
	if b.err != nil {
		return b.err
	}
	if b.data.Entries() > 0 {
		b.flushDataBlock()
	}
	if b.pendingIndex {
		b.sepBuf = codec.AppendSuccessor(b.sepBuf[:0], b.lastKey)
		b.addIndexEntry(b.sepBuf)
	}
	if b.props.NumEntries > 0 {
		b.props.LargestKey = append([]byte{}, b.lastKey...)
		// The properties block leaves out a key longer than
		// format.MaxPropertiesKeyLen (the data block has it): a key of
		// any size is stored once.
		if n := len(b.props.SmallestKey); n > format.MaxPropertiesKeyLen {
			b.props.SmallestKeyOmitted = uint64(n)
		}
		if n := len(b.props.LargestKey); n > format.MaxPropertiesKeyLen {
			b.props.LargestKeyOmitted = uint64(n)
		}
	}
	b.props.DataSize = b.offset

	// The hash index and the filter are built from what Add recorded and
	// are independent of each other, so the hash index is built on another
	// goroutine while this one generates the filter (at 1M entries, about
	// 35 ms and 20 ms of Finish's work).
	index := b.index.Finish()
	partitioned := b.partitionable && b.props.NumDataBlocks > 0 && len(index)+b.filterBytes(int(b.filterKeys)) > b.partThreshold
	// A partitioned version 4 table's hash index section ends with the
	// whole table's filter, besides the partitions' own: the hash index is
	// laid out with room for it (its size follows from the key count, as
	// filterBytes computes it) while this goroutine builds it.
	wholeLen := 0
	if b.v4 && partitioned {
		wholeLen = b.filterBytes(int(b.filterKeys))
		b.hidx.Filter = make([]byte, wholeLen)
	}
	var hashSection []byte
	hashDone := make(chan struct{})
	if b.hashIndex {
		offsets := append(b.blockOffsets, b.offset)
		// With every block raw, slots can hold entries' file offsets;
		// otherwise offsets in the concatenated decoded blocks, with a
		// table of each block's decoded start, which take a reader from
		// a slot to the entry in its cached, decoded block. (Version 4
		// slots hold offsets in the block.)
		b.hidx.FileOffsets = !b.anyCompressed
		if b.anyCompressed {
			b.hidx.DecodedStarts = append(b.decodedStart, b.decodedTotal)
		}
		go func() {
			defer close(hashDone)
			var buf []byte
			if p, ok := sectionPool.Get().(*[]byte); ok {
				buf = (*p)[:0]
			}
			hashSection = b.hidx.Append(buf, b.props.DataSize, offsets)
			b.hidx = codec.HashIndexWriter{} // let the entries go
		}()
	} else {
		close(hashDone)
	}
	var partFilters <-chan []byte
	if partitioned {
		partFilters = b.partitionFilters()
	}
	var whole []byte
	if wholeLen > 0 {
		g := b.policy.NewGenerator()
		b.eachFilterHash(g.(filterblock.HashAdder).AddHash) // partitionable: the generator takes hashes
		whole = g.Generate(nil)
	}
	var filter []byte
	if !partitioned {
		// One filter, as a one-level table has.
		if b.partitionable {
			b.eachFilterHash(b.hashAdder.AddHash)
		}
		b.hashes, b.cuts = hashList{}, nil
		filter = b.filter.Generate(nil)
	}
	<-hashDone
	if wholeLen > 0 {
		if len(whole) != wholeLen {
			return fmt.Errorf("sstable: builder: internal error: whole filter of %d bytes, %d expected", len(whole), wholeLen)
		}
		copy(hashSection[len(hashSection)-wholeLen:], whole)
	}
	if b.hashIndex {
		b.writeBlock(hashSection, format.NoCompression)
		b.props.HashIndexSize = b.offset - b.props.DataSize
		sectionPool.Put(&hashSection) // written out: bufio copies or writes through
	}

	// A policy whose construction can fail (BinaryFuse8) may have built
	// another policy's filter; the table names the one built.
	if fr, ok := b.filter.(filterblock.FallbackReporter); ok {
		if used := fr.GeneratedPolicy(); used.Name() != b.policy.Name() {
			b.policy = used
			b.props.FilterPolicy = used.Name()
			b.props.FilterBitsPerKey = 0
			if s, ok := used.(filterblock.Sized); ok {
				b.props.FilterBitsPerKey = s.BitsPerKey()
			}
		}
	}
	var f footer.Footer
	if partitioned {
		start := b.offset // DataSize + HashIndexSize: the hash index, if any, comes first
		top, err := b.writePartitions(index, partFilters)
		if err != nil {
			return err
		}
		if b.v4 {
			b.props.Partitioned = true
		} else {
			b.props.FormatVersion = format.Version3
		}
		f.Filter = format.BlockHandle{Offset: start, Length: b.offset - start - format.BlockTrailerLen}
		b.props.FilterSize = f.Filter.Length + format.BlockTrailerLen
		index = top
	} else {
		section := filterblock.AppendSection(nil, b.offset, b.policy.Name(), filter)
		f.Filter = b.writeBlock(section, format.NoCompression)
		b.props.FilterSize = f.Filter.Length + format.BlockTrailerLen
	}

	f.Index = b.writeBlock(index, format.NoCompression)
	b.props.IndexSize = f.Index.Length + format.BlockTrailerLen

	f.Properties = b.writeBlock(codec.AppendProperties(nil, &b.props), format.NoCompression)
	f.Version = b.props.FormatVersion
	b.write(f.Append(nil))
	if b.err != nil {
		return b.err
	}
	if err := b.out.Flush(); err != nil {
		return fmt.Errorf("sstable: builder: flush: %w", err)
	}
	return nil
}

// eachFilterHash calls add with every hash Add recorded for partitions,
// once each: the prefixes continued into another partition left out, as
// a one-level table's filter holds them.
func (b *Builder) eachFilterHash(add func(uint64)) {
	from := 0
	for _, c := range b.cuts {
		if c.carry {
			b.hashes.each(from, int(c.endHash), add)
			from = int(c.endHash) + 1
		}
	}
	b.hashes.each(from, b.hashes.len(), add)
}

// writePartitions writes the partitions of a Version3 table, each its
// keys' filter then its data blocks' index entries (taken from index, the
// whole index block), and returns the top-level index block: one entry
// per partition, keyed by its last key, whose value is its
// codec.PartitionHandle.
func (b *Builder) writePartitions(index []byte, filters <-chan []byte) ([]byte, error) {
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, 0, index); err != nil {
		return nil, fmt.Errorf("sstable: builder: index block: %w", err)
	}
	it.First()
	top := codec.BlockWriter{RestartInterval: 1}
	part := codec.BlockWriter{RestartInterval: 1}
	var handle []byte
	var block uint64
	for _, c := range b.cuts {
		filter := <-filters
		ph := codec.PartitionHandle{Offset: b.offset, FirstBlock: block}
		ph.FilterLen = b.writeBlock(filter, format.NoCompression).Length
		part.Reset()
		for ; block < c.endBlock; block++ {
			if !it.Valid() {
				return nil, fmt.Errorf("sstable: builder: index block ends before block %d", block)
			}
			part.Add(it.Key(), it.Value())
			it.Next()
		}
		ph.IndexLen = b.writeBlock(part.Finish(), format.NoCompression).Length
		handle = codec.AppendPartitionHandle(handle[:0], ph)
		top.Add(c.last, handle)
	}
	b.hashes, b.cuts = hashList{}, nil
	return top.Finish(), nil
}

// partitionFilters cuts the last partition, then generates each
// partition's filter on another goroutine, in order, into the channel it
// returns, so that the filters are built while the hash index is laid
// out (at 1M entries, about 8 ms and 17 ms of Finish's work).
func (b *Builder) partitionFilters() <-chan []byte {
	if n := len(b.cuts); n == 0 || b.cuts[n-1].endBlock != b.props.NumDataBlocks {
		b.cut() // b.lastKey is the table's last key
	}
	out := make(chan []byte, len(b.cuts))
	cuts, hashes, g := b.cuts, &b.hashes, b.hashAdder
	go func() {
		var hash uint64
		for _, c := range cuts {
			hashes.each(int(hash), int(c.endHash), g.AddHash)
			out <- g.(filterblock.Generator).Generate(nil)
			hash = c.endHash
		}
	}()
	return out
}

// Abort abandons the table. For a builder from Create it closes and
// removes the temporary file; nothing is left at the target path. Calling
// Abort after Finish or Abort returns nil.
func (b *Builder) Abort() error {
	if b.done {
		return nil
	}
	b.done = true
	if b.file != nil {
		return b.file.abort()
	}
	return nil
}

// Properties returns the table's properties as far as written so far; after
// a successful Finish they are those stored in the table.
func (b *Builder) Properties() format.Properties { return b.props }

// EntryCount returns the number of entries added so far.
func (b *Builder) EntryCount() uint64 { return b.props.NumEntries }

// SetUserProperty records a user property, stored in the table's
// properties block (tag 21, covered by its checksum) and read back in
// format.Properties.User. It may be called any number of times before
// Finish; a name set again takes the last value. value is copied.
//
// Limits: a name is 1 to format.MaxUserPropertyNameLen (255) bytes, a
// value at most format.MaxUserPropertyValueLen (64 KiB); a table holds at
// most format.MaxUserProperties (1000) properties and
// format.MaxUserPropertiesSize (512 KiB) of them encoded (each takes its
// name and value lengths plus about 2 to 4 bytes). A call breaking a limit
// returns an error and changes nothing; after Finish or Abort it returns
// ErrClosed.
func (b *Builder) SetUserProperty(name string, value []byte) error {
	if b.done {
		return ErrClosed
	}
	switch {
	case len(name) == 0:
		return errors.New("sstable: builder: user property with an empty name")
	case len(name) > format.MaxUserPropertyNameLen:
		return fmt.Errorf("sstable: builder: user property name of %d bytes exceeds %d", len(name), format.MaxUserPropertyNameLen)
	case len(value) > format.MaxUserPropertyValueLen:
		return fmt.Errorf("sstable: builder: user property %q: value of %d bytes exceeds %d", name, len(value), format.MaxUserPropertyValueLen)
	}
	size := b.userSize + codec.UserPropertiesSize(name, len(value))
	old, replace := b.props.User[name]
	if replace {
		size -= codec.UserPropertiesSize(name, len(old))
	} else if len(b.props.User) >= format.MaxUserProperties {
		return fmt.Errorf("sstable: builder: user property %q: a table holds at most %d", name, format.MaxUserProperties)
	}
	if size > format.MaxUserPropertiesSize {
		return fmt.Errorf("sstable: builder: user property %q: user properties would take %d bytes, more than %d", name, size, format.MaxUserPropertiesSize)
	}
	if b.props.User == nil {
		b.props.User = make(map[string][]byte)
	}
	b.props.User[name] = append([]byte{}, value...)
	b.userSize = size
	return nil
}

// EstimatedSize returns the size in bytes the table would have if Finish
// were called now: the bytes written so far, plus estimates of the
// pending data block (compressed at the ratio seen so far), the hash
// index, the filter, the index block, the properties and the footer.
// For tables over 1 MiB it is within 5% of the final size; after a
// successful Finish it is the exact file size. It allocates nothing.
func (b *Builder) EstimatedSize() uint64 {
	if b.done {
		return b.offset
	}
	est := b.offset
	if b.data.Entries() > 0 {
		pending := uint64(b.data.EstimatedSize())
		if b.rawData > 0 && b.compress != format.NoCompression {
			// Only data blocks are written before Finish.
			stored := b.offset - format.BlockTrailerLen*b.props.NumDataBlocks
			pending = pending * stored / b.rawData
		}
		est += pending + format.BlockTrailerLen
	}
	blocks := b.props.NumDataBlocks
	if b.data.Entries() > 0 {
		blocks++
	}
	// Filter: bits per key (10 when the policy does not say), lines of 64
	// bytes, the k byte, name, padding and trailer.
	bpk := b.props.FilterBitsPerKey
	if bpk <= 0 {
		bpk = DefaultBitsPerKey
	}
	est += (uint64(float64(b.filterKeys)*bpk)+511)/512*64 + 1 + uint64(len(b.props.FilterPolicy)) + 2 + 32 + format.BlockTrailerLen
	switch {
	case b.v4:
		// 4-byte slots up to about 2M entries; the whole filter again
		// when the table will be partitioned.
		slots := codec.CompactHashIndexSlots(b.hidx.Len())
		width := uint64(4)
		if need := (uint64(bitsLen(blocks)) + uint64(bitsLen(uint64(b.blockSize))) + 5 + 7) / 8; need > width {
			width = min(need, 8)
		}
		est += codec.HashIndexHeaderLen + 64 + slots*width + 8*(blocks+1) + format.BlockTrailerLen
		if b.partitionable && uint64(b.index.EstimatedSize())+(uint64(float64(b.filterKeys)*bpk)+511)/512*64 > uint64(b.partThreshold) {
			est += (uint64(float64(b.filterKeys)*bpk) + 511) / 512 * 64
		}
	case b.hashIndex:
		slots := codec.HashIndexSlots(b.hidx.Len())
		width := uint64(4)
		if need := (uint64(bitsLen(blocks)) + uint64(bitsLen(b.offset+b.rawData)) + 8 + 7) / 8; need > width {
			width = min(need, 8)
		}
		tables := 8 * (blocks + 1)
		if b.compress != format.NoCompression {
			tables *= 2
		}
		est += codec.HashIndexHeaderLen + 32 + slots*width + tables + format.BlockTrailerLen
	}
	// Index: the entries so far, one more per pending block, each about
	// the last key's length plus a handle.
	est += uint64(b.index.EstimatedSize()) + (blocks-b.props.NumDataBlocks+boolInt(b.pendingIndex))*uint64(len(b.lastKey)+12) + format.BlockTrailerLen
	// Properties: about 40 bytes of integers, the keys, names and user
	// properties; then the footer.
	est += 64 + propsKeyLen(b.props.SmallestKey) + propsKeyLen(b.lastKey) + uint64(len(b.props.FilterPolicy)+len(b.props.Splitter)+b.userSize) + format.BlockTrailerLen
	est += footer.Size
	return est
}

func bitsLen(v uint64) int { return bits.Len64(v) }

// propsKeyLen returns the bytes the properties block spends on key: the
// key, or its length's uvarint when it is too long to be stored there.
func propsKeyLen(key []byte) uint64 {
	if len(key) > format.MaxPropertiesKeyLen {
		return 4
	}
	return uint64(len(key))
}

func boolInt(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// hashChunkLen is the number of hashes in each chunk of a hashList: 256
// KiB.
const hashChunkLen = 1 << 15

// hashList holds the key hashes of a partitionable table in chunks, so
// that a table of millions of keys never re-copies them as one growing
// slice would (15 ms of a 1M-entry build, measured by pprof).
type hashList struct {
	chunks [][]uint64
	n      int
}

func (l *hashList) add(h uint64) {
	if l.n%hashChunkLen == 0 {
		l.chunks = append(l.chunks, make([]uint64, 0, hashChunkLen))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, h)
	l.n++
}

func (l *hashList) len() int { return l.n }

// each calls f with hashes from to to-1, in order.
func (l *hashList) each(from, to int, f func(uint64)) {
	for i := from; i < to; {
		c := l.chunks[i/hashChunkLen]
		end := min(len(c), i%hashChunkLen+to-i)
		for _, h := range c[i%hashChunkLen : end] {
			f(h)
		}
		i += end - i%hashChunkLen
	}
}
