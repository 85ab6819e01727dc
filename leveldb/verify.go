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
	IndexCompressed     bool               // the index block is stored compressed
	MetaindexCompressed bool               // the metaindex block is stored compressed (goleveldb, Mojang)
	MetaBlocks          []string           // the metaindex's keys, such as "filter.leveldb.BuiltinBloomFilter2"
	Filter              string             // the filter policy Get consults ("leveldb.BuiltinBloomFilter2" or "leveldb.BuiltinBloomFilter"), or "" for none
	Filters             int                // filters in the filter block (one per 2 KiB of data-block offsets)

	// IndexCompression and MetaindexCompression are the blocks' stored
	// types: CompressionNone, CompressionSnappy, or Mojang's
	// CompressionZlib or CompressionZlibRaw.
	IndexCompression, MetaindexCompression byte
	// PlainKeys says the keys are read as plain keys (KeyForm).
	PlainKeys bool
}

// Info returns the table's layout.
func (t *Table) Info() TableInfo {
	info := TableInfo{
		Size:                 t.core.Size(),
		DataBlocks:           t.core.Index.Len(),
		Index:                t.footer.index,
		Metaindex:            t.footer.metaindex,
		IndexCompressed:      t.footer.indexType != format.BlockTypeRaw,
		MetaindexCompressed:  t.footer.metaindexType != format.BlockTypeRaw,
		IndexCompression:     t.footer.indexType,
		MetaindexCompression: t.footer.metaindexType,
		PlainKeys:            t.PlainKeys(),
		MetaBlocks:           append([]string(nil), t.metaNames...),
		Filter:               t.filterName(),
	}
	if t.filter != nil {
		info.Filters = t.filter.num
	}
	return info
}
