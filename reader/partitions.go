package reader

import (
	"bytes"
	"unsafe"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// Partitioned index and filter (format Version3).
//
// The footer's index handle names the top-level index, loaded like a
// one-level table's index block (in the tail New reads, or on first use),
// with one entry per partition: its last key and its handle. Each
// partition holds a filter and an index partition, read together from
// the source (a few KiB, source.partition). Both the partitioned index
// (index_parted.go) and the partitioned filter (filter.go) find their
// partition here.

// partitions is a Version3 table's partition directory: the top-level
// index and, from its first load, the partitions' handles and keys.
type partitions struct {
	src      source
	sections *blockcache.Table // charged for parts and topKeys
	top      section
	splitter format.Splitter // the table's splitter, nil without one (or when unknown)

	numBlocks uint64 // the table's data blocks
	start     uint64 // where the first partition starts: the data blocks' and hash index's end

	// Recorded by the top-level index's first load (checkTop).
	parts   []codec.PartitionHandle
	topKeys [][]byte // the top-level index's keys, parts[i]'s key at i
}

// load loads the top-level index, once.
func (ps *partitions) load() error { return ps.top.load(ps.src) }

// checkTop checks the top-level index: one restart per entry,
// well-formed partition handles that tile the bytes from the data
// section's end to the top-level index without a gap, and first blocks
// that start at 0 and increase. On the first load (record) it keeps the
// handles and keys; later loads, after an eviction, must match them.
func (ps *partitions) checkTop(contents []byte, record bool) error {
	off := int64(ps.top.h.Offset)
	var it codec.BlockIter
	if err := it.Init(format.SectionTopIndex, off, contents); err != nil {
		return err
	}
	n := it.NumRestarts()
	if n == 0 || uint64(n) > ps.numBlocks {
		return format.Corruptf(format.SectionTopIndex, off, "%d partitions for %d data blocks", n, ps.numBlocks)
	}
	if !record && n != len(ps.parts) {
		return format.Corruptf(format.SectionTopIndex, off, "changed since it was first read: %d partitions, then %d", len(ps.parts), n)
	}
	var parts []codec.PartitionHandle
	var keys [][]byte
	var keyBuf []byte
	if record {
		parts = make([]codec.PartitionHandle, 0, n)
		keys = make([][]byte, 0, n)
		keyBuf = make([]byte, 0, len(contents)) // never grows: the keys are in contents
	} else {
		parts = ps.parts
	}
	next := ps.start
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		ph, ok := codec.DecodePartitionHandle(it.Value())
		switch {
		case !ok:
			return format.Corruptf(format.SectionTopIndex, off, "entry %d: bad partition handle", i)
		case i >= n:
			return format.Corruptf(format.SectionTopIndex, off, "more entries than its %d restarts", n)
		case ph.Offset != next:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d at %d, previous one ends at %d", i, ph.Offset, next)
		case ph.End() > ps.top.h.Offset:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d (offset %d, %d bytes) runs past the top-level index at %d", i, ph.Offset, ph.Len(), ps.top.h.Offset)
		case i == 0 && ph.FirstBlock != 0,
			i > 0 && ph.FirstBlock <= parts[i-1].FirstBlock,
			ph.FirstBlock >= ps.numBlocks:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d starts at data block %d", i, ph.FirstBlock)
		case !record && parts[i] != ph:
			return format.Corruptf(format.SectionTopIndex, off, "changed since it was first read")
		}
		if record {
			parts = append(parts, ph)
			k := len(keyBuf)
			keyBuf = append(keyBuf, it.Key()...)
			keys = append(keys, keyBuf[k:len(keyBuf):len(keyBuf)])
		}
		next = ph.End()
		i++
	}
	if err := it.Err(); err != nil {
		return err
	}
	if i != n || next != ps.top.h.Offset {
		return format.Corruptf(format.SectionTopIndex, off, "%d entries for %d restarts; partitions end at %d, not at %d", i, n, next, ps.top.h.Offset)
	}
	if record {
		ps.parts, ps.topKeys = parts, keys
		charge(ps.sections, cap(parts)*int(unsafe.Sizeof(codec.PartitionHandle{}))+cap(keys)*int(unsafe.Sizeof([]byte(nil)))+cap(keyBuf))
	}
	return nil
}

// blocks returns the number of data blocks partition p covers.
func (ps *partitions) blocks(p int) uint64 {
	if p+1 < len(ps.parts) {
		return ps.parts[p+1].FirstBlock - ps.parts[p].FirstBlock
	}
	return ps.numBlocks - ps.parts[p].FirstBlock
}

// check checks partition p's bytes b (filter, trailer, index partition,
// trailer): both checksums, both stored raw, and an index partition of
// one restart per entry, one entry per data block it covers.
func (ps *partitions) check(p int, b []byte) error {
	ph := ps.parts[p]
	fh, ih := ph.Filter(), ph.Index()
	if _, err := rawContents(format.SectionFilterPartition, fh, b[:fh.Length+format.BlockTrailerLen]); err != nil {
		return err
	}
	index, err := rawContents(format.SectionIndexPartition, ih, b[fh.Length+format.BlockTrailerLen:])
	if err != nil {
		return err
	}
	var it codec.BlockIter
	if err := it.Init(format.SectionIndexPartition, int64(ih.Offset), index); err != nil {
		return err
	}
	if n := uint64(it.NumRestarts()); n != ps.blocks(p) {
		return format.Corruptf(format.SectionIndexPartition, int64(ih.Offset), "%d entries for the %d data blocks of partition %d", n, ps.blocks(p), p)
	}
	return nil
}

// get returns partition p's filter bits and index partition contents
// from the source, pinned by *pin (release it when done); ahead as for
// source.partition.
func (ps *partitions) get(p int, pin *blockcache.Handle, ahead *[]byte) (filter, index []byte, err error) {
	b, h, err := ps.src.partition(ps, p, ahead)
	*pin = h
	if err != nil {
		return nil, nil, err
	}
	ph := ps.parts[p]
	f := ph.FilterLen
	i := f + format.BlockTrailerLen
	return b[:f:f], b[i : i+ph.IndexLen : i+ph.IndexLen], nil
}

// seek finds the partition that may hold key: the first whose top-level
// key (its last key) is >= key, by a binary search of ps.topKeys (a few
// KiB, kept on the heap from the top-level index's first load, so that a
// lookup neither pins nor decodes the top-level index). ok is false when
// key is past every partition.
func (ps *partitions) seek(key []byte) (p int, ok bool, err error) {
	if err := ps.load(); err != nil {
		return 0, false, err
	}
	lo, hi := 0, len(ps.topKeys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(ps.topKeys[m], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ps.topKeys), nil
}

// seekPrefix is seek for the first key whose prefix is prefix, in a
// table with a splitter: the first partition whose last key's prefix is
// >= prefix. Prefixes never decrease from key to key, so that partition
// holds the prefix's first key if any key has it, even when keys of
// smaller prefixes sort after prefix itself (format.Suffix with a user
// key that is a proper prefix of another), which a search by key would
// take for the prefix's.
func (ps *partitions) seekPrefix(prefix []byte) (p int, ok bool, err error) {
	if ps.splitter == nil {
		return ps.seek(prefix)
	}
	if err := ps.load(); err != nil {
		return 0, false, err
	}
	lo, hi := 0, len(ps.topKeys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k := ps.topKeys[m]
		if bytes.Compare(k[:prefixLen(ps.splitter, k)], prefix) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ps.topKeys), nil
}

// covering returns the partition that covers data block i: the last
// whose first block is <= i; -1 if none.
func (ps *partitions) covering(i int) int {
	lo, hi := 0, len(ps.parts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps.parts[m].FirstBlock <= uint64(i) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}
