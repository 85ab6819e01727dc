package leveldb

import (
	"github.com/sstkit/sstable/format"
)

// TableInfo describes a table's layout, as read at open.
type TableInfo struct {
	Size                int64              // the file's size, in bytes
	DataBlocks          int                // data blocks, as the index block lists them
	Index               format.BlockHandle // the index block's handle
	Metaindex           format.BlockHandle // the metaindex block's handle
	IndexCompressed     bool               // the index block is stored snappy-compressed
	MetaindexCompressed bool               // the metaindex block is stored snappy-compressed (goleveldb)
	MetaBlocks          []string           // the metaindex's keys, such as "filter.leveldb.BuiltinBloomFilter2"
	Filter              string             // the filter policy Get consults ("leveldb.BuiltinBloomFilter2" or "leveldb.BuiltinBloomFilter"), or "" for none
	Filters             int                // filters in the filter block (one per 2 KiB of data-block offsets)
}

// Info returns the table's layout.
func (t *Table) Info() TableInfo {
	info := TableInfo{
		Size:                t.size,
		DataBlocks:          t.index.len(),
		Index:               t.footer.index,
		Metaindex:           t.footer.metaindex,
		IndexCompressed:     t.footer.indexType != format.BlockTypeRaw,
		MetaindexCompressed: t.footer.metaindexType != format.BlockTypeRaw,
		MetaBlocks:          append([]string(nil), t.metaNames...),
		Filter:              t.filterName(),
	}
	if t.filter != nil {
		info.Filters = t.filter.num
	}
	return info
}

// Verify reads the whole table and checks what reads of it rely on:
// every data block's checksum and entries; keys that are internal keys
// in strictly increasing order, each block's keys above the separator
// before it and at or below its own; and the filter matching every user
// key of its blocks (a filter that misses a key would make Get miss it).
// It returns the number of entries checked, and the first error found,
// wrapping format.ErrCorrupt and naming the table, the section and the
// offset.
func (t *Table) Verify() (entries int64, err error) {
	it := t.NewIter(nil)
	defer it.Close()
	if it.err != nil {
		return 0, it.err
	}
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	var prev []byte
	for i := 0; i < t.index.len(); i++ {
		if !it.loadBlock(i, false, i > 0) {
			return entries, it.err
		}
		off := int64(t.index.handles[i].Offset)
		sep := t.index.key(i)
		var prevSep []byte
		if i > 0 {
			prevSep = t.index.key(i - 1)
		}
		for ok := it.blk.First(); ok; ok = it.blk.Next() {
			if !it.settle() {
				return entries, it.err
			}
			k := it.blk.Key()
			if prev != nil && compareKeys(prev, k) >= 0 {
				return entries, t.named(format.Corruptf(format.SectionDataBlock, off, "key %q does not sort after the key before it", k))
			}
			if prevSep != nil && compareKeys(k, prevSep) <= 0 {
				return entries, t.named(format.Corruptf(format.SectionDataBlock, off, "key %q does not sort after the separator %q of the block before it", k, prevSep))
			}
			if compareKeys(k, sep) > 0 {
				return entries, t.named(format.Corruptf(format.SectionDataBlock, off, "key %q sorts after the block's separator %q in the index", k, sep))
			}
			if t.filter != nil && !t.filter.mayContain(uint64(off), it.user) {
				return entries, t.named(format.Corruptf(SectionFilter, off, "the filter for the data block at offset %d does not match its key %q", off, it.user))
			}
			prev = append(prev[:0], k...)
			entries++
		}
		if err := it.blk.Err(); err != nil {
			return entries, t.named(err)
		}
	}
	return entries, nil
}
