package rocksdb

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// Index types (include/rocksdb/table.h, BlockBasedTableOptions::IndexType),
// recorded as a fixed32 in rocksdb.block.based.table.index.type.
const (
	indexBinarySearch          = 0
	indexHashSearch            = 1 // a binary search index, plus prefix hashes it does not need
	indexTwoLevel              = 2 // partitions under a top-level index
	indexBinarySearchFirstKey  = 3 // each handle followed by the block's first key
	propIndexType              = "rocksdb.block.based.table.index.type"
	propIndexKeyIsUserKey      = "rocksdb.index.key.is.user.key"
	propIndexValueDeltaEncoded = "rocksdb.index.value.is.delta.encoded"
)

var indexTypeNames = map[uint32]string{
	indexBinarySearch:         "binary-search",
	indexHashSearch:           "hash-search",
	indexTwoLevel:             "two-level",
	indexBinarySearchFirstKey: "binary-search-with-first-key",
}

// indexFormat is how a table's index blocks encode their entries.
type indexFormat struct {
	userKeys bool // separators are user keys (rocksdb.index.key.is.user.key)
	delta    bool // values after the first of a run of shared keys hold a size delta
	firstKey bool // each value ends with the block's first internal key
}

// readIndex flattens the index (one block, or a two-level index's
// partitions) into core.Index.
func (t *Table) readIndex(core *lsmtable.Table) error {
	h := t.footer.index
	if t.footer.version >= 6 {
		var ok bool
		if h, ok = t.meta[metaIndex]; !ok {
			return format.Corruptf(SectionMetaindex, int64(t.footer.metaindex.Offset), "format_version %d table without the %s meta block", t.footer.version, metaIndex)
		}
	}
	if v, ok := t.propMap[propIndexType]; ok {
		if len(v) != 4 {
			return format.Corruptf(SectionProperties, int64(t.meta[metaProperties].Offset), "%s of %d bytes, not 4", propIndexType, len(v))
		}
		t.indexType = binary.LittleEndian.Uint32(v)
		if _, known := indexTypeNames[t.indexType]; !known {
			return fmt.Errorf("%w: index type %d", ErrUnsupported, t.indexType)
		}
	}
	var f indexFormat
	userKeys, _ := t.NumericProperty(propIndexKeyIsUserKey)
	delta, _ := t.NumericProperty(propIndexValueDeltaEncoded)
	f.userKeys, f.delta = userKeys != 0, delta != 0
	limit := uint64(t.footer.offset)
	if t.indexType != indexTwoLevel {
		f.firstKey = t.indexType == indexBinarySearchFirstKey
		contents, _, err := core.ReadBlock(format.SectionIndex, h)
		if err != nil {
			return err
		}
		err = decodeIndex(format.SectionIndex, int64(h.Offset), contents, f, func(sep []byte, bh format.BlockHandle) error {
			if err := core.Index.Append(sep, bh, limit); err != nil {
				return format.Corruptf(format.SectionIndex, int64(h.Offset), "%v", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		core.Index.Finish()
		return nil
	}
	top, _, err := core.ReadBlock(SectionTopIndex, h)
	if err != nil {
		return err
	}
	var parts []format.BlockHandle
	err = decodeIndex(SectionTopIndex, int64(h.Offset), top, f, func(_ []byte, ph format.BlockHandle) error {
		if !lsmtable.Inside(ph, limit) {
			return format.Corruptf(SectionTopIndex, int64(h.Offset), "partition %d (offset %d, %d bytes) lies outside the file", len(parts), ph.Offset, ph.Length)
		}
		parts = append(parts, ph)
		return nil
	})
	if err != nil {
		return err
	}
	t.partitions = len(parts)
	for _, ph := range parts {
		contents, _, err := core.ReadBlock(format.SectionIndex, ph)
		if err != nil {
			return err
		}
		err = decodeIndex(format.SectionIndex, int64(ph.Offset), contents, f, func(sep []byte, bh format.BlockHandle) error {
			if err := core.Index.Append(sep, bh, limit); err != nil {
				return format.Corruptf(format.SectionIndex, int64(ph.Offset), "%v", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	core.Index.Finish()
	return nil
}

// decodeIndex calls fn with each entry of an index block: the separator
// as an internal key (a user-key separator s becomes s with trailer 0,
// which sorts after every version of s and before any larger user key,
// as RocksDB's user-key index reads it) and the block handle. Entries
// are RocksDB's block entries, read one after another: shared and
// non-shared key lengths (varints), the value's length too unless values
// are delta-encoded, the key's new bytes, the value. A delta-encoded
// value (table/format.cc, IndexValue) is a whole handle where the key
// shares no bytes with the one before, else the size's difference from
// the previous handle's (a zigzag varint), the block following the
// previous one and its trailer.
func decodeIndex(section string, off int64, contents []byte, f indexFormat, fn func(sep []byte, h format.BlockHandle) error) error {
	n := len(contents)
	if n < 4 {
		return format.Corruptf(section, off, "index block of %d bytes is shorter than its restart count", n)
	}
	restarts := uint64(binary.LittleEndian.Uint32(contents[n-4:]) &^ (1 << 31))
	if restarts == 0 || 4*restarts+4 > uint64(n) {
		return format.Corruptf(section, off, "index block of %d bytes cannot hold %d restart points", n, restarts)
	}
	end := n - 4 - int(4*restarts)
	var key, sep []byte
	var prev format.BlockHandle
	havePrev := false
	for p := 0; p < end; {
		at := off + int64(p)
		shared, m1 := binary.Uvarint(contents[p:end])
		if m1 <= 0 {
			return format.Corruptf(section, at, "bad entry header")
		}
		p += m1
		unshared, m2 := binary.Uvarint(contents[p:end])
		if m2 <= 0 {
			return format.Corruptf(section, at, "bad entry header")
		}
		p += m2
		vlen := uint64(math.MaxUint32)
		if !f.delta {
			var m3 int
			if vlen, m3 = binary.Uvarint(contents[p:end]); m3 <= 0 {
				return format.Corruptf(section, at, "bad entry header")
			}
			p += m3
		}
		if shared > uint64(len(key)) || unshared > uint64(end-p) {
			return format.Corruptf(section, at, "entry shares %d bytes of a %d-byte key and adds %d of %d left", shared, len(key), unshared, end-p)
		}
		key = append(key[:shared], contents[p:p+int(unshared)]...)
		p += int(unshared)
		vend := end
		if !f.delta {
			if vlen > uint64(end-p) {
				return format.Corruptf(section, at, "value of %d bytes overruns the block", vlen)
			}
			vend = p + int(vlen)
		}
		v := contents[p:vend]
		var h format.BlockHandle
		if f.delta && shared > 0 {
			if !havePrev {
				return format.Corruptf(section, at, "delta-encoded handle without a handle before it")
			}
			u, m := binary.Uvarint(v)
			if m <= 0 {
				return format.Corruptf(section, at, "bad delta-encoded handle")
			}
			d := int64(u>>1) ^ -int64(u&1)
			size := int64(prev.Length) + d
			if size < 0 {
				return format.Corruptf(section, at, "delta-encoded handle of negative size")
			}
			h = format.BlockHandle{Offset: prev.End(), Length: uint64(size)} // End: after the trailer
			v = v[m:]
		} else {
			o, m := binary.Uvarint(v)
			if m <= 0 {
				return format.Corruptf(section, at, "bad block handle")
			}
			s, m2 := binary.Uvarint(v[m:])
			if m2 <= 0 {
				return format.Corruptf(section, at, "bad block handle")
			}
			h = format.BlockHandle{Offset: o, Length: s}
			v = v[m+m2:]
		}
		if f.firstKey {
			kl, m := binary.Uvarint(v)
			if m <= 0 || kl > uint64(len(v)-m) {
				return format.Corruptf(section, at, "bad first key")
			}
			v = v[m+int(kl):]
		}
		if !f.delta && len(v) != 0 {
			return format.Corruptf(section, at, "%d bytes after the block handle", len(v))
		}
		p = vend - len(v)
		prev, havePrev = h, true
		sep = append(sep[:0], key...)
		if f.userKeys {
			sep = append(sep, 0, 0, 0, 0, 0, 0, 0, 0)
		}
		if err := fn(sep, h); err != nil {
			return err
		}
	}
	return nil
}
