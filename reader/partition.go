package reader

import (
	"bytes"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// Partitioned index and filter (format Version3).
//
// The footer's index handle names the top-level index, loaded like a
// one-level table's index block (in the tail New reads, or on first use),
// with one entry per partition. A lookup seeks it, then reads the key's
// partition, its filter and its index partition together, in one ReadAt
// of a few KiB (with its neighbours: PartitionWindow; on the reader's
// second miss, all of them: PartitionPrefetchShare): a cold Get of a
// present key makes three reads counting New's (tail, partition, data
// block), of an absent key two. Partitions
// of an unmapped reader live in the cache, one slot each of
// Reader.partTable, pinned while used and read again, with their
// checksums, if evicted; a mapped reader checks each partition's
// checksums on its first use and reads it in place.

// checkTop checks the top-level index of a Version3 table: one restart
// per entry, well-formed partition handles that tile the bytes from the
// data section's end to the top-level index without a gap, and first
// blocks that start at 0 and increase. On the first load (record) it
// keeps the handles in r.parts; later loads, after an eviction, must
// match them.
func (r *Reader) checkTop(contents []byte, record bool) error {
	off := int64(r.footer.Index.Offset)
	var it format.BlockIter
	if err := it.Init(format.SectionTopIndex, off, contents); err != nil {
		return err
	}
	n := it.NumRestarts()
	if n == 0 || uint64(n) > r.props.NumDataBlocks {
		return format.Corruptf(format.SectionTopIndex, off, "%d partitions for %d data blocks", n, r.props.NumDataBlocks)
	}
	if !record && n != len(r.parts) {
		return format.Corruptf(format.SectionTopIndex, off, "changed since it was first read: %d partitions, then %d", len(r.parts), n)
	}
	var parts []format.PartitionHandle
	var keys [][]byte
	var keyBuf []byte
	if record {
		parts = make([]format.PartitionHandle, 0, n)
		keys = make([][]byte, 0, n)
		keyBuf = make([]byte, 0, len(contents)) // never grows: the keys are in contents
	}
	next := r.props.DataSize + r.props.HashIndexSize
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		ph, ok := format.DecodePartitionHandle(it.Value())
		switch {
		case !ok:
			return format.Corruptf(format.SectionTopIndex, off, "entry %d: bad partition handle", i)
		case i >= n:
			return format.Corruptf(format.SectionTopIndex, off, "more entries than its %d restarts", n)
		case ph.Offset != next:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d at %d, previous one ends at %d", i, ph.Offset, next)
		case ph.End() > r.footer.Index.Offset:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d (offset %d, %d bytes) runs past the top-level index at %d", i, ph.Offset, ph.Len(), r.footer.Index.Offset)
		case i == 0 && ph.FirstBlock != 0,
			i > 0 && ph.FirstBlock <= r.partAt(parts, i-1).FirstBlock,
			ph.FirstBlock >= r.props.NumDataBlocks:
			return format.Corruptf(format.SectionTopIndex, off, "partition %d starts at data block %d", i, ph.FirstBlock)
		case !record && r.parts[i] != ph:
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
	if i != n || next != r.footer.Index.Offset {
		return format.Corruptf(format.SectionTopIndex, off, "%d entries for %d restarts; partitions end at %d, not at %d", i, n, next, r.footer.Index.Offset)
	}
	if record {
		r.parts, r.topKeys = parts, keys
	}
	return nil
}

// partAt returns partition i's handle, from parts while checkTop records
// them, else from r.parts.
func (r *Reader) partAt(parts []format.PartitionHandle, i int) format.PartitionHandle {
	if parts != nil {
		return parts[i]
	}
	return r.parts[i]
}

// partBlocks returns the number of data blocks partition p covers.
func (r *Reader) partBlocks(p int) uint64 {
	if p+1 < len(r.parts) {
		return r.parts[p+1].FirstBlock - r.parts[p].FirstBlock
	}
	return r.props.NumDataBlocks - r.parts[p].FirstBlock
}

// checkPartition checks partition p's bytes b (filter, trailer, index
// partition, trailer): both checksums, both stored raw, and an index
// partition of one restart per entry, one entry per data block it covers.
func (r *Reader) checkPartition(p int, b []byte) error {
	ph := r.parts[p]
	fh, ih := ph.Filter(), ph.Index()
	if _, err := r.rawIn(format.SectionFilterPartition, fh, b[:fh.Length+format.BlockTrailerLen]); err != nil {
		return err
	}
	index, err := r.rawIn(format.SectionIndexPartition, ih, b[fh.Length+format.BlockTrailerLen:])
	if err != nil {
		return err
	}
	var it format.BlockIter
	if err := it.Init(format.SectionIndexPartition, int64(ih.Offset), index); err != nil {
		return err
	}
	if n := uint64(it.NumRestarts()); n != r.partBlocks(p) {
		return format.Corruptf(format.SectionIndexPartition, int64(ih.Offset), "%d entries for the %d data blocks of partition %d", n, r.partBlocks(p), p)
	}
	return nil
}

// rawIn checks the block at h, whose bytes and trailer are raw, and
// returns its contents.
func (r *Reader) rawIn(section string, h format.BlockHandle, raw []byte) ([]byte, error) {
	stored, typ, err := format.CheckBlock(section, int64(h.Offset), raw)
	if err != nil {
		return nil, err
	}
	if typ != format.BlockTypeRaw {
		return nil, format.Corruptf(section, int64(h.End())-format.BlockTrailerLen, "must be stored raw, has compression type %d", typ)
	}
	return stored, nil
}

// partition returns partition p's filter bits and index partition
// contents: from the mapping, checked on first use, or from the cache,
// read and checked on a miss, pinned by *pin (release it when done). A
// partition the cache cannot take is read into memory of its own. A
// failed read is returned as such and not remembered.
func (r *Reader) partition(p int, pin *cache.Handle) (filter, index []byte, err error) {
	ph := r.parts[p]
	var b []byte
	switch {
	case r.mapped != nil:
		b = r.mapped[ph.Offset:ph.End():ph.End()]
		// partChecked is nil if Close came before the first load set it up.
		if p >= len(r.partChecked) || !r.partChecked[p].Load() {
			if err := r.checkPartition(p, b); err != nil {
				return nil, nil, err
			}
			if p < len(r.partChecked) {
				r.partChecked[p].Store(true)
			}
		}
	case r.partTable == nil: // Close came before the first load set it up
		b = make([]byte, ph.Len())
		if err := r.readFull(format.SectionIndexPartition, b, int64(ph.Offset)); err != nil {
			return nil, nil, err
		}
		if err := r.checkPartition(p, b); err != nil {
			return nil, nil, err
		}
	default:
		if h, ok := r.partTable.Get(p); ok {
			*pin = h
			b = h.Bytes()
			break
		}
		if kept, ok := r.partitionFromTail(p, pin); ok {
			b = kept
			break
		}
		lo, hi := r.partitionWindow(p)
		if r.prefetchAll() {
			lo, hi = r.uncachedRange(p)
		}
		return r.readPartitions(lo, hi, p, pin, nil)
	}
	filter, index = splitPartition(ph, b)
	return filter, index, nil
}

// splitPartition returns the filter bits and index partition contents of
// b, the checked bytes of the partition at ph.
func splitPartition(ph format.PartitionHandle, b []byte) (filter, index []byte) {
	f := ph.FilterLen
	i := f + format.BlockTrailerLen
	return b[:f:f], b[i : i+ph.IndexLen : i+ph.IndexLen]
}

// PartitionReadahead is how many bytes of partitions an iterator over a
// ReaderAt reads at once when it moves from one partition of a Version3
// table to the next (a scan): the partitions that fit whole in 1 MiB,
// each then cached in its slot, so that a full scan reads the partitions
// in about one ReadAt per MiB of them rather than one per partition (1%
// more reads than a version 1 table's scan). The buffer is the
// iterator's own, allocated on its first such read and reused, at most
// this size (besides its data read-ahead window, MaxReadahead).
const PartitionReadahead = 1 << 20

// partitionsAhead is partition for an iterator moving sequentially onto
// partition p: on a cache miss it reads p and the partitions after it
// that fit in PartitionReadahead bytes with one ReadAt into *buf (grown
// as needed), and caches each that checks out. p's bytes come from the
// cache or, when the cache cannot take them, from *buf, valid until the
// next call.
func (r *Reader) partitionsAhead(p int, pin *cache.Handle, buf *[]byte) (filter, index []byte, err error) {
	if r.mapped != nil || r.partTable == nil {
		return r.partition(p, pin)
	}
	if r.partCached(p) {
		return r.partition(p, pin)
	}
	q := p
	for q+1 < len(r.parts) && r.parts[q+1].End()-r.parts[p].Offset <= PartitionReadahead {
		q++
	}
	if q == p {
		return r.partition(p, pin)
	}
	return r.readPartitions(p, q, p, pin, buf)
}

// PartitionWindow is how many bytes of partitions a lookup over a
// ReaderAt reads when the partition it needs is not cached: the
// partitions that lie whole in the aligned 64 KiB of the partitions
// section around it, those not cached already, in one ReadAt, each then
// cached in its slot. A cold Get thus reads at most 64 KiB beyond the
// tail and its data block. The reader's second miss reads all the
// partitions instead, where PartitionPrefetchShare allows; where it does
// not, lookups of random keys cache the partitions in about one read per
// 64 KiB of them rather than one per partition (a 5M-entry table has
// about 550 partitions of 16 KiB and 140 such windows).
const PartitionWindow = 64 << 10

// PartitionPrefetchShare bounds the prefetch of all partitions: a reader
// over a ReaderAt whose lookups miss the partition cache a second time
// reads every partition not cached yet in that miss's one ReadAt, when
// the table's partitions, index and filter, take at most
// 1/PartitionPrefetchShare of its Cache's capacity (with the 64 MiB
// DefaultCache, tables of up to 16 MiB of partitions: about 9 million
// entries of 16-byte keys at 10 bits per key). Its first miss reads one
// PartitionWindow, so a cold Get still reads at most 64 KiB beyond the
// tail; a second miss shows lookups spread over the table, which would
// otherwise read a window per 64 KiB of partitions (a 5M-entry table:
// about 140 reads). Larger tables keep to windows, so that one table's
// partitions do not flush a shared cache. RocksDB prefetches the
// partitions of a partitioned index or filter the same way, all in one
// read, when it caches them (PartitionIndexReader::CacheDependencies in
// table/block_based/partitioned_index_reader.cc), though at open. The
// read's buffer, the size of the partitions, is lent by the cache if one
// shard can hold it, else allocated for the read.
const PartitionPrefetchShare = 4

// prefetchAll reports whether a lookup missing a partition should read
// all the uncached partitions: on the reader's second miss, once, when
// PartitionPrefetchShare allows it.
func (r *Reader) prefetchAll() bool {
	if r.partMisses.Load() >= 2 {
		return false // done, or taken by another goroutine
	}
	total := r.parts[len(r.parts)-1].End() - r.parts[0].Offset
	if total > uint64(r.cache.Capacity()/PartitionPrefetchShare) {
		r.partMisses.Store(2)
		return false
	}
	return r.partMisses.Add(1) == 2
}

// uncachedRange returns the partitions [lo, hi] from the first not in the
// cache to the last, around p, which is not.
func (r *Reader) uncachedRange(p int) (lo, hi int) {
	lo, hi = 0, len(r.parts)-1
	for lo < p && r.partCached(lo) {
		lo++
	}
	for hi > p && r.partCached(hi) {
		hi--
	}
	return lo, hi
}

// partitionWindow returns the partitions [lo, hi] a lookup missing
// partition p reads: p and its uncached neighbours that lie whole in the
// PartitionWindow-aligned bytes of the partitions section holding p
// (starting at p when p straddles that window's end). lo == hi means p
// alone.
func (r *Reader) partitionWindow(p int) (lo, hi int) {
	base := r.parts[0].Offset
	ph := r.parts[p]
	w := base + (ph.Offset-base)/PartitionWindow*PartitionWindow
	if ph.End() > w+PartitionWindow {
		w = ph.Offset
	}
	lo, hi = p, p
	for lo > 0 && r.parts[lo-1].Offset >= w {
		lo--
	}
	for hi+1 < len(r.parts) && r.parts[hi+1].End() <= w+PartitionWindow {
		hi++
	}
	for lo < p && r.partCached(lo) {
		lo++
	}
	for hi > p && r.partCached(hi) {
		hi--
	}
	return lo, hi
}

// partCached reports whether partition i is in the cache, in its slot
// or in the kept tail (tail.go).
func (r *Reader) partCached(i int) bool {
	h, ok := r.partTable.Get(i)
	if !ok && r.inTail(r.parts[i].Offset, r.parts[i].Len()) {
		h, ok = r.sections.Get(slotTail)
	}
	h.Release()
	return ok
}

// partitionFromTail returns the bytes of partition p, checked, when they
// lie in the kept tail: copied to p's cache slot, pinned by *pin, or when
// the cache cannot take them to memory of their own. ok is false when the
// tail does not hold p, is no longer cached, or holds a copy that fails
// the check (the caller then reads p, which reports real damage).
func (r *Reader) partitionFromTail(p int, pin *cache.Handle) (b []byte, ok bool) {
	ph := r.parts[p]
	raw, tail, ok := r.fromTail(ph.Offset, ph.Len())
	if !ok {
		return nil, false
	}
	defer tail.Release()
	if r.checkPartition(p, raw) != nil {
		return nil, false
	}
	h, ok := r.partTable.Reserve(p, len(raw))
	if !ok {
		return bytes.Clone(raw), true
	}
	copy(h.Bytes(), raw)
	r.partTable.Publish(p, h, 0)
	*pin = h
	return h.Bytes(), true
}

// readPartitions reads partitions [lo, hi], which hold p, with one ReadAt,
// caches each that checks out and is not cached yet, and returns p's
// filter and index as partition does. The bytes are read into *buf (grown
// as needed) or, with a nil buf, into memory lent by the cache for the
// call (or allocated when it cannot lend it). p's bytes come from the
// cache or, when the cache cannot take them, from *buf, valid until the
// next call; with a nil buf they are then copied to memory of their own.
func (r *Reader) readPartitions(lo, hi, p int, pin *cache.Handle, buf *[]byte) (filter, index []byte, err error) {
	start := r.parts[lo].Offset
	n := int(r.parts[hi].End() - start)
	var b []byte
	var lent cache.Handle
	switch {
	case buf != nil:
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		b = (*buf)[:n]
	default:
		var ok bool
		if lent, ok = r.sections.Reserve(slotReadahead, n); ok {
			b = lent.Bytes()
		} else {
			b = make([]byte, n)
		}
	}
	defer lent.Release()
	if err := r.readFull(format.SectionIndexPartition, b, int64(start)); err != nil {
		return nil, nil, err
	}
	var mine []byte // p's bytes, if the cache did not take them
	for i := lo; i <= hi; i++ {
		ph := r.parts[i]
		raw := b[ph.Offset-start : ph.End()-start]
		if i != p {
			if h, ok := r.partTable.Get(i); ok {
				h.Release()
				continue
			}
		}
		if err := r.checkPartition(i, raw); err != nil {
			if i == p {
				return nil, nil, err
			}
			continue // reported when a lookup or iterator gets there
		}
		h, ok := r.partTable.Reserve(i, len(raw))
		if !ok {
			if i == p {
				mine = raw
				if buf == nil {
					mine = bytes.Clone(raw)
				}
			}
			continue
		}
		copy(h.Bytes(), raw)
		r.partTable.Publish(i, h, 0)
		if i == p {
			*pin = h
			mine = h.Bytes()
		} else {
			h.Release()
		}
	}
	filter, index = splitPartition(r.parts[p], mine)
	return filter, index, nil
}

// seekPartition finds the partition that may hold key: the first whose
// top-level key (its last key) is >= key, by a binary search of
// r.topKeys, which the reader keeps from the top-level index's first load
// (its keys only, a few KiB, so that a lookup neither pins nor decodes
// the top-level index). ok is false when key is past every partition.
func (r *Reader) seekPartition(key []byte) (p int, ok bool, err error) {
	if err := r.loadIndex(); err != nil {
		return 0, false, err
	}
	lo, hi := 0, len(r.topKeys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(r.topKeys[m], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(r.topKeys), nil
}

// seekPrefixPartition is seekPartition for the first key whose prefix is
// prefix, in a table with a splitter: the first partition whose last
// key's prefix is >= prefix. Prefixes never decrease from key to key, so
// that partition holds the prefix's first key if any key has it, even
// when keys of smaller prefixes sort after prefix itself (format.Suffix
// with a user key that is a proper prefix of another), which a search by
// key would take for the prefix's.
func (r *Reader) seekPrefixPartition(prefix []byte) (p int, ok bool, err error) {
	if r.splitter == nil {
		return r.seekPartition(prefix)
	}
	if err := r.loadIndex(); err != nil {
		return 0, false, err
	}
	lo, hi := 0, len(r.topKeys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k := r.topKeys[m]
		if bytes.Compare(k[:r.split(k)], prefix) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(r.topKeys), nil
}

// mayContainParted is mayContainHash for a Version3 table: the filter of
// the partition of fk's first key (fk a key, or a prefix with a
// splitter). Errors answer true.
func (r *Reader) mayContainParted(fk []byte, h uint64) bool {
	if r.policy == nil {
		return true
	}
	p, ok, err := r.seekPrefixPartition(fk)
	if err != nil {
		return true
	}
	if !ok {
		return false // past the last key
	}
	var pin cache.Handle
	filter, _, err := r.partition(p, &pin)
	if err != nil {
		return true
	}
	ok = r.probe(filter, fk, h)
	pin.Release()
	return ok
}

// probe tests key (with h = format.KeyHash(key) when r.cacheLocal)
// against filter bits of r.policy.
func (r *Reader) probe(filter, key []byte, h uint64) bool {
	if r.cacheLocal {
		return filterblock.BloomMayContainHash(filter, h)
	}
	return r.policy.MayContain(filter, key)
}

// getPartedFiltered is getAppend for a Version3 table: the top-level
// index leads to key's partition, whose filter is probed if filtered
// (with key's prefix, in a table with a splitter: each partition's filter
// holds the prefixes of its keys) and whose index partition is searched;
// both stay pinned for the lookup.
func (r *Reader) getPartedFiltered(dst, key []byte, has, filtered bool) ([]byte, error) {
	p, ok, err := r.seekPartition(key)
	if err != nil || !ok {
		if err == nil {
			err = ErrNotFound
		}
		return dst, err
	}
	var pin cache.Handle
	filter, index, err := r.partition(p, &pin)
	if err != nil {
		return dst, err
	}
	if filtered && r.policy != nil {
		fk := key[:r.split(key)]
		var h uint64
		if r.cacheLocal {
			h = format.KeyHash(fk)
		}
		if !r.probe(filter, fk, h) {
			pin.Release()
			return dst, ErrNotFound
		}
	}
	s := r.getScratch()
	defer r.putScratch(s)
	s.partPin = pin // released by putScratch, after the value is copied
	if err := s.index.BlockIter.Init(format.SectionIndexPartition, int64(r.parts[p].Index().Offset), index); err != nil {
		return dst, err
	}
	v, err := r.findIn(s, key, int(r.parts[p].FirstBlock))
	if err != nil || has {
		return dst, err
	}
	return append(dst, v...), nil
}

// indexIter walks the index entries of a table, one per data block: the
// index block's, or, in a Version3 table, the index partitions' in turn,
// loaded through the top-level index (a two-level iterator, as RocksDB's
// and Pebble's). The embedded BlockIter is on the current entry; base is
// the number of the first data block it covers.
type indexIter struct {
	format.BlockIter
	r    *Reader          // set for a Version3 table, else nil
	top  format.BlockIter // the top-level index
	base int              // data block number of the BlockIter's entry 0
	pin  cache.Handle     // the current partition, when cached
	buf  []byte           // read-ahead of partitions (partitionsAhead)
	on   bool             // the BlockIter is on a loaded partition
	err  error
}

// initIndexIter points x at index, the index block or top-level index
// that r.indexBlock returned.
func (r *Reader) initIndexIter(x *indexIter, index []byte) error {
	x.release()
	x.err, x.base = nil, 0
	if !r.parted {
		x.r = nil
		return x.BlockIter.Init(format.SectionIndex, int64(r.footer.Index.Offset), index)
	}
	x.r = r
	return x.top.Init(format.SectionTopIndex, int64(r.footer.Index.Offset), index)
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

// enter loads the partition the top-level iterator is on; seq says the
// iterator moved onto it from the previous one, so that the partitions
// after it are read too.
func (x *indexIter) enter(seq bool) bool {
	x.release()
	if !x.top.Valid() {
		x.err = x.top.Err()
		return false
	}
	r := x.r
	p, ok := x.top.RestartIndex()
	if !ok || p >= len(r.parts) {
		x.err = format.Corruptf(format.SectionTopIndex, int64(r.footer.Index.Offset), "entry is not a restart point")
		return false
	}
	var index []byte
	var err error
	if seq {
		_, index, err = r.partitionsAhead(p, &x.pin, &x.buf)
	} else {
		_, index, err = r.partition(p, &x.pin)
	}
	if err == nil {
		err = x.BlockIter.Init(format.SectionIndexPartition, int64(r.parts[p].Index().Offset), index)
	}
	if err != nil {
		x.pin.Release()
		x.BlockIter = format.BlockIter{}
		x.err = err
		return false
	}
	x.base, x.on = int(r.parts[p].FirstBlock), true
	return true
}

// Valid reports whether x is on an entry.
func (x *indexIter) Valid() bool {
	if x.r == nil {
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

// First moves to the first entry.
func (x *indexIter) First() bool {
	if x.r == nil {
		return x.BlockIter.First()
	}
	x.err = nil
	if !x.top.First() || !x.enter(true) {
		x.release()
		if x.err == nil {
			x.err = x.top.Err()
		}
		return false
	}
	return x.BlockIter.First() || x.nextPartition()
}

// Last moves to the last entry.
func (x *indexIter) Last() bool {
	if x.r == nil {
		return x.BlockIter.Last()
	}
	x.err = nil
	if !x.top.Last() || !x.enter(false) {
		x.release()
		if x.err == nil {
			x.err = x.top.Err()
		}
		return false
	}
	return x.BlockIter.Last() || x.prevPartition()
}

// Next moves to the next entry.
func (x *indexIter) Next() bool {
	if x.r == nil {
		return x.BlockIter.Next()
	}
	if !x.on {
		return false
	}
	return x.BlockIter.Next() || x.nextPartition()
}

// Prev moves to the previous entry.
func (x *indexIter) Prev() bool {
	if x.r == nil {
		return x.BlockIter.Prev()
	}
	if !x.on {
		return false
	}
	return x.BlockIter.Prev() || x.prevPartition()
}

// SeekGE moves to the first entry whose key is >= key.
func (x *indexIter) SeekGE(key []byte) bool {
	if x.r == nil {
		return x.BlockIter.SeekGE(key)
	}
	x.err = nil
	if !x.top.SeekGE(key) || !x.enter(false) {
		x.release()
		if x.err == nil {
			x.err = x.top.Err()
		}
		return false
	}
	return x.BlockIter.SeekGE(key) || x.nextPartition()
}

// SeekRestart moves to the entry of data block i (an index's restart
// points are its entries): in a Version3 table, entry i-FirstBlock of the
// partition that covers block i.
func (x *indexIter) SeekRestart(i int) bool {
	if x.r == nil {
		return x.BlockIter.SeekRestart(i)
	}
	x.err = nil
	r := x.r
	// The last partition whose first block is <= i.
	lo, hi := 0, len(r.parts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.parts[m].FirstBlock <= uint64(i) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	p := lo - 1
	if i < 0 || p < 0 || !x.top.SeekRestart(p) || !x.enter(false) {
		x.release()
		if x.err == nil {
			x.err = x.top.Err()
		}
		return false
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
