package reader

import (
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// partedIndex is the index of a Version3 table: the top-level index
// leads to the key's partition, whose index partition is searched like a
// one-level table's index block. A lookup over a ReaderAt thus reads a
// few KiB of partition instead of the whole index.
//
// A partition holds the filter of its keys (or prefixes) beside its
// index, so a Get probes that filter here, on the partition it has in
// hand, rather than through the filter layer, which would find and pin
// the same partition a second time: Get's filter layer is then noFilter
// (MayContain's is partedFilter).
type partedIndex struct {
	ps     *partitions
	policy filterblock.Policy // nil: no filter to probe
	bloom  bool
}

func (x *partedIndex) get(dst, key, fk []byte, h uint64, has bool) ([]byte, error) {
	ps := x.ps
	p, ok, err := ps.seek(key)
	if err != nil || !ok {
		if err == nil {
			err = ErrNotFound
		}
		return dst, err
	}
	var pin blockcache.Handle
	filter, index, err := ps.get(p, &pin, nil)
	if err != nil {
		return dst, err
	}
	if x.policy != nil && !probe(x.policy, x.bloom, filter, fk, h) {
		pin.Release()
		return dst, ErrNotFound
	}
	s := getScratch()
	defer putScratch(s)
	s.partPin = pin // released by putScratch, after the value is copied
	if err := s.index.BlockIter.Init(format.SectionIndexPartition, int64(ps.parts[p].Index().Offset), index); err != nil {
		return dst, err
	}
	v, err := findIn(ps.src, s, key, int(ps.parts[p].FirstBlock), int64(ps.top.h.Offset))
	if err != nil || has {
		return dst, err
	}
	return append(dst, v...), nil
}

func (x *partedIndex) initIter(it *indexIter, pin *blockcache.Handle) error {
	top, err := x.ps.top.contents(x.ps.src, pin)
	if err != nil {
		return err
	}
	it.reset(x.ps.src, x.ps, int64(x.ps.top.h.Offset))
	return it.top.Init(format.SectionTopIndex, int64(x.ps.top.h.Offset), top)
}

func (x *partedIndex) seekPrefix(*Iterator, []byte, []byte) (bool, bool) { return false, false }

// indexIter walks the index entries of a table, one per data block: the
// index block's, or, in a Version3 table, the index partitions' in turn,
// loaded through the top-level index (a two-level iterator, as RocksDB's
// and Pebble's). The embedded BlockIter is on the current entry; base is
// the number of the first data block it covers.
type indexIter struct {
	codec.BlockIter
	src      source
	indexOff int64             // the index block's or top-level index's offset, for messages
	ps       *partitions       // set for a Version3 table, else nil
	top      codec.BlockIter   // the top-level index
	base     int               // data block number of the BlockIter's entry 0
	pin      blockcache.Handle // the current partition, when cached
	buf      []byte            // read-ahead of partitions
	on       bool              // the BlockIter is on a loaded partition
	err      error
}

// reset prepares x for an index of src (ps for a Version3 table).
func (x *indexIter) reset(src source, ps *partitions, indexOff int64) {
	x.release()
	x.src, x.ps, x.indexOff = src, ps, indexOff
	x.err, x.base = nil, 0
}

// release drops the current partition.
func (x *indexIter) release() {
	x.pin.Release()
	x.on = false
}

// block returns the number of the data block of the current entry.
func (x *indexIter) block() int {
	i, _ := x.BlockIter.RestartIndex()
	return x.base + i
}

// dataBlock returns the contents of the data block of the current entry.
func (x *indexIter) dataBlock(s *scratch) ([]byte, format.BlockHandle, error) {
	return blockAt(x.src, s, &x.BlockIter, x.base, x.indexOff)
}

// enter loads the partition the top-level iterator is on; seq says the
// iterator moved onto it from the previous one, so that the partitions
// after it are read too.
func (x *indexIter) enter(seq bool) bool {
	x.release()
	if !x.top.Valid() {
		x.err = x.top.Err()
		return false
	}
	ps := x.ps
	p, ok := x.top.RestartIndex()
	if !ok || p >= len(ps.parts) {
		x.err = format.Corruptf(format.SectionTopIndex, x.indexOff, "entry is not a restart point")
		return false
	}
	var ahead *[]byte
	if seq {
		ahead = &x.buf
	}
	_, index, err := ps.get(p, &x.pin, ahead)
	if err == nil {
		err = x.BlockIter.Init(format.SectionIndexPartition, int64(ps.parts[p].Index().Offset), index)
	}
	if err != nil {
		x.pin.Release()
		x.BlockIter = codec.BlockIter{}
		x.err = err
		return false
	}
	x.base, x.on = int(ps.parts[p].FirstBlock), true
	return true
}

// Valid reports whether x is on an entry.
func (x *indexIter) Valid() bool {
	if x.ps == nil {
		return x.BlockIter.Valid()
	}
	return x.on && x.err == nil && x.BlockIter.Valid()
}

// Err returns the error that stopped x, if any.
func (x *indexIter) Err() error {
	if x.err != nil {
		return x.err
	}
	return x.BlockIter.Err()
}

// stopTop ends a failed move of the top-level iterator.
func (x *indexIter) stopTop() bool {
	x.release()
	if x.err == nil {
		x.err = x.top.Err()
	}
	return false
}

// First moves to the first entry.
func (x *indexIter) First() bool {
	if x.ps == nil {
		return x.BlockIter.First()
	}
	x.err = nil
	if !x.top.First() || !x.enter(true) {
		return x.stopTop()
	}
	return x.BlockIter.First() || x.nextPartition()
}

// Last moves to the last entry.
func (x *indexIter) Last() bool {
	if x.ps == nil {
		return x.BlockIter.Last()
	}
	x.err = nil
	if !x.top.Last() || !x.enter(false) {
		return x.stopTop()
	}
	return x.BlockIter.Last() || x.prevPartition()
}

// Next moves to the next entry.
func (x *indexIter) Next() bool {
	if x.ps == nil {
		return x.BlockIter.Next()
	}
	if !x.on {
		return false
	}
	return x.BlockIter.Next() || x.nextPartition()
}

// Prev moves to the previous entry.
func (x *indexIter) Prev() bool {
	if x.ps == nil {
		return x.BlockIter.Prev()
	}
	if !x.on {
		return false
	}
	return x.BlockIter.Prev() || x.prevPartition()
}

// SeekGE moves to the first entry whose key is >= key.
func (x *indexIter) SeekGE(key []byte) bool {
	if x.ps == nil {
		return x.BlockIter.SeekGE(key)
	}
	x.err = nil
	if !x.top.SeekGE(key) || !x.enter(false) {
		return x.stopTop()
	}
	return x.BlockIter.SeekGE(key) || x.nextPartition()
}

// SeekRestart moves to the entry of data block i (an index's restart
// points are its entries): in a Version3 table, entry i-FirstBlock of the
// partition that covers block i.
func (x *indexIter) SeekRestart(i int) bool {
	if x.ps == nil {
		return x.BlockIter.SeekRestart(i)
	}
	x.err = nil
	p := x.ps.covering(i)
	if i < 0 || p < 0 || !x.top.SeekRestart(p) || !x.enter(false) {
		return x.stopTop()
	}
	return x.BlockIter.SeekRestart(i - x.base)
}

// nextPartition moves to the first entry of the partitions after the
// current one, once the BlockIter is exhausted.
func (x *indexIter) nextPartition() bool {
	for {
		if x.err != nil || x.BlockIter.Err() != nil {
			return false
		}
		if !x.top.Next() {
			x.release()
			x.err = x.top.Err()
			return false
		}
		if !x.enter(true) {
			return false
		}
		if x.BlockIter.First() {
			return true
		}
	}
}

// prevPartition is nextPartition backwards.
func (x *indexIter) prevPartition() bool {
	for {
		if x.err != nil || x.BlockIter.Err() != nil {
			return false
		}
		if !x.top.Prev() {
			x.release()
			x.err = x.top.Err()
			return false
		}
		if !x.enter(false) {
			return false
		}
		if x.BlockIter.Last() {
			return true
		}
	}
}
