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
	"runtime"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/errmsg"
)

// ErrKeyOrder is wrapped by the error Add returns for a key that is not
// strictly greater, in bytes.Compare order, than the previous key. The
// builder stays usable after it.
var ErrKeyOrder = errors.New("sstable: keys not in strictly increasing order")

// ErrDuplicateKey is wrapped by the error Add returns for a key equal to
// the previous one. It wraps ErrKeyOrder, so errors.Is(err, ErrKeyOrder)
// holds for it too; a key below the previous one gives ErrKeyOrder alone.
// Its message is "sstable: duplicate key", without ErrKeyOrder's.
var ErrDuplicateKey error = duplicateKey{}

// duplicateKey is ErrDuplicateKey: an ErrKeyOrder that says only what
// went wrong.
type duplicateKey struct{}

func (duplicateKey) Error() string { return "sstable: duplicate key" }
func (duplicateKey) Unwrap() error { return ErrKeyOrder }

// ErrPrefixOrder is wrapped by the error Add returns when, with
// Options.Splitter set, a key's prefix is below the previous key's prefix
// although the key itself is greater: the splitter breaks the contract of
// format.Splitter for these keys (with format.Suffix, a user key that is a
// proper prefix of another). The builder stays usable after it.
var ErrPrefixOrder = errors.New("sstable: key prefixes not in increasing order")

// ErrClosed is returned by calls on a builder after Finish or Abort,
// whether Finish succeeded or not: the builder is closed. (bulk.ErrClosed
// is another error: a bulk.Writer's Finish called twice.)
var ErrClosed = errors.New("sstable: builder closed (after Finish or Abort)")

// Builder writes one table. Call Add for each entry in increasing key
// order, then Finish, or Abort to give up. A Builder is not safe for
// concurrent use. Unless Options.SerialCompression is set, a Builder
// with compression, no dictionary and no splitter, on more than one core,
// compresses its data blocks past the first 64 KiB on a goroutine of its
// own, until Finish or Abort (or until a Builder dropped without either
// is collected).
type Builder struct {
	out    *bufio.Writer
	file   *tempFile // set by Create
	offset uint64    // bytes written so far

	blockSize int
	compress  format.Compression // NoCompression, SnappyCompression, ZstdCompression or MinLZCompression
	level     format.CompressionLevel
	policy    filterblock.Policy
	filter    filterblock.Generator

	// A zstd dictionary (Options.DictionarySize > 0): until it is
	// trained, data blocks wait in dictQueue, decoded, up to dictTrain
	// bytes (dictQueued); then dictEnc encodes every block.
	dictSize   int
	dictTrain  int
	dictQueue  []queuedBlock
	dictQueued int
	dictEnc    *codec.ZstdDictEncoder

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
	partFilters   []chan []byte // each partition's filter, as its goroutine makes it (startPartitionFilters)
	partBytes     int           // index bytes since the last cut, estimated

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
	spans         spanState // AddSpan's fragments and open spans (spans.go)

	handleBuf, sepBuf, compressBuf []byte

	// Compression on other goroutines (pipeline.go): with batchBytes > 0,
	// data blocks gather in filling, which goes to a goroutine (inFlight)
	// once it holds batchBytes; their index entries wait in deferred
	// (from deferredHead), their keys one after another in deferredKeys
	// from deferredStart. blocksWritten counts the data blocks written.
	batchBytes                  int
	comp                        *compressor
	filling                     *dataBatch
	inFlight, spare             []*dataBatch
	deferred                    []deferredEntry
	deferredHead, deferredStart int
	deferredKeys                []byte
	blocksWritten               uint64

	err  error // sticky: a write failed or the options were invalid
	done bool
}

// New returns a Builder that writes a table to w. opts may be nil. New
// checks opts with Options.Validate and, if an option is invalid, writes
// nothing and returns a Builder whose Add and Finish return that error;
// call opts.Validate first to learn it before building. Writes to w are
// buffered; w sees the complete table only after Finish.
func New(w io.Writer, opts *Options) *Builder {
	b := &Builder{out: bufio.NewWriterSize(w, 256<<10)}
	if err := opts.Validate(); err != nil {
		b.err = err
		return b
	}
	var o Options
	if opts != nil {
		o = *opts
	}
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
	b.compress = o.Compression
	switch o.Compression {
	case format.DefaultCompression:
		b.compress = format.SnappyCompression
	case format.ZstdCompression, format.MinLZCompression:
		b.level = o.CompressionLevel
	}
	if o.DictionarySize > 0 {
		b.dictSize = o.DictionarySize
		b.dictTrain = DictionaryTrainingFactor * o.DictionarySize
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
	if v4 {
		b.v4, b.hashIndex = true, true
		b.data.ShareWithFirst = true
		b.hidx.FirstKeyShared = true
		b.props.FormatVersion = format.Version4
	}
	if o.HashIndex {
		b.hashIndex = true
		b.data.WholeKeys = true
		b.props.FormatVersion = format.Version2
	}
	b.props.BlockSize = uint64(o.BlockSize)
	b.props.RestartInterval = uint64(o.RestartInterval)
	b.props.FilterPolicy = o.Filter.Name()
	if s, ok := o.Filter.(filterblock.Sized); ok {
		b.props.FilterBitsPerKey = s.BitsPerKey()
	}
	if o.Splitter != nil {
		b.splitter = o.Splitter
		b.props.Splitter = o.Splitter.Name()
	}
	// Batches of data blocks are compressed on other goroutines where a
	// core is there for them; not with a dictionary (its blocks wait for
	// it anyway) or a splitter (a prefix continued into a new partition
	// is seen, in Add, by the cut its block's index entry makes).
	if b.compress != format.NoCompression && b.dictSize == 0 && b.splitter == nil && !o.SerialCompression && runtime.GOMAXPROCS(0) > 1 {
		b.batchBytes = batchBytes
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
		return b.named(ErrClosed)
	}
	if b.err != nil {
		return b.named(b.err)
	}
	if b.props.NumEntries > 0 {
		switch c := bytes.Compare(key, b.lastKey); {
		case c == 0:
			return b.named(fmt.Errorf("%w %s", ErrDuplicateKey, quote(key)))
		case c < 0:
			return b.named(fmt.Errorf("%w: key %s after %s", ErrKeyOrder, quote(key), quote(b.lastKey)))
		}
	}
	prefixLen, newPrefix := len(key), true
	if b.splitter != nil {
		prefixLen = b.splitter.Split(key)
		if prefixLen < 0 || prefixLen > len(key) {
			return b.named(fmt.Errorf("sstable: builder: splitter %q gave prefix length %d for key %s of %d bytes", b.props.Splitter, prefixLen, quote(key), len(key)))
		}
		if b.props.NumEntries > 0 {
			switch c := bytes.Compare(key[:prefixLen], b.lastKey[:b.lastPrefix]); {
			case c == 0:
				newPrefix = false
			case c < 0:
				return b.named(fmt.Errorf("%w: key %s (prefix %s) after %s (prefix %s), splitter %q", ErrPrefixOrder, quote(key), quote(key[:prefixLen]), quote(b.lastKey), quote(b.lastKey[:b.lastPrefix]), b.props.Splitter))
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
		return b.named(b.err)
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
	if b.err != nil {
		return b.named(b.err)
	}
	return nil
}

// named returns err, not nil, as an error naming the table being
// written, for a builder from Create, which knows its path: "sstable: " +
// path + ": " + err's message without its "sstable: " (or "sstable:
// builder: ") prefix, as in "sstable: t.sst: duplicate key \"k\"". An
// error that names the path already (from Create's file steps) and the
// errors of a builder from New are returned as they are. errors.Is and
// errors.As see err.
func (b *Builder) named(err error) error {
	if b.file == nil {
		return err
	}
	return errmsg.Wrap("sstable: ", b.file.path, err)
}

func quote(k []byte) string {
	const max = 64
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
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
// the span block (with spans: AddSpan), the properties block and the footer, and flushes the output. For a
// builder from Create it then fsyncs the temporary file, renames it to the
// target path and fsyncs the directory; on any error the temporary file is
// removed and nothing is left at the path. Finish returns the first error
// met; later calls return ErrClosed.
func (b *Builder) Finish() error {
	if b.done {
		return b.named(ErrClosed)
	}
	b.done = true
	err := b.finish()
	if b.comp != nil {
		b.comp.stop()
	}
	if b.file != nil {
		if err != nil {
			b.file.abort()
			err = b.named(err)
		} else {
			err = b.file.commit() // names the path
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
	b.drainBatches()
	if b.training() {
		b.trainDict()
	}
	if b.dictEnc != nil {
		b.dictEnc.Close()
		b.dictEnc = nil
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
	// filterBytes computes it) while this goroutine generates it there.
	wholeLen := 0
	if b.v4 && partitioned {
		wholeLen = b.filterBytes(int(b.filterKeys))
	}
	section, waitHashIndex := b.startHashIndex(wholeLen)
	if partitioned {
		b.partitionFilters()
	}
	var wholeErr error
	if wholeLen > 0 {
		wholeErr = b.fillWholeFilter(section.B, wholeLen)
	}
	var filter []byte
	if !partitioned {
		// One filter, as a one-level table has.
		if b.partitionable {
			b.eachFilterHash(b.hashAdder)
		}
		b.hashes, b.cuts = hashList{}, nil
		filter = b.filter.Generate(nil)
	}
	if err := b.writeHashIndex(section, waitHashIndex, wholeErr); err != nil {
		return err
	}

	b.noteGeneratedPolicy()
	var f footer.Footer
	if partitioned {
		start := b.offset // DataSize + HashIndexSize: the hash index, if any, comes first
		top, err := b.writePartitions(index)
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

	// Version 5: the span block, between the index and the properties.
	spanBlock, err := b.finishSpans()
	if err != nil {
		return err
	}
	if spanBlock != nil {
		h := b.writeBlock(spanBlock, format.NoCompression)
		b.props.SpanBlockSize = h.Length + format.BlockTrailerLen
	}

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

// Abort abandons the table. For a builder from Create it closes and
// removes the temporary file; nothing is left at the target path. Calling
// Abort after Finish or Abort returns nil.
func (b *Builder) Abort() error {
	if b.done {
		return nil
	}
	b.done = true
	b.dictQueue = nil
	if b.comp != nil {
		b.comp.stop() // after the batch it may be compressing
	}
	if b.dictEnc != nil {
		b.dictEnc.Close()
		b.dictEnc = nil
	}
	if b.file != nil {
		return b.file.abort()
	}
	return nil
}
