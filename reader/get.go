package reader

import (
	"bytes"
	"math"
	"sync"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// scratch holds per-call buffers, pooled so lookups do not allocate.
type scratch struct {
	index    indexIter // the index block, or a Version3 table's top-level index or index partition
	data     format.BlockIter
	raw      []byte       // stored block bytes read through ReadAt
	decoded  []byte       // decoded block contents the cache could not take
	pin      cache.Handle // the cached block s.data reads, if any
	indexPin cache.Handle // the cached index block s.index reads, if any
	partPin  cache.Handle // the cached partition a Version3 lookup reads, if any
	ra       *readahead   // an iterator's read-ahead window, over a ReaderAt
}

// setPin makes h the block s holds, releasing the previous one.
func (s *scratch) setPin(h cache.Handle) {
	s.pin.Release()
	s.pin = h
}

// scratchPool holds the lookup buffers of every reader: one pool for the
// process, not one per reader, so that many open tables do not each keep
// buffers per P, nor each refill them after every garbage collection.
var scratchPool sync.Pool // *scratch

func (r *Reader) getScratch() *scratch {
	if s, ok := scratchPool.Get().(*scratch); ok {
		return s
	}
	return new(scratch)
}

// MayContain reports whether key may be in the table. False means the key
// is certainly absent. It probes the filter only (with key's prefix, in a
// table built with a splitter), allocates nothing, and returns true when
// the table's filter policy or splitter is unknown, its filter section is
// corrupt, or the reader is closed.
func (r *Reader) MayContain(key []byte) (ok bool) {
	return r.probeFilter(key[:r.split(key)])
}

// MayContainPrefix reports whether a key whose prefix is prefix (under the
// table's format.Splitter, builder.Options.Splitter) may be in the table.
// False means no key with that prefix is in the table. It probes the
// filter, which holds the table's distinct prefixes, and allocates
// nothing. It returns true for a table built without a splitter (its
// filter holds whole keys), or whose splitter or filter policy the reader
// does not know, whose filter section is corrupt, or when the reader is
// closed.
func (r *Reader) MayContainPrefix(prefix []byte) bool {
	if r.splitter == nil {
		return true
	}
	return r.probeFilter(prefix)
}

// probeFilter probes the filter for fk (a key, or a prefix in a table with
// a splitter), under the fault guard for a mapped file.
func (r *Reader) probeFilter(fk []byte) (ok bool) {
	if !r.acquire() {
		return true
	}
	if r.mapped == nil {
		ok = r.mayContain(fk)
		r.release()
		return ok
	}
	defer r.endGuardedMayContain(&ok, protect())
	return r.mayContain(fk)
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
	var h uint64
	if r.cacheLocal {
		h = format.KeyHash(key)
	}
	return r.mayContainHash(key, h)
}

// mayContainHash is mayContain given h = format.KeyHash(key) (used only
// when r.cacheLocal). key is what the filter holds: a key, or a prefix in
// a table with a splitter; in a partitioned table the filter probed is
// that of the partition of the first key with that prefix.
func (r *Reader) mayContainHash(key []byte, h uint64) bool {
	if r.parted {
		return r.mayContainParted(key, h)
	}
	if r.policy == nil || r.loadFilter() != nil {
		return true
	}
	if !r.filterKept {
		return r.mayContainCached(key, h)
	}
	if r.cacheLocal {
		return filterblock.BloomMayContainHash(r.filter, h)
	}
	return r.policy.MayContain(r.filter, key)
}

// mayContainCached is mayContainHash for a filter kept in the cache: it
// stays pinned for the probe.
func (r *Reader) mayContainCached(key []byte, h uint64) bool {
	var pin cache.Handle
	bits, err := r.filterBits(&pin)
	if err != nil {
		return true
	}
	var ok bool
	if r.cacheLocal {
		ok = filterblock.BloomMayContainHash(bits, h)
	} else {
		ok = r.policy.MayContain(bits, key)
	}
	pin.Release()
	return ok
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
		out, err = r.getAppend(dst, key, false)
		r.release()
		return out, err
	}
	defer r.endGuardedGet(dst, &out, &err, protect())
	return r.getAppend(dst, key, false)
}

// Has reports whether key is in the table. It takes Get's path (filter,
// then hash index or index and data block) without copying the value, and
// allocates nothing. An absent key gives (false, nil); a closed reader an
// error wrapping ErrClosed; damaged bytes one wrapping format.ErrCorrupt.
func (r *Reader) Has(key []byte) (found bool, err error) {
	if !r.acquire() {
		return false, ErrClosed
	}
	if r.mapped == nil {
		_, err = r.getAppend(nil, key, true)
		r.release()
	} else {
		err = r.hasGuarded(key)
	}
	if err == nil {
		return true, nil
	}
	if err == ErrNotFound {
		return false, nil
	}
	return false, err
}

// hasGuarded is Has's lookup in a mapped file, under the fault guard.
func (r *Reader) hasGuarded(key []byte) (err error) {
	var out []byte
	defer r.endGuardedGet(nil, &out, &err, protect())
	_, err = r.getAppend(nil, key, true)
	return err
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

// getAppend looks key up and appends its value to dst, or with has only
// reports (by a nil error) that it is there.
func (r *Reader) getAppend(dst, key []byte, has bool) ([]byte, error) {
	if r.useHash {
		return r.getHashed(dst, key, has)
	}
	if r.parted {
		return r.getPartedFiltered(dst, key, has, true)
	}
	if !r.mayContain(key[:r.split(key)]) {
		return dst, ErrNotFound
	}
	return r.getIndexed(dst, key, has)
}

// getIndexed looks key up through the index block and one data block,
// or in a Version3 table through its partition's index, without probing
// a filter.
func (r *Reader) getIndexed(dst, key []byte, has bool) ([]byte, error) {
	if r.parted {
		return r.getPartedFiltered(dst, key, has, false)
	}
	s := r.getScratch()
	defer r.putScratch(s)
	index, err := r.indexBlock(&s.indexPin)
	if err != nil {
		return dst, err
	}
	v, err := r.find(s, index, key)
	if err != nil || has {
		return dst, err
	}
	return append(dst, v...), nil
}

// getHashed is getAppend for tables whose hash index the reader uses
// (Version2, and a mapped Version3 table built with one): one hash of the
// key serves the filter and the hash index, whose slots lead straight to
// the entry. In a Version2 table the slot's cache line is prefetched
// before the filter is probed, so a present key waits for the filter line
// and the slot together, then for the entry; an absent key the filter
// rejects waits for the filter line alone (the filter is 6-8 times smaller
// than the slots, so more of it stays in cache). A partitioned table's
// filter is not probed (see below).
//
// In a table with a splitter the hash index and filter hold prefixes: the
// slot leads to the prefix's first entry, and a key after it is looked up
// through the index block.
func (r *Reader) getHashed(dst, key []byte, has bool) ([]byte, error) {
	fk := key[:r.split(key)]
	h := format.KeyHash(fk)
	if r.mapped == nil {
		// Reads cost more than cache misses here: the filter first, so
		// that an absent key it rules out reads none of the hash index.
		if !r.mayContainHash(fk, h) {
			return dst, ErrNotFound
		}
		if err := r.loadHashIndex(); err != nil {
			return dst, err
		}
		if !r.hidxKept {
			return r.getHashedCached(dst, key, h, has)
		}
		return r.probeHashed(dst, key, &r.hidx, r.hidx.Probe(h), has)
	}
	if err := r.loadHashIndex(); err != nil {
		return dst, err
	}
	x := &r.hidx
	if !r.hidxKept {
		return r.getHashedCached(dst, key, h, has)
	}
	probe := x.Probe(h)
	probe.Prefetch()
	if r.parted {
		// No filter: the key's filter partition would cost a search of
		// the top-level keys and a partition's check on top of its cache
		// line, while the slots' tags (8 bits or more) reject an absent
		// key at the cache line the probe has already asked for. Measured
		// (go test -bench 'Get/hash-parted', medians of 5-6 alternated
		// runs on a shared 2-core machine): probing the filter made Gets
		// of 100k-entry tables 19-28% slower for present keys and 26-63%
		// slower for absent ones; of 2M-entry tables
		// (SSTABLE_BENCH_ENTRIES=2000000, 125k random keys) 1-24% slower
		// for present keys and, for absent ones, from 1% faster to 7%
		// slower, within the noise.
		return r.probeHashed(dst, key, x, probe, has)
	}
	if r.policy != nil && r.loadFilter() == nil {
		if !r.filterKept {
			if !r.mayContain(fk) {
				return dst, ErrNotFound
			}
		} else if r.cacheLocal {
			if !filterblock.BloomMayContainHash(r.filter, h) {
				return dst, ErrNotFound
			}
		} else if !r.policy.MayContain(r.filter, fk) {
			return dst, ErrNotFound
		}
	}
	return r.probeHashed(dst, key, x, probe, has)
}

// getHashedCached is getHashed for a reader whose hash index is in the
// cache: it stays pinned for the lookup. The filter has passed key.
func (r *Reader) getHashedCached(dst, key []byte, h uint64, has bool) ([]byte, error) {
	var local format.HashIndex
	var pin cache.Handle
	x, err := r.hashIndex(&local, &pin)
	if err != nil {
		return dst, err
	}
	defer pin.Release()
	return r.probeHashed(dst, key, x, x.Probe(h), has)
}

// probeHashed follows the probe sequence of key's hash in the hash index x
// to the key's entry.
func (r *Reader) probeHashed(dst, key []byte, x *format.HashIndex, probe format.HashProbe, has bool) ([]byte, error) {
	prefix := key
	if r.splitter != nil {
		prefix = key[:r.split(key)]
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
		var pin cache.Handle // the cached block k and v lie in, on the fast path
		fast := false        // served without the general path below
		switch {
		case x.FileOffsets() && r.mapped != nil:
			k, v, fast, err = r.entryAtFileOffset(i, off)
		case x.DecodedOffsets() && r.blocks != nil:
			k, v, pin, fast, err = r.entryInCachedBlock(x, i, off)
		}
		if !fast && err == nil {
			var base uint64 // what the slot's offset is relative to
			switch {
			case x.FileOffsets():
				base = x.BlockHandle(i).Offset
			case x.DecodedOffsets():
				base = x.DecodedStart(i)
			}
			if off < base {
				err = format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names offset %d, before data block %d at %d", off, i, base)
			}
			off -= base
			if err == nil {
				if s == nil {
					s = r.getScratch()
				}
				k, v, err = r.entryInBlock(s, x, i, off)
			}
		}
		if err != nil {
			pin.Release()
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if r.splitter != nil && r.hasPrefix(k, prefix) {
			// The prefix's first entry.
			c := bytes.Compare(k, key)
			if c == 0 {
				if !has {
					dst = append(dst, v...)
				}
				pin.Release()
				r.putScratch(s)
				return dst, nil
			}
			pin.Release()
			r.putScratch(s)
			if c > 0 {
				return dst, ErrNotFound
			}
			return r.getIndexed(dst, key, has)
		}
		if r.splitter == nil && bytes.Equal(k, key) {
			if !has {
				dst = append(dst, v...) // before the block v lies in is released
			}
			pin.Release()
			r.putScratch(s)
			return dst, nil
		}
		pin.Release()
	}
}

// putScratch returns s, if not nil, to the pool, releasing its block.
func (r *Reader) putScratch(s *scratch) {
	if s != nil {
		s.pin.Release()
		s.indexPin.Release()
		s.partPin.Release()
		s.index.release()
		scratchPool.Put(s)
	}
}

// entryInCachedBlock decodes the entry at offset off of the concatenated
// decoded blocks (a compressed table's slot offset) when its data block i
// is in the cache: the lookup goes from the slot to the cached block to
// the entry. The block stays pinned by the returned Handle. ok is false,
// with no error, when the block is not cached; the caller then takes the
// general path, which reads and caches it.
func (r *Reader) entryInCachedBlock(x *format.HashIndex, i int, off uint64) (key, value []byte, pin cache.Handle, ok bool, err error) {
	if i >= r.blocks.Len() {
		return nil, nil, pin, false, nil
	}
	base := x.DecodedStart(i)
	pin, ok = r.blocks.GetAt(i, int(off-base)) // off < base gives a hint past the block, ignored
	if !ok {
		return nil, nil, pin, false, nil
	}
	b := pin.Bytes()
	end := uint64(pin.Aux())
	if off < base || off-base >= end || end > uint64(len(b)) {
		if end > uint64(len(b)) { // a malformed block: let the general path report it
			pin.Release()
			return nil, nil, cache.Handle{}, false, nil
		}
		return nil, nil, pin, true, format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "slot names decoded offset %d, outside the entries of data block %d [%d, %d)", off, i, base, base+end)
	}
	off -= base
	format.Prefetch(b[off:], entryPrefetchBytes)
	key, value, err = format.EntryIn(b[:end:end], int64(x.BlockHandle(i).Offset), uint32(off))
	return key, value, pin, true, err
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
	h := r.hidx.BlockHandle(i) // file offsets are used only when mapped, when the reader keeps the hash index
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
func (r *Reader) entryInBlock(s *scratch, x *format.HashIndex, i int, off uint64) (key, value []byte, err error) {
	h := x.BlockHandle(i)
	entries, ok := r.mappedEntries(i, h)
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

// mappedEntries returns the entries (the contents up to the restart array)
// of data block i when they are at hand without a read, a decompression, a
// checksum or a look at the block's far end: raw in the mapping and
// already checked.
func (r *Reader) mappedEntries(i int, h format.BlockHandle) ([]byte, bool) {
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
func (r *Reader) find(s *scratch, index, key []byte) ([]byte, error) {
	if err := s.index.BlockIter.Init(format.SectionIndex, int64(r.footer.Index.Offset), index); err != nil {
		return nil, err
	}
	return r.findIn(s, key, 0)
}

// findIn is find with s.index.BlockIter initialised on the index block,
// or on an index partition whose entry 0 is data block base.
func (r *Reader) findIn(s *scratch, key []byte, base int) ([]byte, error) {
	idx := &s.index.BlockIter
	if !idx.SeekGE(key) {
		if err := idx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	contents, h, err := r.blockAt(s, idx, base)
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
// checking its checksum before first use; base is the number of the data
// block of idx's entry 0 (0 but in an index partition).
func (r *Reader) blockAt(s *scratch, idx *format.BlockIter, base int) ([]byte, format.BlockHandle, error) {
	i, ok := idx.RestartIndex()
	i += base
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
// the cache, or are read, checked, decoded and cached. A cached block stays
// pinned by s.pin until s moves to another block or is put back. The
// checksum of a mapped block is checked once, on first use.
func (r *Reader) dataBlock(s *scratch, i int, h format.BlockHandle) ([]byte, error) {
	s.setPin(cache.Handle{})
	if h.Offset > r.dataEnd || h.Length > r.dataEnd-h.Offset || r.dataEnd-h.Offset-h.Length < format.BlockTrailerLen {
		return nil, format.Corruptf(format.SectionIndex, int64(r.footer.Index.Offset), "index entry %d: data block handle (offset %d, length %d) lies outside the data section [0, %d)", i, h.Offset, h.Length, r.dataEnd)
	}
	cached := r.blocks != nil && i < r.blocks.Len()
	if cached {
		if pin, ok := r.blocks.Get(i); ok {
			// A cached block was checked against this handle's bytes when
			// it was read; a hash index naming another length for block i
			// is caught by that check on the general path below.
			s.pin = pin
			if s.ra != nil && int64(h.Offset) == s.ra.next {
				// A cached block continues an iterator's sequential run:
				// the read after it is still sequential.
				s.ra.next = int64(h.Offset+h.Length) + format.BlockTrailerLen
			}
			return pin.Bytes(), nil
		}
	}
	stored, typ, err := r.checkedBlock(s, i, h)
	if err != nil {
		return nil, err
	}
	if r.mapped != nil && typ == format.BlockTypeRaw {
		return stored, nil // served from the mapping, never cached
	}
	if cached {
		n := decodedLen(stored, typ, int(r.props.MaxBlockSize))
		if pin, ok := r.blocks.Reserve(i, n); ok {
			out, err := decodeInto(pin.Bytes(), stored, typ, int64(h.Offset), int(r.props.MaxBlockSize))
			if err != nil {
				pin.Release()
				return nil, err
			}
			aux := uint32(math.MaxUint32) // malformed restarts: lookups take the slow path, which reports them
			if end, err := format.EntriesEnd(out, int64(h.Offset)); err == nil {
				aux = uint32(end)
			}
			r.blocks.Publish(i, pin, aux)
			s.setPin(pin) // releases the kept tail, if stored came from it
			return out, nil
		}
	}
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

// decodedLen returns the decoded size of a checked stored block, or 0 if
// its header is bad or claims more than maxLen bytes (decoding then
// reports the error).
func decodedLen(stored []byte, typ byte, maxLen int) int {
	n, err := format.DecodedLen(stored, typ)
	if err != nil || n < 0 || n > maxLen {
		return 0
	}
	return n
}

// decodeInto decodes a checked stored block into dst, which must be
// exactly its decoded size, and returns dst.
func decodeInto(dst, stored []byte, typ byte, off int64, maxLen int) ([]byte, error) {
	if typ == format.BlockTypeRaw {
		copy(dst, stored)
		return dst, nil
	}
	out, err := format.DecodeBlock(format.SectionDataBlock, off, stored, typ, maxLen, dst[:0])
	if err != nil {
		return nil, err
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return nil, format.Corruptf(format.SectionDataBlock, off, "block decodes to %d bytes, its header says %d", len(out), len(dst))
	}
	return dst, nil
}

// checkedBlock returns the stored bytes and type of data block i at handle
// h, its checksum checked. A mapped block is checked once, on first use,
// and its state word then records it (with whether it is raw and where its
// entries end); other blocks come from the kept tail (tail.go), pinned by
// s.pin, or are read into s.raw, and are checked each time.
func (r *Reader) checkedBlock(s *scratch, i int, h format.BlockHandle) (stored []byte, typ byte, err error) {
	if r.mapped == nil && r.tailEnd != 0 {
		if raw, pin, ok := r.fromTail(h.Offset, h.Length+format.BlockTrailerLen); ok {
			if stored, typ, err := format.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw); err == nil {
				s.setPin(pin) // stored stays valid until s moves on
				if s.ra != nil {
					s.ra.next = int64(h.End()) // a read after it is sequential
				}
				return stored, typ, nil
			}
			pin.Release() // read it instead: the kept copy may be what is damaged
		}
	}
	if r.mapped == nil && s.ra != nil {
		raw, err := r.readAhead(s, h)
		if err != nil {
			return nil, 0, err
		}
		return format.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw)
	}
	if r.mapped == nil || i >= len(r.verified) {
		raw, err := r.readBlock(format.SectionDataBlock, h, s.raw)
		if err != nil {
			return nil, 0, err
		}
		if r.mapped == nil {
			// A mapped reader's read returns the mapping itself, which
			// must never become the buffer of a pooled scratch: another
			// reader would read into it, writing to a read-only (or, once
			// this reader closes, unmapped) file mapping.
			s.raw = raw[:0]
		}
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
