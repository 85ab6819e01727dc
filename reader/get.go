package reader

import (
	"bytes"
	"slices"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// scratch holds per-call buffers, pooled so lookups do not allocate.
type scratch struct {
	index   format.BlockIter
	data    format.BlockIter
	raw     []byte // stored block bytes read through ReadAt
	decoded []byte // snappy-decoded block contents
	scan    bool   // owned by an iterator or Verify: see dataBlock
}

func (r *Reader) getScratch() *scratch {
	if s, ok := r.scratch.Get().(*scratch); ok {
		return s
	}
	return new(scratch)
}

// MayContain reports whether key may be in the table. False means the key
// is certainly absent. It probes the filter only, allocates nothing, and
// returns true when the table's filter policy is unknown, its filter
// section is corrupt, or the reader is closed.
func (r *Reader) MayContain(key []byte) (ok bool) {
	if !r.acquire() {
		return true
	}
	if r.mapped == nil {
		ok = r.mayContain(key)
		r.release()
		return ok
	}
	defer r.endGuardedMayContain(&ok, protect())
	return r.mayContain(key)
}

// endGuardedMayContain is endGuardedGet for MayContain: a memory fault in
// the mapping makes it answer true.
func (r *Reader) endGuardedMayContain(ok *bool, old bool) {
	if v := recover(); v != nil {
		r.faultError(v) // re-panics unless the fault is in the mapping
		*ok = true
	}
	restoreFault(old)
	r.release()
}

func (r *Reader) mayContain(key []byte) bool {
	if r.policy == nil || r.loadFilter() != nil {
		return true
	}
	if r.cacheLocal {
		return filterblock.BloomMayContain(r.filter, key)
	}
	return r.policy.MayContain(r.filter, key)
}

// Get returns a copy of the value stored under key. It consults the filter
// first, then binary-searches the index block and one data block. An
// absent key gives an error wrapping ErrNotFound; a closed reader one
// wrapping ErrClosed; damaged bytes one wrapping format.ErrCorrupt.
func (r *Reader) Get(key []byte) ([]byte, error) {
	v, err := r.GetAppend(nil, key)
	if err == nil && v == nil {
		v = []byte{}
	}
	return v, err
}

// GetAppend appends the value stored under key to dst and returns the
// extended slice; with enough capacity in dst it allocates nothing. Errors
// are those of Get, with dst returned unchanged; a memory fault in a mapped
// file that shrank while open gives an error wrapping format.ErrCorrupt.
func (r *Reader) GetAppend(dst, key []byte) (out []byte, err error) {
	if !r.acquire() {
		return dst, ErrClosed
	}
	if r.mapped == nil {
		out, err = r.getAppend(dst, key)
		r.release()
		return out, err
	}
	defer r.endGuardedGet(dst, &out, &err, protect())
	return r.getAppend(dst, key)
}

// endGuardedGet, deferred by GetAppend on a mapped file (one deferred call
// instead of three: their cost showed in the profile of a lookup served
// from cache), turns a memory fault in the mapping into an error, restores
// the goroutine's panic-on-fault setting and releases the reader.
func (r *Reader) endGuardedGet(dst []byte, out *[]byte, err *error, old bool) {
	if v := recover(); v != nil {
		*out, *err = dst, r.faultError(v)
	}
	restoreFault(old)
	r.release()
}

func (r *Reader) getAppend(dst, key []byte) ([]byte, error) {
	if r.props.HashIndexSize != 0 {
		return r.getHashed(dst, key)
	}
	if !r.mayContain(key) {
		return dst, ErrNotFound
	}
	if err := r.loadIndex(); err != nil {
		return dst, err
	}
	s := r.getScratch()
	defer r.scratch.Put(s)
	v, err := r.find(s, key)
	if err != nil {
		return dst, err
	}
	return append(dst, v...), nil
}

// getHashed is getAppend for Version2 tables: one hash of the key serves
// the filter and the hash index, whose slots lead straight to the entry.
// The slot's cache line is prefetched before the filter is probed, so a
// present key waits for the filter line and the slot together, then for
// the entry; an absent key the filter rejects waits for the filter line
// alone (the filter is 6-8 times smaller than the slots, so more of it
// stays in cache).
func (r *Reader) getHashed(dst, key []byte) ([]byte, error) {
	h := format.KeyHash(key)
	if err := r.loadHashIndex(); err != nil {
		return dst, err
	}
	probe := r.hidx.Probe(h)
	probe.Prefetch()
	if r.policy != nil && r.loadFilter() == nil {
		if r.cacheLocal {
			if !filterblock.BloomMayContainHash(r.filter, h) {
				return dst, ErrNotFound
			}
		} else if !r.policy.MayContain(r.filter, key) {
			return dst, ErrNotFound
		}
	}
	// A slot of another key whose tag matches may lead into a damaged
	// block; remember that error, but keep probing, so that damage to one
	// block does not fail lookups of keys stored elsewhere.
	var firstErr error
	var s *scratch // taken from the pool only off the fast paths
	for {
		i, off, ok, err := probe.Next()
		if err != nil || !ok {
			if firstErr == nil {
				firstErr = err
			}
			if firstErr == nil {
				firstErr = ErrNotFound
			}
			r.putScratch(s)
			return dst, firstErr
		}
		var k, v []byte
		fast := false // served without the general path below
		switch {
		case r.hidx.FileOffsets() && r.mapped != nil:
			k, v, fast, err = r.entryAtFileOffset(i, off)
		case r.arena.Load() != nil:
			k, v, err = r.entryInArena(i, off)
			fast = true
		}
		if !fast && err == nil {
			var base uint64 // what the slot's offset is relative to
			switch {
			case r.hidx.FileOffsets():
				base = r.hidx.BlockHandle(i).Offset
			case r.hidx.DecodedOffsets():
				base = r.hidx.DecodedStart(i)
			}
			if off < base {
				err = format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names offset %d, before data block %d at %d", off, i, base)
			}
			off -= base
			if err == nil {
				if s == nil {
					s = r.getScratch()
				}
				k, v, err = r.entryInBlock(s, i, off)
			}
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if bytes.Equal(k, key) {
			dst = append(dst, v...) // before s, which v may alias, goes back
			r.putScratch(s)
			return dst, nil
		}
	}
}

// putScratch returns s, if not nil, to the pool.
func (r *Reader) putScratch(s *scratch) {
	if s != nil {
		r.scratch.Put(s)
	}
}

// entryInArena decodes the entry at offset off of the arena (a slot's
// offset in the concatenated decoded blocks); i is its data block. As in
// entryAtFileOffset, the entry's lines are requested before the block's
// state, which only bounds them, arrives.
func (r *Reader) entryInArena(i int, off uint64) (key, value []byte, err error) {
	a := r.arena.Load()
	if off >= uint64(len(a.mem)) {
		return nil, nil, format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names decoded offset %d, past the %d decoded bytes", off, len(a.mem))
	}
	format.Prefetch(a.mem[off:], entryPrefetchBytes)
	start, end, err := r.arenaEntries(a, i)
	if err != nil {
		return nil, nil, err
	}
	if off < start || off >= end {
		return nil, nil, format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names decoded offset %d, outside the entries of data block %d [%d, %d)", off, i, start, end)
	}
	return format.EntryIn(a.mem[off:end:end], int64(r.hidx.BlockHandle(i).Offset), 0)
}

// entryAtFileOffset decodes the entry at file offset off of a mapped
// table whose hash index holds file offsets; i is its data block. The
// entry's address depends only on the slot, so its cache miss overlaps
// with the loads of block i's state and offset, which only bound it. ok is
// false, with no error, if the block has not been checked yet: the caller
// then takes the general path, which checks it.
func (r *Reader) entryAtFileOffset(i int, off uint64) (key, value []byte, ok bool, err error) {
	if off >= r.dataEnd {
		return nil, nil, true, format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names file offset %d, past the data blocks", off)
	}
	// An entry of a 16-byte key and a 100-byte value spans two or three
	// cache lines; ask for all of them now rather than for the value's
	// lines only once the header has arrived.
	format.Prefetch(r.mapped[off:], entryPrefetchBytes)
	h := r.hidx.BlockHandle(i)
	if i < len(r.verified) {
		st := r.verified[i].Load()
		end := uint64(st & entriesUnknown)
		if st&(blockChecked|blockRaw) == blockChecked|blockRaw && end != entriesUnknown && end <= h.Length {
			if off < h.Offset || off >= h.Offset+end {
				return nil, nil, true, format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names file offset %d, outside the entries of data block %d [%d, %d)", off, i, h.Offset, h.Offset+end)
			}
			key, value, err = format.EntryIn(r.mapped[off:h.Offset+end], int64(h.Offset), 0)
			return key, value, true, err
		}
	}
	return nil, nil, false, nil
}

// entryPrefetchBytes is how much of an entry a lookup prefetches from its
// first byte: three cache lines.
const entryPrefetchBytes = 192

// entryInBlock decodes the entry at offset off of data block i's decoded
// contents, reading, checking and caching the block as needed. The key
// and value may alias s's buffers.
func (r *Reader) entryInBlock(s *scratch, i int, off uint64) (key, value []byte, err error) {
	h := r.hidx.BlockHandle(i)
	entries, ok := r.fastEntries(i, h)
	if !ok {
		contents, err := r.dataBlock(s, i, h)
		if err != nil {
			return nil, nil, err
		}
		end, err := format.EntriesEnd(contents, int64(h.Offset))
		if err != nil {
			return nil, nil, err
		}
		entries = contents[:end]
	}
	if off >= uint64(len(entries)) {
		return nil, nil, format.Corruptf(format.SectionDataBlock, int64(h.Offset), "hash index entry offset %d lies past the entries (%d bytes)", off, len(entries))
	}
	format.Prefetch(entries[off:], entryPrefetchBytes)
	return format.EntryIn(entries, int64(h.Offset), uint32(off))
}

// fastEntries returns the entries (the contents up to the restart array)
// of data block i when they are at hand without a read, a decompression, a
// checksum or a look at the block's far end: cached, or raw in the mapping
// and already checked.
func (r *Reader) fastEntries(i int, h format.BlockHandle) ([]byte, bool) {
	if r.cache != nil && i < r.cache.blocks() {
		if b, end, ok := r.cache.getEntries(i); ok {
			return b[:end], true
		}
	}
	if r.mapped != nil && i < len(r.verified) {
		st := r.verified[i].Load()
		if st&(blockChecked|blockRaw) == blockChecked|blockRaw && st&entriesUnknown != entriesUnknown {
			if end := uint64(st & entriesUnknown); end <= h.Length {
				return r.mapped[h.Offset : h.Offset+end : h.Offset+end], true
			}
		}
	}
	return nil, false
}

// find looks key up in the index and its data block. The value it returns
// aliases the mapping or s's buffers.
func (r *Reader) find(s *scratch, key []byte) ([]byte, error) {
	idx := &s.index
	if err := idx.Init(format.SectionIndex, int64(r.footer.Index.Offset), r.index); err != nil {
		return nil, err
	}
	if !idx.SeekGE(key) {
		if err := idx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	contents, h, err := r.blockAt(s, idx)
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

// blockAt returns the contents of the data block the index iterator is on,
// checking its checksum before first use.
func (r *Reader) blockAt(s *scratch, idx *format.BlockIter) ([]byte, format.BlockHandle, error) {
	i, ok := idx.RestartIndex()
	if !ok {
		return nil, format.BlockHandle{}, format.Corruptf(format.SectionIndex, int64(r.footer.Index.Offset), "index entry is not a restart point")
	}
	h, n := format.DecodeHandle(idx.Value())
	if n <= 0 || n != len(idx.Value()) {
		return nil, h, format.Corruptf(format.SectionIndex, int64(r.footer.Index.Offset), "index entry %d: bad block handle", i)
	}
	contents, err := r.dataBlock(s, i, h)
	return contents, h, err
}

// dataBlock returns the contents of data block number i at handle h.
// Raw blocks of a mapped file are served from the mapping; others come from
// the block cache, or are read, checked, decoded and cached. The checksum
// of a mapped block is checked once, on first use.
func (r *Reader) dataBlock(s *scratch, i int, h format.BlockHandle) ([]byte, error) {
	// r.arena is set only after the hash index has loaded, so r.hidx is
	// valid whenever it is seen set.
	// A block the arena cannot take (its hash index entry disagrees with
	// it) is read the ordinary way, so a damaged hash index does not stop
	// scans; if the block itself is bad, that way reports it.
	if a := r.arena.Load(); a != nil && i < len(a.state) && h == r.hidx.BlockHandle(i) {
		if b, err := r.arenaBlock(s, a, i); err == nil {
			return b, nil
		}
	}
	if h.Offset > r.dataEnd || h.Length > r.dataEnd-h.Offset || r.dataEnd-h.Offset-h.Length < format.BlockTrailerLen {
		return nil, format.Corruptf(format.SectionIndex, int64(r.footer.Index.Offset), "index entry %d: data block handle (offset %d, length %d) lies outside the data section [0, %d)", i, h.Offset, h.Length, r.dataEnd)
	}
	cached := r.cache != nil && i < r.cache.blocks()
	if cached {
		if b, ok := r.cache.get(i); ok {
			return b, nil
		}
	}
	stored, typ, err := r.checkedBlock(s, i, h)
	if err != nil {
		return nil, err
	}
	if r.mapped != nil && typ == format.BlockTypeRaw {
		return stored, nil // served from the mapping, never cached
	}
	// A scan does not evict cached blocks to make room for its own: it
	// would replace the lookups' working set with blocks it reads once,
	// and churn the heap (at 10M entries a first scan through a full
	// 256 MiB cache ran at 2.4 times Pebble's time per entry). Like
	// LevelDB's ReadOptions.fill_cache = false, but only once the cache
	// is full.
	if cached && s.scan && r.cache.full(int64(r.props.MaxBlockSize)) {
		cached = false
	}
	if !cached {
		if typ == format.BlockTypeRaw {
			return stored, nil
		}
		out, err := format.DecodeBlock(format.SectionDataBlock, int64(h.Offset), stored, typ, int(r.props.MaxBlockSize), s.decoded)
		if err != nil {
			return nil, err
		}
		s.decoded = out[:0]
		return out, nil
	}
	// A fresh buffer: once cached, the block is shared and never rewritten.
	// Growing from nil rounds the capacity up to the allocator's size
	// class, so the cache charges what the block really occupies (a 4.1 KiB
	// block takes a 4.75 KiB allocation).
	var out []byte
	if typ == format.BlockTypeRaw {
		out = append(slices.Grow([]byte(nil), len(stored)), stored...)
	} else {
		n, err := snappy.DecodedLen(stored)
		if err != nil || n < 0 || n > int(r.props.MaxBlockSize) {
			n = 0 // DecodeBlock reports the error
		}
		if out, err = format.DecodeBlock(format.SectionDataBlock, int64(h.Offset), stored, typ, int(r.props.MaxBlockSize), slices.Grow([]byte(nil), n)); err != nil {
			return nil, err
		}
	}
	return r.cache.put(i, out), nil
}

// checkedBlock returns the stored bytes and type of data block i at handle
// h, its checksum checked. A mapped block is checked once, on first use,
// and its state word then records it (with whether it is raw and where its
// entries end); other blocks are read into s.raw and checked each time.
func (r *Reader) checkedBlock(s *scratch, i int, h format.BlockHandle) (stored []byte, typ byte, err error) {
	if r.mapped == nil || i >= len(r.verified) {
		raw, err := r.readBlock(format.SectionDataBlock, h, s.raw)
		if err != nil {
			return nil, 0, err
		}
		s.raw = raw[:0]
		return format.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw)
	}
	buf := r.mapped[h.Offset:h.End()]
	word := &r.verified[i]
	if word.Load()&blockChecked == 0 {
		stored, typ, err := format.CheckBlock(format.SectionDataBlock, int64(h.Offset), buf)
		if err != nil {
			return nil, 0, err
		}
		st := uint32(blockChecked | entriesUnknown)
		if typ == format.BlockTypeRaw {
			st |= blockRaw
			if end, err := format.EntriesEnd(stored, int64(h.Offset)); err == nil && end < entriesUnknown {
				st = blockChecked | blockRaw | uint32(end)
			}
		}
		word.Store(st)
	}
	return buf[:h.Length], buf[h.Length], nil
}

// Per-block words of Reader.verified, for mapped files: 0 until the
// block's checksum has passed; then blockChecked, with blockRaw if the
// block is stored raw, and in the low 30 bits the end of a raw block's
// entries (the restart array's offset), or entriesUnknown. Knowing the end
// spares a hash-index lookup a read of the restart count at the block's
// far end.
const (
	blockChecked   = 1 << 31
	blockRaw       = 1 << 30
	entriesUnknown = 1<<30 - 1
)

// forgetVerified clears data block i's word so that its next use checks
// the checksum again.
func (r *Reader) forgetVerified(i int) {
	if i < len(r.verified) {
		r.verified[i].Store(0)
	}
}
