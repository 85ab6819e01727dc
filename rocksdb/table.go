package rocksdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/internal/rocksblock"
)

// Magic numbers in a table's last 8 bytes (RocksDB's table/format.h and
// table/block_based/block_based_table_builder.cc).
const (
	// Magic is the block-based table's, kBlockBasedTableMagicNumber.
	Magic = 0x88e241b785f4cff7
	// LegacyMagic is LevelDB's, which RocksDB's format_version 0 tables
	// carry (kLegacyBlockBasedTableMagicNumber).
	LegacyMagic = 0xdb4775248b80fb57
)

// Footer sizes, in bytes: format_version 0's (LevelDB's) and the later
// versions'.
const (
	LegacyFooterLen = 48
	FooterLen       = 53
)

// Section names in this package's corruption errors, beside format's
// SectionFooter, SectionIndex, SectionDataBlock and SectionFile.
const (
	SectionMetaindex    = "metaindex block"
	SectionProperties   = "properties block"
	SectionFilter       = "filter block"
	SectionFilterIndex  = "filter partition index"
	SectionRangeDel     = "range deletion block"
	SectionCompressDict = "compression dictionary"
	SectionTopIndex     = "top-level index block"
)

// Meta block names in the metaindex (table/meta_blocks.cc,
// table/block_based/block_based_table_builder.cc).
const (
	metaProperties   = "rocksdb.properties"
	metaRangeDel     = "rocksdb.range_del"
	metaCompressDict = "rocksdb.compression_dict"
	metaIndex        = "rocksdb.index"
	filterFull       = "fullfilter."
	filterPartition  = "partitionedfilter."
	filterBlockBased = "filter."
)

// Comparator names RocksDB records in rocksdb.comparator.
const (
	BytewiseComparator        = "leveldb.BytewiseComparator"
	ReverseBytewiseComparator = "rocksdb.ReverseBytewiseComparator"
)

// TableOptions configure OpenTable and NewTable. The zero value (or nil)
// maps the file and caches decoded blocks in reader.DefaultCache.
type TableOptions struct {
	// Cache holds the table's decompressed data blocks, shared with the
	// module's other readers. nil: reader.DefaultCache().
	Cache *cache.Cache
	// NoMmap makes OpenTable read with ReadAt rather than map the file.
	NoMmap bool
	// Name names the table in errors; OpenTable uses the path.
	Name string
	// ReadAhead lets a forward scan decode the table's next data blocks
	// on a second goroutine: less wall time for more CPU time in all.
	// Off by default.
	ReadAhead bool
}

// Table is one open RocksDB block-based table. It is safe for concurrent
// use: many goroutines may call Get and use iterators of their own.
type Table struct {
	core      *lsmtable.Table
	footer    tableFooter
	codec     *blockCodec
	metaNames []string
	meta      map[string]format.BlockHandle
	props     []Property
	propMap   map[string][]byte

	comparator  string
	reverse     bool
	indexType   uint32
	partitions  int // index partitions, for a two-level index
	filter      *tableFilter
	rangeDels   []RangeDeletion
	globalSeq   uint64
	hasGlobal   bool
	compression string
}

type tableFooter struct {
	magic     uint64
	version   uint32
	checksum  rocksblock.ChecksumType
	base      uint32 // base context checksum, format_version 6 and up
	metaindex format.BlockHandle
	index     format.BlockHandle
	offset    int64 // the footer's file offset
}

// OpenTable opens the RocksDB table at path, mapping it into memory unless
// o.NoMmap. Errors: the file's own; errors wrapping format.ErrCorrupt
// (ErrNotTable too, for a file without a block-based table's magic
// number) naming path, the section and the byte offset; errors wrapping
// ErrUnsupported naming what this package cannot read.
func OpenTable(path string, o *TableOptions) (*Table, error) {
	t := &Table{}
	core, err := lsmtable.Open(path, t.options(o), t.init)
	if err != nil {
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	t.core = core
	return t, nil
}

// NewTable opens the RocksDB table of size bytes read through r. Errors
// as OpenTable's, named by o.Name.
func NewTable(r io.ReaderAt, size int64, o *TableOptions) (*Table, error) {
	t := &Table{}
	core, err := lsmtable.New(r, size, t.options(o), t.init)
	if err != nil {
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	t.core = core
	return t, nil
}

func (t *Table) options(o *TableOptions) *lsmtable.Options {
	opts := &lsmtable.Options{}
	if o != nil {
		opts.Cache, opts.NoMmap, opts.Name, opts.ReadAhead = o.Cache, o.NoMmap, o.Name, o.ReadAhead
	}
	return opts
}

// init reads what a table's reads rely on: the footer, the metaindex, the
// properties, the compression dictionary, the index (every partition),
// the filter and the range deletions.
func (t *Table) init(core *lsmtable.Table) error {
	if err := t.readFooter(core); err != nil {
		return err
	}
	t.codec = &blockCodec{checksum: t.footer.checksum, base: t.footer.base, version: t.footer.version}
	core.Codec = t.codec
	core.Kinds = pointKinds
	core.PackedFooter = true
	if err := t.readMetaindex(core); err != nil {
		return err
	}
	if err := t.readProperties(core); err != nil {
		return err
	}
	if err := t.checkComparator(); err != nil {
		return err
	}
	core.Index.SetReverse(t.reverse)
	if h, ok := t.meta[metaCompressDict]; ok {
		contents, _, err := core.ReadBlock(SectionCompressDict, h)
		if err != nil {
			return err
		}
		t.codec.dict = rocksblock.NewDict(contents)
	}
	if err := t.readGlobalSeq(core); err != nil {
		return err
	}
	if err := t.readIndex(core); err != nil {
		return err
	}
	if err := t.readFilter(core); err != nil {
		return err
	}
	if err := t.readRangeDels(core); err != nil {
		return err
	}
	core.VerifyMeta = func() error { return t.verifyMeta(core) }
	return nil
}

// readFooter reads and checks the footer (RocksDB's table/format.cc,
// Footer::DecodeFrom):
//
//	format_version 0, 48 bytes: metaindex handle, index handle (varints),
//	    zero padding to 40 bytes, LegacyMagic
//	format_version 1 to 5, 53 bytes: checksum type (1 byte), metaindex
//	    handle, index handle, padding to 41 bytes, format_version
//	    (u32), Magic
//	format_version 6 and up, 53 bytes: checksum type, 3e 00 7a 00,
//	    the footer's checksum (u32), the base context checksum (u32),
//	    the metaindex's size (u32; it ends where the footer starts, less
//	    its trailer), 24 reserved bytes (the last 8 zero), format_version,
//	    Magic; the index handle is in the metaindex
func (t *Table) readFooter(core *lsmtable.Table) error {
	size := core.Size()
	if size < LegacyFooterLen {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for a %d-byte footer: not a RocksDB table", size, LegacyFooterLen)
	}
	tail, err := core.Read(size-8, 8, nil)
	if err != nil {
		return err
	}
	f := &t.footer
	f.magic = binary.LittleEndian.Uint64(tail)
	switch f.magic {
	case LegacyMagic:
		f.offset = size - LegacyFooterLen
		buf, err := core.Read(f.offset, LegacyFooterLen, nil)
		if err != nil {
			return err
		}
		f.version, f.checksum = 0, rocksblock.CRC32c
		return t.footerHandles(buf[:40], f.offset, uint64(f.offset))
	case Magic:
	default:
		return &lsmtable.NotTableError{Err: format.Corruptf(format.SectionFooter, size-8, "magic number %#016x is neither RocksDB's block-based table's %#016x nor LevelDB's %#016x", f.magic, uint64(Magic), uint64(LegacyMagic)), Sentinel: ErrNotTable}
	}
	if size < FooterLen {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer", size, FooterLen)
	}
	f.offset = size - FooterLen
	buf, err := core.Read(f.offset, FooterLen, nil)
	if err != nil {
		return err
	}
	f.version = binary.LittleEndian.Uint32(buf[41:])
	f.checksum = rocksblock.ChecksumType(buf[0])
	if f.version < 1 || f.version > 7 {
		return format.Corruptf(format.SectionFooter, f.offset+41, "format_version %d: RocksDB writes 1 to 7 with this magic number", f.version)
	}
	if f.checksum > rocksblock.XXH3 {
		return fmt.Errorf("%w: %v", ErrUnsupported, format.Corruptf(format.SectionFooter, f.offset, "checksum type %d (RocksDB knows 0 to 4)", buf[0]))
	}
	if f.version < 6 {
		return t.footerHandles(buf[1:41], f.offset+1, uint64(f.offset))
	}
	if string(buf[1:5]) != "\x3e\x00\x7a\x00" {
		return format.Corruptf(format.SectionFooter, f.offset+1, "extended magic % x is not 3e 00 7a 00", buf[1:5])
	}
	stored := binary.LittleEndian.Uint32(buf[5:])
	f.base = binary.LittleEndian.Uint32(buf[9:])
	metaSize := binary.LittleEndian.Uint32(buf[13:])
	if rocksblock.ContextModifier(f.base, 0) == 0 && f.base == 0 {
		return format.Corruptf(format.SectionFooter, f.offset+9, "base context checksum is 0")
	}
	if f.checksum != rocksblock.NoChecksum {
		var cp [FooterLen]byte
		copy(cp[:], buf)
		binary.LittleEndian.PutUint32(cp[5:], 0)
		sum, err := rocksblock.TrailerChecksum(f.checksum, cp[:FooterLen-1], cp[FooterLen-1])
		if err != nil {
			return err
		}
		if sum += rocksblock.ContextModifier(f.base, uint64(f.offset)); sum != stored {
			return format.Corruptf(format.SectionFooter, f.offset+5, "footer checksum %#08x, computed %#08x", stored, sum)
		}
	}
	if binary.LittleEndian.Uint64(buf[33:]) != 0 {
		return fmt.Errorf("%w: %v", ErrUnsupported, format.Corruptf(format.SectionFooter, f.offset+33, "reserved footer bytes are set: a RocksDB feature newer than this package"))
	}
	end := uint64(f.offset)
	if end < rocksblock.TrailerLen || uint64(metaSize) > end-rocksblock.TrailerLen {
		return format.Corruptf(format.SectionFooter, f.offset+13, "metaindex of %d bytes does not fit before the footer", metaSize)
	}
	f.metaindex = format.BlockHandle{Offset: end - rocksblock.TrailerLen - uint64(metaSize), Length: uint64(metaSize)}
	return nil
}

// footerHandles decodes the metaindex and index handles of a footer
// before format_version 6.
func (t *Table) footerHandles(b []byte, off int64, limit uint64) error {
	meta, n1 := codec.DecodeHandle(b)
	if n1 <= 0 {
		return format.Corruptf(format.SectionFooter, off, "bad metaindex block handle")
	}
	idx, n2 := codec.DecodeHandle(b[n1:])
	if n2 <= 0 {
		return format.Corruptf(format.SectionFooter, off+int64(n1), "bad index block handle")
	}
	for _, h := range []format.BlockHandle{meta, idx} {
		if !lsmtable.Inside(h, limit) {
			return format.Corruptf(format.SectionFooter, off, "block handle (offset %d, %d bytes) lies outside the %d bytes before the footer", h.Offset, h.Length, limit)
		}
	}
	t.footer.metaindex, t.footer.index = meta, idx
	return nil
}

// readMetaindex reads the metaindex: meta block names to handles.
func (t *Table) readMetaindex(core *lsmtable.Table) error {
	h := t.footer.metaindex
	contents, _, err := core.ReadBlock(SectionMetaindex, h)
	if err != nil {
		return err
	}
	t.meta = map[string]format.BlockHandle{}
	return eachEntry(SectionMetaindex, int64(h.Offset), contents, func(k, v []byte) error {
		name := string(k)
		mh, n := codec.DecodeHandle(v)
		if n <= 0 || !lsmtable.Inside(mh, uint64(t.footer.offset)) {
			return format.Corruptf(SectionMetaindex, int64(h.Offset), "%s: bad block handle", name)
		}
		t.metaNames = append(t.metaNames, name)
		t.meta[name] = mh
		return nil
	})
}

// eachEntry calls fn for each entry of a block with LevelDB's entry
// layout (meta blocks, the properties, the range deletions).
func eachEntry(section string, off int64, contents []byte, fn func(k, v []byte) error) error {
	var it codec.BlockIter
	if err := it.Init(section, off, contents); err != nil || lsmtable.EmptyBlock(contents) {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}

// checkComparator refuses comparators whose order this package does not
// know.
func (t *Table) checkComparator() error {
	t.comparator = BytewiseComparator
	if v, ok := t.propMap["rocksdb.comparator"]; ok {
		t.comparator = string(v)
	}
	switch t.comparator {
	case BytewiseComparator:
	case ReverseBytewiseComparator:
		t.reverse = true
	default:
		return fmt.Errorf("%w: comparator %q (this package reads %q and %q; user-defined timestamps are not read)", ErrUnsupported, t.comparator, BytewiseComparator, ReverseBytewiseComparator)
	}
	return nil
}

// readGlobalSeq reads an ingested file's global sequence number
// (rocksdb.external_sst_file.version 2, ...global_seqno: fixed64), which
// replaces the zeros its entries store.
func (t *Table) readGlobalSeq(core *lsmtable.Table) error {
	v, ok := t.propMap["rocksdb.external_sst_file.version"]
	if !ok || len(v) != 4 || binary.LittleEndian.Uint32(v) != 2 {
		return nil
	}
	s, ok := t.propMap["rocksdb.external_sst_file.global_seqno"]
	if !ok {
		return nil
	}
	if len(s) != 8 {
		return format.Corruptf(SectionProperties, int64(t.meta[metaProperties].Offset), "rocksdb.external_sst_file.global_seqno of %d bytes, not 8", len(s))
	}
	seq := binary.LittleEndian.Uint64(s)
	if seq > MaxSequence {
		return format.Corruptf(SectionProperties, int64(t.meta[metaProperties].Offset), "global sequence number %d is above the largest, %d", seq, uint64(MaxSequence))
	}
	if seq != 0 {
		t.globalSeq, t.hasGlobal = seq, true
		core.GlobalSeq, core.HasGlobalSeq = seq, true
	}
	return nil
}

// blockCodec is RocksDB's block trailer and compression: the footer's
// checksum type (with the per-block context modifier from format_version
// 6), and every compression RocksDB writes, with the table's dictionary.
type blockCodec struct {
	checksum rocksblock.ChecksumType
	base     uint32
	version  uint32
	dict     *rocksblock.Dict
}

func (c *blockCodec) Check(section string, off int64, buf []byte) ([]byte, byte, error) {
	return rocksblock.CheckBlock(section, off, buf, c.checksum, c.base)
}

func (c *blockCodec) Decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	out, err := rocksblock.Decompress(section, off, typ, c.version, stored, c.dict, lsmtable.MaxBlockLen, dst[:0])
	if err != nil && errors.Is(err, rocksblock.ErrUnsupportedCompression) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return out, err
}

func (c *blockCodec) DecodedLen(typ byte, stored []byte) (int, bool) {
	return rocksblock.DecompressedLen(typ, c.version, stored)
}

// Close releases the table's mapping, file and cached blocks. Iterators
// must be closed first; later calls return an error wrapping ErrClosed.
func (t *Table) Close() error { return t.core.Close() }

// Name returns the name the table's errors carry: OpenTable's path, or
// TableOptions.Name.
func (t *Table) Name() string { return t.core.Name() }
