package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// index is the layer that says which data block, and where in it, holds
// a key, and walks the blocks in order for iterators. open chooses one
// implementation per reader: blockIndex (one index block, format
// versions 1 and 2), partedIndex (a top-level index over index
// partitions, version 3, index_parted.go) or hashedIndex (a hash index
// from a key straight to its entry, over one of the others for scans,
// index_hash.go). A new index kind is one more implementation; the
// blocks themselves come from the source layer.
type index interface {
	// get looks key up, once the filter has passed it (fk is its
	// prefix, or key itself without a splitter; h is codec.KeyHash(fk)),
	// and appends its value to dst; with has it only reports, by a nil
	// error, that key is there. An absent key gives ErrNotFound.
	get(dst, key, fk []byte, h uint64, has bool) ([]byte, error)

	// initIter points x at the index, for an iterator; the index's
	// first level stays pinned by *pin until the iterator closes.
	initIter(x *indexIter, pin *blockcache.Handle) error

	// seekPrefix positions it on the first entry >= key with prefix
	// prefix when the index has a faster way than SeekGE (a hash index
	// over prefixes); handled is false otherwise.
	seekPrefix(it *Iterator, prefix, key []byte) (ok, handled bool)
}

// blockIndex is a one-level index: the index block, one entry per data
// block, whose key is a separator (>= the block's keys, < the next
// block's) and whose value is the block's handle.
type blockIndex struct {
	src       source
	sec       section
	numBlocks uint64
}

// newBlockIndex returns the index of the index block at h.
func newBlockIndex(src source, h format.BlockHandle, numBlocks uint64) *blockIndex {
	x := &blockIndex{src: src, numBlocks: numBlocks}
	x.sec = section{name: format.SectionIndex, h: h, slot: slotIndex, check: x.check}
	return x
}

// check checks the index block's structure: one restart per entry, one
// entry per data block.
func (x *blockIndex) check(contents []byte, _ bool) error {
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, int64(x.sec.h.Offset), contents); err != nil {
		return err
	}
	if n := it.NumRestarts(); uint64(n) != x.numBlocks {
		return format.Corruptf(format.SectionIndex, int64(x.sec.h.Offset), "%d entries for %d data blocks", n, x.numBlocks)
	}
	return nil
}

func (x *blockIndex) get(dst, key, _ []byte, _ uint64, has bool) ([]byte, error) {
	s := getScratch()
	defer putScratch(s)
	index, err := x.sec.contents(x.src, &s.indexPin)
	if err != nil {
		return dst, err
	}
	if err := s.index.BlockIter.Init(format.SectionIndex, int64(x.sec.h.Offset), index); err != nil {
		return dst, err
	}
	v, err := findIn(x.src, s, key, 0, int64(x.sec.h.Offset))
	if err != nil || has {
		return dst, err
	}
	return append(dst, v...), nil
}

func (x *blockIndex) initIter(it *indexIter, pin *blockcache.Handle) error {
	index, err := x.sec.contents(x.src, pin)
	if err != nil {
		return err
	}
	it.reset(x.src, nil, int64(x.sec.h.Offset))
	return it.BlockIter.Init(format.SectionIndex, int64(x.sec.h.Offset), index)
}

func (x *blockIndex) seekPrefix(*Iterator, []byte, []byte) (bool, bool) { return false, false }

// findIn looks key up through s.index.BlockIter, initialised on the
// index block or on an index partition whose entry 0 is data block base,
// and its data block. The value it returns aliases the mapping or s's
// buffers. indexOff names the index in errors.
func findIn(src source, s *scratch, key []byte, base int, indexOff int64) ([]byte, error) {
	idx := &s.index.BlockIter
	if !idx.SeekGE(key) {
		if err := idx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	contents, h, err := blockAt(src, s, idx, base, indexOff)
	if err != nil {
		return nil, err
	}
	d := &s.data
	if err := d.Init(format.SectionDataBlock, int64(h.Offset), contents); err != nil {
		return nil, err
	}
	if !d.SeekGE(key) {
		if err := d.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	if !bytes.Equal(d.Key(), key) {
		return nil, ErrNotFound
	}
	return d.Value(), nil
}

// blockAt returns the contents of the data block the index iterator idx
// is on, from src; base is the number of the data block of idx's entry 0
// (0 but in an index partition).
func blockAt(src source, s *scratch, idx *codec.BlockIter, base int, indexOff int64) ([]byte, format.BlockHandle, error) {
	i, ok := idx.RestartIndex()
	i += base
	if !ok {
		return nil, format.BlockHandle{}, format.Corruptf(format.SectionIndex, indexOff, "index entry is not a restart point")
	}
	h, n := codec.DecodeHandle(idx.Value())
	if n <= 0 || n != len(idx.Value()) {
		return nil, h, format.Corruptf(format.SectionIndex, indexOff, "index entry %d: bad block handle", i)
	}
	contents, err := src.dataBlock(s, i, h)
	return contents, h, err
}
