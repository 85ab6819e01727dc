package rocksdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/internal/rocksblock"
	"github.com/sstkit/sstable/merge"
)

// Entry is one version of a user key, as Table.Get returns it.
type Entry = lsmtable.Entry

// TableIterator walks a table's point entries, every version of every
// user key, in the table's internal key order: user key ascending
// (descending in a reverse bytewise table), then sequence number
// descending. Its methods are lsmtable.TableIterator's: First, Last,
// Next, Prev, SeekGE, SeekGEAt, SeekLT, SetBounds, Valid, Key, Seq,
// Kind, Value, InternalKey, Err, Close. Key, Value and InternalKey are
// valid until the next move.
type TableIterator = lsmtable.TableIterator

// IterOptions bound an iterator by user key: LowerBound inclusive,
// UpperBound exclusive (in the table's order), nil unbounded. The slices
// are kept, not copied.
type IterOptions = lsmtable.IterOptions

// NewIter returns an unpositioned iterator over the table's point
// entries within o's bounds (nil: unbounded). Close it before the table.
func (t *Table) NewIter(o *IterOptions) *TableIterator { return t.core.NewIter(o) }

// Get returns the newest version of user key key at or below sequence
// number seq (MaxSequence: the newest of all), deletions included (Kind
// says), after consulting the table's filter. It returns
// reader.ErrNotFound when the table holds no such version. For a merge
// operand or a blob index it returns the Entry and an *UnresolvedError:
// its Value is not the key's value. A version under a newer range
// deletion of the table is returned as stored; Level and RangeDeletions
// apply them. Other errors wrap format.ErrCorrupt, or are read errors.
func (t *Table) Get(key []byte, seq uint64) (Entry, error) {
	e, err := t.core.Get(key, seq)
	if err == nil && (e.Kind == KindMerge || e.Kind == KindBlobIndex) {
		return e, &UnresolvedError{Table: t.Name(), Key: e.Key, Seq: e.Seq, Kind: e.Kind}
	}
	return e, err
}

// GetAppend is Get without the allocation: the entry's Value is dst with
// the value appended (by append's rules), and its Key is key itself, not
// a copy (an UnresolvedError's Key is a copy). Errors as Get's.
func (t *Table) GetAppend(dst, key []byte, seq uint64) (Entry, error) {
	e, err := t.core.GetAppend(dst, key, seq)
	if err == nil && (e.Kind == KindMerge || e.Kind == KindBlobIndex) {
		return e, &UnresolvedError{Table: t.Name(), Key: bytes.Clone(e.Key), Seq: e.Seq, Kind: e.Kind}
	}
	return e, err
}

// Verify reads the whole table and checks what reads of it rely on:
// every block's checksum (data blocks, the index and its partitions,
// the meta blocks, the filter), keys that are internal keys in strictly
// increasing order, each data block's keys above the separator before it
// and at or below its own, and the filter matching every key RocksDB
// would look up. It returns the number of point entries checked and the
// first error, wrapping format.ErrCorrupt and naming the table, the
// section and the byte offset.
func (t *Table) Verify() (int64, error) { return t.core.Verify() }

// verifyMeta re-reads the blocks Verify does not reach through the index
// (open read them already; this checks the bytes once more, for a file
// that changed since) and checks the range deletions' bounds.
func (t *Table) verifyMeta(core *lsmtable.Table) error {
	for _, name := range t.metaNames {
		h := t.meta[name]
		var err error
		switch {
		case strings.HasPrefix(name, filterPartition):
			continue // its partitions were checked at open
		case name == metaProperties:
			_, err = t.readPropertiesBlock(core, h)
		default:
			_, _, err = core.ReadBlock(SectionMetaindex+" entry "+name, h)
		}
		if err != nil {
			return err
		}
	}
	for _, d := range t.rangeDels {
		c := bytes.Compare(d.Start, d.End)
		if t.reverse {
			c = -c
		}
		if c > 0 {
			return format.Corruptf(SectionRangeDel, int64(t.meta[metaRangeDel].Offset), "range deletion [%q, %q) ends before it starts", d.Start, d.End)
		}
	}
	return nil
}

// TableInfo describes a table's layout, as read at open.
type TableInfo struct {
	Size            int64              // the file's size, in bytes
	Magic           uint64             // Magic or LegacyMagic
	FormatVersion   uint32             // 0 to 7
	Checksum        string             // "none", "crc32c", "xxhash", "xxhash64" or "xxh3"
	DataBlocks      int                // data blocks, as the index lists them
	IndexType       string             // "binary-search", "hash-search", "two-level", "binary-search-with-first-key"
	IndexPartitions int                // a two-level index's partitions; 0 otherwise
	Index           format.BlockHandle // the (top-level) index block's handle
	Metaindex       format.BlockHandle // the metaindex block's handle
	MetaBlocks      []string           // the metaindex's keys, such as "rocksdb.properties"
	Filter          string             // the filter Get consults, as the metaindex names it ("fullfilter.rocksdb.BuiltinBloomFilter"), or ""
	Comparator      string             // the comparator's name
	Compression     string             // the compressions rocksdb.compression names, such as "Snappy" ("NoCompression" for none; format_version 7 records the ones used)
	RangeDeletions  int                // range deletions stored
	GlobalSeqno     uint64             // an ingested file's global sequence number; 0 for none
}

// Info returns the table's layout.
func (t *Table) Info() TableInfo {
	info := TableInfo{
		Size:            t.core.Size(),
		Magic:           t.footer.magic,
		FormatVersion:   t.footer.version,
		Checksum:        t.footer.checksum.String(),
		DataBlocks:      t.core.Index.Len(),
		IndexType:       indexTypeNames[t.indexType],
		IndexPartitions: t.partitions,
		Index:           t.footer.index,
		Metaindex:       t.footer.metaindex,
		MetaBlocks:      append([]string(nil), t.metaNames...),
		Comparator:      t.comparator,
		Compression:     t.compression,
		RangeDeletions:  len(t.rangeDels),
		GlobalSeqno:     t.globalSeq,
	}
	if t.footer.version >= 6 {
		info.Index = t.meta[metaIndex]
	}
	if t.filter != nil {
		info.Filter = t.filter.name
	}
	return info
}

// CompressionName returns RocksDB's name of a block compression type
// byte, as its properties and sst_dump print it.
func CompressionName(typ byte) string { return rocksblock.CompressionName(typ) }

// Level returns the table as one level of a merge stack, with RocksDB's
// sequence number rules: each user key's newest version; a deletion, a
// single deletion, or a version under a newer range deletion of the same
// table, as a value IsDeletion recognises; the table's range deletions
// as the level's spans, hiding the keys of older levels. A wide-column
// entity shows as its default column's value, a value with a preferred
// sequence number as its value; a merge operand or blob index stops the
// view with an *UnresolvedError, through MergeOptions, when the view
// would show it (a newer level's version of the key hides it, as it
// hides any).
// A reverse bytewise table is refused (ErrUnsupported): merge orders
// keys bytewise.
func (t *Table) Level() (merge.Level, error) {
	if t.reverse {
		return nil, fmt.Errorf("%w: %s: a %s table cannot be a merge level (merge orders keys bytewise)", ErrUnsupported, t.Name(), t.comparator)
	}
	l := &lsmtable.Level{Resolve: t.resolve, Spans: len(t.rangeDels) > 0}
	var smallest, largest []byte
	it := t.core.NewIter(nil)
	if it.First() {
		smallest = append([]byte{}, it.Key()...)
	}
	if it.Last() {
		largest = append([]byte{}, it.Key()...)
	}
	for _, d := range t.rangeDels {
		if smallest == nil || bytes.Compare(d.Start, smallest) < 0 {
			smallest = append([]byte{}, d.Start...)
		}
		if largest == nil || bytes.Compare(d.End, largest) > 0 {
			largest = append([]byte{}, d.End...)
		}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if smallest == nil {
		smallest, largest = []byte{}, []byte{}
	}
	l.Tables = []*lsmtable.LazyTable{lsmtable.Opened(t.core, smallest, largest)}
	return l, nil
}

// resolve turns a key's newest version into the level's value.
func (t *Table) resolve(_ *lsmtable.Table, user []byte, seq uint64, kind Kind, value []byte) ([]byte, error) {
	switch kind {
	case KindValue:
		return value, nil
	case KindWideColumnEntity:
		v, blob, err := DefaultColumn(value)
		if err != nil {
			return nil, t.core.Named(err)
		}
		if blob {
			return blobMark[:], nil
		}
		return v, nil
	case KindValuePreferredSeqno:
		if len(value) < 8 {
			return nil, t.core.Named(format.Corruptf(format.SectionDataBlock, 0, "key %q: a value with a preferred sequence number of %d bytes, shorter than the number", user, len(value)))
		}
		return value[:len(value)-8], nil
	case KindMerge:
		return mergeMark[:], nil
	case KindBlobIndex:
		return blobMark[:], nil
	}
	return nil, t.core.Named(format.Corruptf(format.SectionDataBlock, 0, "key %q @%d: kind %s has no value", user, seq, kind))
}

// The values a level shows for a newest version it cannot resolve: a
// merge operand, a blob index. Recognised by their addresses, as the
// deletion mark is, so no stored value passes for them; merge asks
// Options.Resolve about each value it would show, so a version that
// a newer level hides never stops a read.
var (
	mergeMark = [1]byte{byte(KindMerge)}
	blobMark  = [1]byte{byte(KindBlobIndex)}
)

// markKind returns the kind a mark stands for, or false for a value.
func markKind(value []byte) (Kind, bool) {
	if len(value) != 1 {
		return 0, false
	}
	switch unsafe.SliceData(value) {
	case &mergeMark[0]:
		return KindMerge, true
	case &blobMark[0]:
		return KindBlobIndex, true
	}
	return 0, false
}

// unresolved is MergeOptions' Resolve: a value as it is, the error for a
// mark.
func unresolved(key, value []byte) ([]byte, error) {
	if k, ok := markKind(value); ok {
		return nil, &UnresolvedError{Key: bytes.Clone(key), Kind: k}
	}
	return value, nil
}

// IsDeletion reports whether a level's value is the mark for a deleted
// user key; MergeOptions sets it.
func IsDeletion(value []byte) bool { return lsmtable.IsDeletion(value) }

// MergeOptions returns merge.Options for a stack of this package's levels
// (newest first): deleted keys read as absent, and a key whose newest
// version is a merge operand or a blob index stops the view with an
// *UnresolvedError (Key set; Seq and Table unknown there).
func MergeOptions() *merge.Options {
	return &merge.Options{IsDeletion: IsDeletion, Resolve: unresolved}
}

// errEntity is wrapped for a wide-column entity that does not parse.
var errEntity = errors.New("bad wide-column entity")

// DefaultColumn returns the value of a wide-column entity's default
// column (the column named by the empty string, which sorts first), or
// an empty value when it has none, as RocksDB's Get shows an entity
// (db/wide/wide_column_serialization.h: version 1, a varint count, then
// each column's name and value size, then the values; version 2, the
// sizes grouped first and a type byte per column). blob is true when the
// default column's value is a blob index. Errors wrap format.ErrCorrupt.
func DefaultColumn(entity []byte) (value []byte, blob bool, err error) {
	bad := func(msg string) ([]byte, bool, error) {
		return nil, false, format.Corruptf(format.SectionDataBlock, 0, "%v: %s", errEntity, msg)
	}
	p := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(entity[p:])
		if n <= 0 {
			return 0, false
		}
		p += n
		return v, true
	}
	version, ok := uv()
	if !ok {
		return bad("no version")
	}
	cols, ok := uv()
	if !ok || cols > uint64(len(entity)) {
		return bad("bad column count")
	}
	switch version {
	case 1:
		var first, firstSize uint64
		var total uint64
		for i := uint64(0); i < cols; i++ {
			ns, ok := uv()
			if !ok || ns > uint64(len(entity)-p) {
				return bad("bad column name")
			}
			if i == 0 {
				first = ns
			}
			p += int(ns)
			vs, ok := uv()
			if !ok || vs > uint64(len(entity)) {
				return bad("bad column value size")
			}
			if i == 0 {
				firstSize = vs
			}
			total += vs
		}
		if total != uint64(len(entity)-p) {
			return bad("column values do not fill the entity")
		}
		if cols == 0 || first != 0 {
			return []byte{}, false, nil
		}
		return entity[p : p+int(firstSize)], false, nil
	case 2:
		nameSizes, ok1 := uv()
		valueSizes, ok2 := uv()
		names, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || cols > uint64(len(entity)-p) {
			return bad("bad skip info")
		}
		types := entity[p : p+int(cols)]
		p += int(cols)
		if nameSizes > uint64(len(entity)-p) {
			return bad("bad name sizes")
		}
		ns, _ := binary.Uvarint(entity[p:])
		p += int(nameSizes)
		if valueSizes > uint64(len(entity)-p) {
			return bad("bad value sizes")
		}
		vs, _ := binary.Uvarint(entity[p:])
		p += int(valueSizes)
		if names > uint64(len(entity)-p) {
			return bad("bad names")
		}
		p += int(names)
		if cols == 0 || ns != 0 {
			return []byte{}, false, nil
		}
		if vs > uint64(len(entity)-p) {
			return bad("bad default column value")
		}
		return entity[p : p+int(vs)], types[0] == byte(KindBlobIndex), nil
	}
	return bad(fmt.Sprintf("version %d", version))
}
