package reader

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/prefetch"
)

// hashTable is a table's hash index section (format versions 2, and 3
// with a hash index): linear-probing slots from a key's (or prefix's)
// hash to its entry. Decoded once when the source keeps the section,
// else at each use from the cache.
type hashTable struct {
	src        source
	sec        section
	dataSize   uint64
	numBlocks  uint64
	v4         bool // the table is format version 4: its slots must be version 4's
	withFilter bool // and partitioned: the section must carry the whole filter

	once  sync.Once
	ready atomic.Bool
	kept  codec.HashIndex // decoded from sec.kept, once ready
}

// newHashTable returns the hash index of a table whose data blocks end
// at dataSize, where the section starts.
func newHashTable(src source, dataSize, size, numBlocks uint64) *hashTable {
	t := &hashTable{src: src, dataSize: dataSize, numBlocks: numBlocks}
	h := format.BlockHandle{Offset: dataSize, Length: size - format.BlockTrailerLen}
	t.sec = section{name: format.SectionHashIndex, h: h, slot: slotHashIndex, check: t.check}
	return t
}

func (t *hashTable) decode(contents []byte) (codec.HashIndex, error) {
	x, err := codec.DecodeHashIndex(contents, int64(t.dataSize), t.dataSize, t.numBlocks)
	switch {
	case err != nil:
	case x.FirstKeyShared() != t.v4:
		err = format.Corruptf(format.SectionHashIndex, int64(t.dataSize), "hash index of version 4 layout: %v; table of format version 4: %v", x.FirstKeyShared(), t.v4)
	case (x.Filter() != nil) != t.withFilter:
		err = format.Corruptf(format.SectionHashIndex, int64(t.dataSize), "hash index carries a filter: %v; the table is version 4 and partitioned: %v", x.Filter() != nil, t.withFilter)
	}
	if err != nil {
		return codec.HashIndex{}, err
	}
	return x, nil
}

func (t *hashTable) check(contents []byte, _ bool) error {
	_, err := t.decode(contents)
	return err
}

// get returns the hash index, loading it if need be: the kept one, or
// one decoded into *local from the cache; release *pin when done. local
// must not be on the caller's stack (source.entryAt).
func (t *hashTable) get(local *codec.HashIndex, pin *blockcache.Handle) (*codec.HashIndex, error) {
	if t.ready.Load() {
		return &t.kept, nil
	}
	b, err := t.sec.contents(t.src, pin)
	if err != nil {
		return nil, err
	}
	if t.sec.kept != nil {
		t.once.Do(func() {
			t.kept, _ = t.decode(b) // checked by the load
			t.ready.Store(true)
		})
		return &t.kept, nil
	}
	if *local, err = t.decode(b); err != nil {
		return nil, err
	}
	return local, nil
}

// hashedIndex looks keys up through the hash index: one hash of the key
// (or of its prefix, in a table with a splitter) leads through its slots
// straight to the entry, with no search of the index block or of the
// data block. Scans, and keys after their prefix's first entry, use the
// one-level or partitioned index it wraps.
type hashedIndex struct {
	index    // the table's index block or partitions
	src      source
	ht       *hashTable
	splitter format.Splitter // nil without one: slots name whole keys

	// filter is what Get and SeekPrefixGE probe before the slots: the
	// table's filter section (a one-level table's; a concrete type, so
	// that the probe costs no dynamic call), or nil: no filter, or a
	// partitioned table, where the
	// slots' tags reject an absent key as cheaply as the filter
	// partition's search would (see chooseLayers). The hash index probes
	// it itself, rather than leaving it to Get's filter layer, so that
	// the slot's cache line is on its way while the filter's is fetched:
	// a present key waits for both together, then for the entry, and an
	// absent key the filter rejects waits for the filter's line alone
	// (the filter is 6-8 times smaller than the slots, so more of it
	// stays in the CPU caches).
	filter *wholeFilter
}

func (x *hashedIndex) get(dst, key, fk []byte, h uint64, has bool) ([]byte, error) {
	if x.ht.ready.Load() { // kept: the fast path, without a scratch
		t := &x.ht.kept
		probe := t.Probe(h)
		probe.Prefetch()
		if x.filter != nil && !x.filter.mayContain(fk, h) {
			return dst, ErrNotFound
		}
		return x.probe(dst, key, fk, h, t, probe, has, nil)
	}
	// In the cache, or not loaded yet: the filter first, so that an
	// absent key it rules out reads none of the hash index; then the
	// hash index, decoded into, and pinned by, a scratch.
	if x.filter != nil && !x.filter.mayContain(fk, h) {
		return dst, ErrNotFound
	}
	s := getScratch()
	t, err := x.ht.get(&s.hidx, &s.hidxPin)
	if err != nil {
		putScratch(s)
		return dst, err
	}
	probe := t.Probe(h)
	probe.Prefetch()
	return x.probe(dst, key, fk, h, t, probe, has, s)
}

// probe follows the probe sequence of the hash index t from key's slot
// to the key's entry. In a table with a splitter the slot leads to the
// prefix's first entry, and a key after it is looked up through the
// wrapped index.
//
// s, if not nil, is the scratch that holds t; probe puts it back.
func (x *hashedIndex) probe(dst, key, fk []byte, h uint64, t *codec.HashIndex, probe codec.HashProbe, has bool, s *scratch) ([]byte, error) {
	var firstErr error // see probeEnd
	for {
		i, off, ok, err := probe.Next()
		if err != nil || !ok {
			putScratch(s)
			return dst, probeEnd(firstErr, err)
		}
		k, v, pin, fast, err := x.src.entryAt(t, i, off)
		if !fast && err == nil {
			if s == nil {
				s = getScratch()
			}
			k, v, err = x.entry(s, t, i, off)
		}
		if err != nil {
			pin.Release()
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if x.splitter != nil && hasPrefix(x.splitter, k, fk) {
			// The prefix's first entry.
			dst, later, err := prefixFirst(dst, k, key, v, has)
			pin.Release()
			putScratch(s)
			if later {
				return x.index.get(dst, key, fk, h, has)
			}
			return dst, err
		}
		if x.splitter == nil && bytes.Equal(k, key) {
			if !has {
				dst = append(dst, v...) // before the block v lies in is released
			}
			pin.Release()
			putScratch(s)
			return dst, nil
		}
		pin.Release()
	}
}

// entry decodes the entry a slot names (data block i, slot offset off)
// through the source's general path, which reads, checks and caches the
// block as needed. The key and value may alias s's buffers.
func (x *hashedIndex) entry(s *scratch, t *codec.HashIndex, i int, off uint64) (key, value []byte, err error) {
	h := t.BlockHandle(i)
	var base uint64 // what the slot's offset is relative to
	switch {
	case t.FileOffsets():
		base = h.Offset
	case t.DecodedOffsets():
		base = t.DecodedStart(i)
	}
	if off < base {
		return nil, nil, format.Corruptf(format.SectionHashIndex, int64(x.ht.dataSize), "slot names offset %d, before data block %d at %d", off, i, base)
	}
	off -= base
	contents, end, err := x.src.blockForEntry(s, i, h, off)
	if err == nil && end < 0 {
		end, err = codec.EntriesEnd(contents, int64(h.Offset))
	}
	if err != nil {
		return nil, nil, err
	}
	if off >= uint64(end) {
		return nil, nil, format.Corruptf(format.SectionDataBlock, int64(h.Offset), "hash index entry offset %d lies past the entries (%d bytes)", off, end)
	}
	prefetch.Bytes(contents[off:], entryPrefetchBytes)
	return codec.EntryIn(contents[:end:end], int64(h.Offset), uint32(off))
}

// seekPrefix positions it on the first entry >= key with prefix prefix,
// in a table with a splitter: the hash index slot of prefix leads to the
// prefix's first entry. key is >= prefix.
func (x *hashedIndex) seekPrefix(it *Iterator, prefix, key []byte) (ok, handled bool) {
	if x.splitter == nil {
		return false, false
	}
	h := codec.KeyHash(prefix)
	if x.filter != nil && !x.filter.mayContain(prefix, h) {
		it.loaded = false
		return false, true
	}
	t, err := x.ht.get(&it.s.hidx, &it.s.hidxPin)
	if err != nil {
		it.err, it.loaded = err, false
		return false, true
	}
	defer it.releaseHashIndex()
	probe := t.Probe(h)
	for {
		i, off, ok, err := probe.Next()
		if err != nil {
			it.err, it.loaded = err, false
			return false, true
		}
		if !ok {
			it.loaded = false
			return false, true // no slot names the prefix: absent
		}
		switch {
		case t.FileOffsets():
			off -= min(off, t.BlockHandle(i).Offset)
		case t.DecodedOffsets():
			off -= min(off, t.DecodedStart(i))
		}
		if !it.loadHashedBlock(t, i, off, false) {
			return false, true
		}
		if !it.s.data.SeekOffset(int(off)) {
			it.err, it.loaded = it.s.data.Err(), false
			return false, true
		}
		if !hasPrefix(x.splitter, it.s.data.Key(), prefix) {
			continue // another prefix's slot with the same tag
		}
		if bytes.Compare(it.s.data.Key(), key) >= 0 {
			return true, true
		}
		// A later version: search this block, then, past its end, the
		// whole table.
		if it.s.data.SeekGE(key) {
			return true, true
		}
		if err := it.s.data.Err(); err != nil {
			it.err, it.loaded = err, false
			return false, true
		}
		return it.seekGE(key), true
	}
}

// probeEnd is the result of a hash index lookup whose probe sequence
// ended (err: the slot error that ended it, if any) without finding the
// key. A slot of another key whose tag matches may lead into a damaged
// block; a lookup remembers the first such error (firstErr) but keeps
// probing, so that damage to one block does not fail lookups of keys
// stored elsewhere, and reports it only if the key is not found.
func probeEnd(firstErr, err error) error {
	switch {
	case firstErr != nil:
		return firstErr
	case err != nil:
		return err
	}
	return ErrNotFound
}

// prefixFirst decides a lookup of key in a table with a splitter from the
// entry a hash index slot names, k (value v), the first entry of key's
// prefix: key is that entry (v appended to dst unless has), absent (k
// sorts after it), or, later, one of the prefix's later entries, which
// the lookup must find through the table's other index. Append before
// releasing the block v lies in.
func prefixFirst(dst, k, key, v []byte, has bool) (out []byte, later bool, err error) {
	switch c := bytes.Compare(k, key); {
	case c == 0:
		if !has {
			dst = append(dst, v...)
		}
		return dst, false, nil
	case c > 0:
		return dst, false, ErrNotFound
	}
	return dst, true, nil
}
