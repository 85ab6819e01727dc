package leveldb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/internal/rocksblock"
)

// Magic is the magic number in the last 8 bytes of a LevelDB table
// (LevelDB's kTableMagicNumber, table/format.h), stored little-endian.
const Magic = 0xdb4775248b80fb57

// FooterLen is the size of a LevelDB table's footer, in bytes: two block
// handles zero-padded to 40 bytes, then the magic number.
const FooterLen = 48

// Section names in this package's corruption errors, beside format's
// SectionFooter, SectionIndex, SectionDataBlock and SectionFile.
const (
	SectionMetaindex = "metaindex block"
	SectionFilter    = "filter block"
)

// ErrClosed is returned by a Table's methods after Close.
var ErrClosed = lsmtable.ErrClosed

// ErrNotTable is wrapped by the error OpenTable and NewTable return for
// a file whose last 8 bytes are not LevelDB's magic number. The error
// wraps format.ErrCorrupt too.
var ErrNotTable = errors.New("leveldb: not a LevelDB table")

// TableOptions configure OpenTable and NewTable. The zero value (or nil)
// maps the file and caches decoded blocks in reader.DefaultCache.
type TableOptions struct {
	// Cache holds the table's decompressed data blocks, and every data
	// block of a table read without a mapping; shared with the module's
	// own readers. nil: reader.DefaultCache().
	Cache *cache.Cache
	// NoMmap makes OpenTable read with ReadAt rather than map the file.
	NoMmap bool
	// ReadAhead lets a forward scan decode the table's next data blocks
	// on a second goroutine (the package doc's Scans): less wall time
	// per entry for more CPU time in all. Off by default; with
	// GOMAXPROCS 1 it stays off.
	ReadAhead bool
	// Name names the table in errors; OpenTable uses the path.
	Name string
	// Keys says how the table's keys are read: KeysDetect (the zero
	// value), KeysInternal or KeysPlain.
	Keys KeyForm
}

// KeyForm says whether a table's keys are internal keys or plain keys.
//
// A table of a database holds internal keys: the user key and an 8-byte
// trailer of sequence number and kind. A table written by LevelDB's
// TableBuilder directly (LevelDB's table tests, golang/leveldb's
// testdata/h.ldb) holds the keys it was given, plain keys. Nothing in the
// file says which: an internal key is bytes like any other.
type KeyForm uint8

const (
	// KeysDetect reads a table as plain keys only when its index cannot
	// belong to a table of internal keys: a separator shorter than an
	// internal key's 8-byte trailer (LevelDB's last separator is mostly
	// one byte: the successor of the last key's first byte), or
	// separators out of the internal key order but in bytewise order. A
	// table of internal keys is never read as plain keys, whatever the
	// bytes of its trailers; a table of plain keys whose separators all
	// look like internal keys reads as internal keys, and its first data
	// key that is none (shorter than 8 bytes, a kind other than 0 or 1)
	// is reported as corrupt: open it with KeysPlain.
	KeysDetect KeyForm = iota
	// KeysInternal reads the keys as internal keys (as OpenDB does).
	KeysInternal
	// KeysPlain reads the keys as plain keys.
	KeysPlain
)

// Table is one open LevelDB table. It is safe for concurrent use: many
// goroutines may call Get and use iterators of their own at once.
//
// A table of plain keys (KeyForm) reads as one of user keys, each a value
// at sequence number 0: Get finds a key at any sequence number, its
// iterators' Seq is 0 and Kind KindValue, InternalKey is the key itself,
// and its filter (LevelDB's TableBuilder filters the keys it is given) is
// consulted with the whole key.
type Table struct {
	core      *lsmtable.Table
	keys      KeyForm // KeysDetect until init decides
	footer    tableFooter
	filter    *filterBlock // nil: no filter consulted
	metaNames []string     // the metaindex's keys
}

// Kind says what an internal key records: a value or a deletion (LevelDB's
// ValueType, db/dbformat.h).
type Kind = lsmtable.Kind

const (
	// KindDeletion marks a user key deleted as of its sequence number.
	KindDeletion = lsmtable.KindDeletion
	// KindValue records a value for the user key.
	KindValue = lsmtable.KindValue
)

// MaxSequence is the largest sequence number, 2^56-1: a sequence number
// takes the trailer's top 56 bits. Table.Get at MaxSequence finds the
// newest version.
const MaxSequence = lsmtable.MaxSequence

// Entry is one version of a user key, as Table.Get returns it.
type Entry = lsmtable.Entry

// TableIterator walks a table's entries, every version of every user key,
// in internal key order (see lsmtable.TableIterator's methods).
type TableIterator = lsmtable.TableIterator

// IterOptions bound an iterator by user key: LowerBound inclusive,
// UpperBound exclusive, nil unbounded. Table.NewIter, DB.NewIterator and
// SetBounds copy them, as package merge's and reader's iterators do.
type IterOptions = lsmtable.IterOptions

type tableFooter struct {
	metaindex, index             format.BlockHandle
	metaindexType, indexType     byte
	metaindexStored, indexStored int
}

// OpenTable opens the LevelDB table at path, mapping it into memory
// unless o.NoMmap. Errors: the file's own, and errors wrapping
// format.ErrCorrupt (ErrNotTable too, for a file without LevelDB's magic
// number) naming path, the section and the offset.
func OpenTable(path string, o *TableOptions) (*Table, error) {
	t := newTable(o)
	core, err := lsmtable.Open(path, t.options(o), t.init)
	if err != nil {
		return nil, fmt.Errorf("leveldb: %w", err)
	}
	t.core = core
	return t, nil
}

// NewTable opens the LevelDB table of size bytes read through r. Errors
// as OpenTable's, named by o.Name.
func NewTable(r io.ReaderAt, size int64, o *TableOptions) (*Table, error) {
	t := newTable(o)
	core, err := lsmtable.New(r, size, t.options(o), t.init)
	if err != nil {
		return nil, err
	}
	t.core = core
	return t, nil
}

func newTable(o *TableOptions) *Table {
	t := &Table{}
	if o != nil {
		t.keys = o.Keys
	}
	return t
}

// PlainKeys reports whether the table's keys are read as plain keys
// (KeyForm).
func (t *Table) PlainKeys() bool { return t.keys == KeysPlain }

func (t *Table) options(o *TableOptions) *lsmtable.Options {
	opts := &lsmtable.Options{}
	if o != nil {
		opts.Cache, opts.NoMmap, opts.Name, opts.ReadAhead = o.Cache, o.NoMmap, o.Name, o.ReadAhead
	}
	return opts
}

// init reads the footer, the index and the metaindex (and the filter).
func (t *Table) init(core *lsmtable.Table) error {
	core.Codec = blockCodec{}
	core.Kinds = lsmtable.KindsMask(KindDeletion, KindValue)
	if err := t.readFooter(core); err != nil {
		return err
	}
	if err := t.readIndex(core); err != nil {
		return err
	}
	if err := t.readMetaindex(core); err != nil {
		return err
	}
	if t.filter != nil {
		core.Filter = t.filter
	}
	return nil
}

// Get returns the newest version of user key key whose sequence number is
// at or below seq (MaxSequence: the newest of all). A deletion is
// returned as such, with Kind KindDeletion. It consults the table's bloom
// filter first (when it has LevelDB's), and returns reader.ErrNotFound
// when the table holds no such version; otherwise an error wrapping
// format.ErrCorrupt for damage met, or a read error.
func (t *Table) Get(key []byte, seq uint64) (Entry, error) { return t.core.Get(key, seq) }

// GetAppend is Get without the allocation: the entry's Value is dst with
// the value appended (by append's rules), and its Key is key itself, not
// a copy. Errors as Get's.
func (t *Table) GetAppend(dst, key []byte, seq uint64) (Entry, error) {
	return t.core.GetAppend(dst, key, seq)
}

// NewIter returns an unpositioned iterator over the table, within o's
// bounds (nil: unbounded). Close it before the table.
func (t *Table) NewIter(o *IterOptions) *TableIterator { return t.core.NewIter(o) }

// Verify reads the whole table and checks what reads of it rely on:
// every data block's checksum and entries; keys that are internal keys
// in strictly increasing order, each block's keys above the separator
// before it and at or below its own; and the filter matching every user
// key of its blocks (a filter that misses a key would make Get miss it).
// It returns the number of entries checked, and the first error found,
// wrapping format.ErrCorrupt and naming the table, the section and the
// offset.
func (t *Table) Verify() (entries int64, err error) { return t.core.Verify() }

// Close releases the table's mapping, file and cached blocks. Iterators
// must be closed first; later calls return ErrClosed.
func (t *Table) Close() error { return t.core.Close() }

// Name returns the name the table's errors carry: OpenTable's path, or
// TableOptions.Name.
func (t *Table) Name() string { return t.core.Name() }

// readFooter reads and checks the footer: the magic number, and two block
// handles inside the file.
func (t *Table) readFooter(core *lsmtable.Table) error {
	size := core.Size()
	if size < FooterLen {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer: not a LevelDB table", size, FooterLen)
	}
	off := size - FooterLen
	buf, err := core.Read(off, FooterLen, nil)
	if err != nil {
		return err
	}
	if m := binary.LittleEndian.Uint64(buf[40:]); m != Magic {
		return &lsmtable.NotTableError{Err: format.Corruptf(format.SectionFooter, off+40, "magic number %#016x is not LevelDB's %#016x", m, uint64(Magic)), Sentinel: ErrNotTable}
	}
	meta, n1 := codec.DecodeHandle(buf[:40])
	if n1 <= 0 {
		return format.Corruptf(format.SectionFooter, off, "bad metaindex block handle")
	}
	idx, n2 := codec.DecodeHandle(buf[n1:40])
	if n2 <= 0 {
		return format.Corruptf(format.SectionFooter, off+int64(n1), "bad index block handle")
	}
	for _, h := range []format.BlockHandle{meta, idx} {
		if !lsmtable.Inside(h, uint64(off)) {
			return format.Corruptf(format.SectionFooter, off, "block handle (offset %d, %d bytes) lies outside the %d bytes before the footer", h.Offset, h.Length, off)
		}
	}
	t.footer.metaindex, t.footer.index = meta, idx
	return nil
}

// Block compression types, the trailer's first byte. LevelDB 1.23 writes
// 0 and 1; Mojang's fork of LevelDB (Minecraft Bedrock Edition's worlds,
// github.com/Mojang/leveldb-mcpe, its compressors' SERIALIZE_IDs) adds
// 2, 3 and 4, computing the trailer's masked CRC-32C the same way, over
// the compressed bytes and the type byte. LevelDB after 1.23 numbers
// zstd 2 (kZstdCompression): a type 2 block that starts with zstd's
// frame magic is read as zstd, which a zlib stream cannot start with
// (its header check fails).
const (
	CompressionNone    byte = 0 // stored raw
	CompressionSnappy  byte = 1 // snappy's block format
	CompressionZlib    byte = 2 // Mojang's ZlibCompressor: a zlib stream (RFC 1950); or LevelDB's zstd frame
	CompressionZstd    byte = 3 // Mojang's ZstdCompressor: one zstd frame (RFC 8878) with its content size
	CompressionZlibRaw byte = 4 // Mojang's ZlibCompressorRaw: raw deflate (RFC 1951), Bedrock's default
)

// checkBlock is codec.CheckBlock for LevelDB's and Mojang's block types.
func checkBlock(section string, off int64, buf []byte) ([]byte, byte, error) {
	if len(buf) >= format.BlockTrailerLen {
		switch typ := buf[len(buf)-format.BlockTrailerLen]; typ {
		case CompressionNone, CompressionSnappy, CompressionZlib, CompressionZstd, CompressionZlibRaw:
			// codec.CheckBlock checks the checksum and passes these types
			// on (its 2 to 4 are this module's own types: decode tells
			// them apart).
		default:
			// Checked first so that an unknown type reads as such, not as a
			// checksum mismatch (the type byte is under the checksum).
			if _, _, err := codec.CheckBlock(section, off, buf); err != nil {
				return nil, 0, err
			}
			return nil, 0, format.Corruptf(section, off+int64(len(buf)-format.BlockTrailerLen), "block compression type %d: LevelDB tables use 0 (none) or 1 (snappy), Mojang's 2 (zlib), 3 (zstd) or 4 (raw deflate)", typ)
		}
	}
	return codec.CheckBlock(section, off, buf)
}

// maxBlockLen bounds a decoded block, in bytes: LevelDB cuts blocks near
// its block size (4 KiB by default), and a key or value larger than that
// makes a block of its own; 1 GiB is beyond any LevelDB writes.
const maxBlockLen = 1 << 30

// decode returns a checked block's contents, decoded into dst's spare
// capacity or a new buffer if compressed, aliasing stored if raw. Mojang's
// zlib blocks record no decoded size: the output grows as inflated, up to
// maxBlockLen.
func decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	switch {
	case typ == CompressionZstd || typ == CompressionZlib && zstdFrame(stored):
		// One frame with its content size, as codec's own zstd type.
		return codec.DecodeBlock(section, off, stored, format.BlockTypeZstd, maxBlockLen, dst[:0])
	case typ == CompressionZlib || typ == CompressionZlibRaw:
		return rocksblock.Inflate(section, off, stored, typ == CompressionZlib, maxBlockLen, dst[:0])
	}
	return codec.DecodeBlock(section, off, stored, typ, maxBlockLen, dst[:0])
}

// readIndex reads the index block into the table's index: separators
// that are internal keys (or plain keys) in increasing order, handles
// that follow one another before the footer.
func (t *Table) readIndex(core *lsmtable.Table) error {
	contents, typ, err := core.ReadBlock(format.SectionIndex, t.footer.index)
	if err != nil {
		return err
	}
	t.footer.indexType, t.footer.indexStored = typ, int(t.footer.index.Length)
	off := int64(t.footer.index.Offset)
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, off, contents); err != nil || lsmtable.EmptyBlock(contents) {
		if t.keys == KeysDetect {
			t.keys = KeysInternal
		}
		return err
	}
	detect := t.keys == KeysDetect
	if detect {
		t.keys = KeysInternal
	}
	core.Index.SetPlain(t.keys == KeysPlain)
	// With LevelDB's restart interval of 1 the block holds each
	// separator whole, one per restart point.
	core.Index.Grow(it.NumRestarts(), len(contents))
	limit := uint64(core.Size() - FooterLen)
	plain, err := appendIndex(&core.Index, &it, off, limit, detect)
	if plain {
		// A separator only plain keys explain: read the index again as
		// plain keys.
		t.keys = KeysPlain
		core.Index = lsmtable.Index{}
		core.Index.SetPlain(true)
		_, err = appendIndex(&core.Index, &it, off, limit, false)
	}
	if err != nil {
		return err
	}
	core.Index.Finish()
	return nil
}

// appendIndex appends the index block's separators and handles to x.
// With detect, a separator that a table of internal keys cannot have but
// one of plain keys can (KeysDetect: shorter than a trailer, or not above
// the separator before it in the internal key order but above it in the
// bytewise order) stops it with plain true; any other error is the
// index's corruption.
func appendIndex(x *lsmtable.Index, it *codec.BlockIter, off int64, limit uint64, detect bool) (plain bool, err error) {
	for ok := it.First(); ok; ok = it.Next() {
		// Any trailer will do: LevelDB tags a shortened separator with
		// its largest sequence number and kind 1, Pebble with kind 17.
		h, n := codec.DecodeHandle(it.Value())
		if n <= 0 || n != len(it.Value()) {
			return false, format.Corruptf(format.SectionIndex, off, "entry %d: bad block handle", x.Len())
		}
		k := it.Key()
		if err := x.Append(k, h, limit); err != nil {
			if detect {
				if i := x.Len(); len(k) < trailerLen || i > 0 && compareKeys(x.Key(i-1), k) >= 0 && bytes.Compare(x.Key(i-1), k) < 0 {
					return true, nil
				}
			}
			return false, format.Corruptf(format.SectionIndex, off, "%v", err)
		}
	}
	return false, it.Err()
}

// zstdFrame reports whether stored starts with a zstd frame's magic
// number (RFC 8878), 0xFD2FB528 little-endian.
func zstdFrame(stored []byte) bool {
	return len(stored) >= 4 && binary.LittleEndian.Uint32(stored) == 0xFD2FB528
}

// blockCodec is LevelDB's block trailer and compression: a masked CRC-32C,
// raw or snappy blocks, and Mojang's zlib blocks.
type blockCodec struct{}

func (blockCodec) Check(section string, off int64, buf []byte) ([]byte, byte, error) {
	return checkBlock(section, off, buf)
}

func (blockCodec) Decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	return decode(section, off, stored, typ, dst)
}

func (blockCodec) DecodedLen(typ byte, stored []byte) (int, bool) {
	if typ != format.BlockTypeSnappy {
		return 0, false
	}
	n, err := snappy.DecodedLen(stored)
	return n, err == nil
}
