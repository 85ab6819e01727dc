package rocksdb

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/rocksblock"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// Property is one entry of a table's rocksdb.properties block.
type Property struct {
	Name  string // RocksDB's name, such as "rocksdb.num.entries"
	Value []byte // the raw value: a varint for RocksDB's numeric properties
}

// Properties returns every entry of the table's properties block, in the
// block's (bytewise) order. The values are the caller's to keep, not to
// change.
func (t *Table) Properties() []Property { return append([]Property(nil), t.props...) }

// Property returns the raw value of the property named name.
func (t *Table) Property(name string) ([]byte, bool) {
	v, ok := t.propMap[name]
	return v, ok
}

// numericProperties are the properties RocksDB writes as varint64
// (table/table_properties.cc, TablePropertiesNames; the data block and
// index restart intervals and the separated-values flag of newer
// releases too).
var numericProperties = map[string]bool{
	"rocksdb.original.file.number": true, "rocksdb.data.size": true, "rocksdb.index.size": true,
	"rocksdb.index.partitions": true, "rocksdb.top-level.index.size": true,
	"rocksdb.index.key.is.user.key": true, "rocksdb.index.value.is.delta.encoded": true,
	"rocksdb.udi.is.primary.index": true,
	"rocksdb.filter.size":          true, "rocksdb.raw.key.size": true, "rocksdb.raw.value.size": true,
	"rocksdb.num.data.blocks": true, "rocksdb.num.data.blocks.compression.rejected": true,
	"rocksdb.num.data.blocks.compression.bypassed": true, "rocksdb.num.uniform.blocks": true,
	"rocksdb.num.entries": true, "rocksdb.num.filter_entries": true, "rocksdb.deleted.keys": true,
	"rocksdb.merge.operands": true, "rocksdb.num.range-deletions": true, "rocksdb.format.version": true,
	"rocksdb.fixed.key.length": true, "rocksdb.column.family.id": true, "rocksdb.creation.time": true,
	"rocksdb.oldest.key.time": true, "rocksdb.newest.key.time": true, "rocksdb.file.creation.time": true,
	"rocksdb.sample_for_compression.slow.data.size": true, "rocksdb.sample_for_compression.fast.data.size": true,
	"rocksdb.tail.start.offset": true, "rocksdb.user.defined.timestamps.persisted": true,
	"rocksdb.key.largest.seqno": true, "rocksdb.key.smallest.seqno": true,
	"rocksdb.data.block.restart.interval": true, "rocksdb.index.block.restart.interval": true,
	"rocksdb.separate.key.value.in.data.block": true,
}

// NumericProperty returns a numeric property's value; ok is false when
// the table lacks it or its value is not a varint.
func (t *Table) NumericProperty(name string) (uint64, bool) {
	v, ok := t.propMap[name]
	if !ok {
		return 0, false
	}
	n, m := binary.Uvarint(v)
	return n, m > 0 && m == len(v)
}

// IsNumericProperty reports whether RocksDB writes the property named
// name as a varint64.
func IsNumericProperty(name string) bool { return numericProperties[name] }

// readProperties reads the properties block, when the table has one
// (RocksDB writes it into every table).
func (t *Table) readProperties(core *lsmtable.Table) error {
	t.propMap = map[string][]byte{}
	h, ok := t.meta[metaProperties]
	if !ok {
		return nil
	}
	contents, err := t.readPropertiesBlock(core, h)
	if err != nil {
		return err
	}
	err = eachEntry(SectionProperties, int64(h.Offset), contents, func(k, v []byte) error {
		name := string(k)
		val := append([]byte(nil), v...)
		if _, m := binary.Uvarint(val); numericProperties[name] && (m <= 0 || m != len(val)) {
			return format.Corruptf(SectionProperties, int64(h.Offset), "%s: value % x is not a varint", name, val)
		}
		t.props = append(t.props, Property{Name: name, Value: val})
		t.propMap[name] = val
		return nil
	})
	if err != nil {
		return err
	}
	if v, ok := t.propMap["rocksdb.compression"]; ok {
		t.compression = compressionProperty(string(v))
	}
	return nil
}

// compressionProperty returns the names of the compressions a table's
// rocksdb.compression property records: a name before format_version 7,
// from it "MANAGER;TYPES;" with each compression type used as two
// uppercase hex digits (table/block_based/block_based_table_builder.cc),
// shown as RocksDB's names joined by commas, "NoCompression" for none.
func compressionProperty(v string) string {
	manager, rest, ok := strings.Cut(v, ";")
	types, tail, ok2 := strings.Cut(rest, ";")
	if !ok || !ok2 || tail != "" || len(types)%2 != 0 {
		return v
	}
	var names []string
	for i := 0; i < len(types); i += 2 {
		b, err := strconv.ParseUint(types[i:i+2], 16, 8)
		if err != nil {
			return v
		}
		names = append(names, rocksblock.CompressionName(byte(b)))
	}
	out := "NoCompression"
	if len(names) > 0 {
		out = strings.Join(names, ",")
	}
	if manager != "" {
		out += " (" + manager + ")"
	}
	return out
}

const propGlobalSeqno = "rocksdb.external_sst_file.global_seqno"

// readPropertiesBlock reads the properties block. RocksDB's ingestion with
// write_global_seqno rewrites the global sequence number inside the block
// without updating its checksum, so a raw block whose checksum fails is
// checked once more with that value zeroed, as RocksDB's
// table/meta_blocks.cc does; it is read with the value it holds.
func (t *Table) readPropertiesBlock(core *lsmtable.Table, h format.BlockHandle) ([]byte, error) {
	contents, _, err := core.ReadBlock(SectionProperties, h)
	if err == nil {
		return contents, nil
	}
	buf, rerr := core.Read(int64(h.Offset), int(h.Length)+rocksblock.TrailerLen, nil)
	if rerr != nil || buf[h.Length] != rocksblock.NoCompression {
		return nil, err
	}
	raw := append([]byte(nil), buf...)
	at := -1
	var it codec.BlockIter
	if it.Init(SectionProperties, int64(h.Offset), raw[:h.Length]) != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Key()) == propGlobalSeqno && len(it.Value()) == 8 {
			at = int(uintptr(unsafe.Pointer(unsafe.SliceData(it.Value()))) - uintptr(unsafe.Pointer(unsafe.SliceData(raw))))
		}
	}
	if at < 0 {
		return nil, err
	}
	zeroed := append([]byte(nil), raw...)
	clear(zeroed[at : at+8])
	if _, _, e := t.codec.Check(SectionProperties, int64(h.Offset), zeroed); e != nil {
		return nil, err
	}
	return raw[:h.Length], nil
}
