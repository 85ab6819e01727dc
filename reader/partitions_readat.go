package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
)

// Partitions read through a ReaderAt live in the cache, one slot each of
// readAtSource.partTable, pinned while used and read again, with their
// checksums, if evicted. A lookup that misses one reads its neighbours
// too (PartitionWindow), or on the reader's second miss all of them
// (PartitionPrefetchShare); an iterator moving from one partition to the
// next reads the following ones ahead (PartitionReadahead).

// PartitionReadahead is how many bytes of partitions an iterator over a
// ReaderAt reads at once when it moves from one partition of a Version3
// table to the next (a scan): the partitions that fit whole in 1 MiB,
// each then cached in its slot, so that a full scan reads the partitions
// in about one ReadAt per MiB of them rather than one per partition (1%
// more reads than a version 1 table's scan). The buffer is the
// iterator's own, allocated on its first such read and reused, at most
// this size (besides its data read-ahead window, MaxReadahead).
const PartitionReadahead = 1 << 20

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

// partition returns partition p from the cache, the kept tail or a read
// of its window (or of every uncached partition); with ahead, of the
// partitions after it that fit in PartitionReadahead bytes, into *ahead.
func (s *readAtSource) partition(ps *partitions, p int, ahead *[]byte) ([]byte, blockcache.Handle, error) {
	var pin blockcache.Handle
	b, err := s.partitionPinned(ps, p, &pin, ahead)
	return b, pin, err
}

// partitionPinned is partition, pinning the partition by *pin.
func (s *readAtSource) partitionPinned(ps *partitions, p int, pin *blockcache.Handle, ahead *[]byte) ([]byte, error) {
	s.partsOnce.Do(func() { s.partTable, _ = s.sections.NewSibling(len(ps.parts)) })
	if s.partTable == nil { // Close came before the first load set it up
		ph := ps.parts[p]
		b := make([]byte, ph.Len())
		if err := s.readFull(format.SectionIndexPartition, b, int64(ph.Offset)); err != nil {
			return nil, err
		}
		if err := ps.check(p, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	if h, ok := s.partTable.Get(p); ok {
		*pin = h
		return h.Bytes(), nil
	}
	if kept, ok := s.partitionFromTail(ps, p, pin); ok {
		return kept, nil
	}
	// Concurrent misses of p wait for one read of it.
	f, lead := s.partFills.join(p)
	if !lead {
		s.partFills.wait(f)
		if h, ok := s.partTable.Get(p); ok {
			*pin = h
			return h.Bytes(), nil
		}
	} else {
		defer s.partFills.land(p, f)
	}
	if ahead != nil {
		q := p
		for q+1 < len(ps.parts) && ps.parts[q+1].End()-ps.parts[p].Offset <= PartitionReadahead {
			q++
		}
		if q > p {
			defer s.leadPartitions(p, q, p)()
			return s.readPartitions(ps, p, q, p, pin, ahead)
		}
	}
	lo, hi := s.partitionWindow(ps, p)
	if s.prefetchAll(ps) {
		lo, hi = s.uncachedRange(ps, p)
	}
	defer s.leadPartitions(lo, hi, p)()
	return s.readPartitions(ps, lo, hi, p, pin, nil)
}

// leadPartitions leads the fills of partitions lo to hi but p (whose fill
// the caller leads already) that no one is filling, so that goroutines
// missing them wait for the caller's one read of the window rather than
// read windows of their own, and returns the function that ends them.
func (s *readAtSource) leadPartitions(lo, hi, p int) func() {
	var led []int
	var fs []*flight
	for i := lo; i <= hi; i++ {
		if i == p {
			continue
		}
		if f := s.partFills.tryLead(i); f != nil {
			led, fs = append(led, i), append(fs, f)
		}
	}
	return func() {
		for j, i := range led {
			s.partFills.land(i, fs[j])
		}
	}
}

// prefetchAll reports whether a lookup missing a partition should read
// all the uncached partitions: on the reader's second miss, once, when
// PartitionPrefetchShare allows it.
func (s *readAtSource) prefetchAll(ps *partitions) bool {
	if s.partMisses.Load() >= 2 {
		return false // done, or taken by another goroutine
	}
	total := ps.parts[len(ps.parts)-1].End() - ps.parts[0].Offset
	if total > uint64(s.cache.Capacity()/PartitionPrefetchShare) {
		s.partMisses.Store(2)
		return false
	}
	return s.partMisses.Add(1) == 2
}

// uncachedRange returns the partitions [lo, hi] from the first not in the
// cache to the last, around p, which is not.
func (s *readAtSource) uncachedRange(ps *partitions, p int) (lo, hi int) {
	lo, hi = 0, len(ps.parts)-1
	for lo < p && s.partCached(ps, lo) {
		lo++
	}
	for hi > p && s.partCached(ps, hi) {
		hi--
	}
	return lo, hi
}

// partitionWindow returns the partitions [lo, hi] a lookup missing
// partition p reads: p and its uncached neighbours that lie whole in the
// PartitionWindow-aligned bytes of the partitions section holding p
// (starting at p when p straddles that window's end). lo == hi means p
// alone.
func (s *readAtSource) partitionWindow(ps *partitions, p int) (lo, hi int) {
	base := ps.parts[0].Offset
	ph := ps.parts[p]
	w := base + (ph.Offset-base)/PartitionWindow*PartitionWindow
	if ph.End() > w+PartitionWindow {
		w = ph.Offset
	}
	lo, hi = p, p
	for lo > 0 && ps.parts[lo-1].Offset >= w {
		lo--
	}
	for hi+1 < len(ps.parts) && ps.parts[hi+1].End() <= w+PartitionWindow {
		hi++
	}
	for lo < p && s.partCached(ps, lo) {
		lo++
	}
	for hi > p && s.partCached(ps, hi) {
		hi--
	}
	return lo, hi
}

// partCached reports whether partition i is in the cache, in its slot
// or in the kept tail.
func (s *readAtSource) partCached(ps *partitions, i int) bool {
	h, ok := s.partTable.Get(i)
	if !ok && s.inTail(ps.parts[i].Offset, ps.parts[i].Len()) {
		h, ok = s.sections.Get(slotTail)
	}
	h.Release()
	return ok
}

// partitionFromTail returns the bytes of partition p, checked, when they
// lie in the kept tail: copied to p's cache slot, pinned by *pin, or when
// the cache cannot take them to memory of their own. ok is false when the
// tail does not hold p, is no longer cached, or holds a copy that fails
// the check (the caller then reads p, which reports real damage).
func (s *readAtSource) partitionFromTail(ps *partitions, p int, pin *blockcache.Handle) (b []byte, ok bool) {
	ph := ps.parts[p]
	raw, tail, ok := s.fromTail(ph.Offset, ph.Len())
	if !ok {
		return nil, false
	}
	defer tail.Release()
	if ps.check(p, raw) != nil {
		return nil, false
	}
	h, ok := s.partTable.Reserve(p, len(raw))
	if !ok {
		return bytes.Clone(raw), true
	}
	copy(h.Bytes(), raw)
	s.partTable.Publish(p, h, 0)
	*pin = h
	return h.Bytes(), true
}

// readPartitions reads partitions [lo, hi], which hold p, with one ReadAt,
// caches each that checks out and is not cached yet, and returns p's
// bytes. They are read into *buf (grown as needed) or, with a nil buf,
// into memory lent by the cache for the call (or allocated when it cannot
// lend it). p's bytes come from the cache or, when the cache cannot take
// them, from *buf, valid until the next call; with a nil buf they are
// then copied to memory of their own.
func (s *readAtSource) readPartitions(ps *partitions, lo, hi, p int, pin *blockcache.Handle, buf *[]byte) ([]byte, error) {
	start := ps.parts[lo].Offset
	n := int(ps.parts[hi].End() - start)
	var b []byte
	var lent blockcache.Handle
	switch {
	case buf != nil:
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		b = (*buf)[:n]
	default:
		var ok bool
		if lent, ok = s.sections.Reserve(slotReadahead, n); ok {
			b = lent.Bytes()
		} else {
			b = make([]byte, n)
		}
	}
	defer lent.Release()
	if err := s.readFull(format.SectionIndexPartition, b, int64(start)); err != nil {
		return nil, err
	}
	var mine []byte // p's bytes, if the cache did not take them
	for i := lo; i <= hi; i++ {
		ph := ps.parts[i]
		raw := b[ph.Offset-start : ph.End()-start]
		if i != p {
			if h, ok := s.partTable.Get(i); ok {
				h.Release()
				continue
			}
		}
		if err := ps.check(i, raw); err != nil {
			if i == p {
				return nil, err
			}
			continue // reported when a lookup or iterator gets there
		}
		h, ok := s.partTable.Reserve(i, len(raw))
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
		s.partTable.Publish(i, h, 0)
		if i == p {
			*pin = h
			mine = h.Bytes()
		} else {
			h.Release()
		}
	}
	return mine, nil
}
