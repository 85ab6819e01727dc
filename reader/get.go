package reader

import (
	"sync"

	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// scratch holds per-call buffers, pooled so lookups do not allocate.
type scratch struct {
	index    indexIter // the index block, or a Version3 table's top-level index or index partition
	data     codec.BlockIter
	raw      []byte            // stored block bytes read through ReadAt
	decoded  []byte            // decoded block contents the cache could not take
	pin      blockcache.Handle // the cached block s.data reads, if any
	indexPin blockcache.Handle // the cached index block s.index reads, if any
	partPin  blockcache.Handle // the cached partition a Version3 lookup reads, if any
	hidx     codec.HashIndex   // a hash index decoded from the cache for a lookup
	hidxPin  blockcache.Handle // its cached bytes
	ra       *readahead        // an iterator's read-ahead window, used over a ReaderAt
	key      []byte            // a version 4 entry's key, put together from its block's first key (compactIndex)
}

// setPin makes h the block s holds, releasing the previous one.
func (s *scratch) setPin(h blockcache.Handle) {
	s.pin.Release()
	s.pin = h
}

// scratchPool holds the lookup buffers of every reader: one pool for the
// process, not one per reader, so that many open tables do not each keep
// buffers per P, nor each refill them after every garbage collection.
var scratchPool sync.Pool // *scratch

func getScratch() *scratch {
	if s, ok := scratchPool.Get().(*scratch); ok {
		return s
	}
	return new(scratch)
}

// putScratch returns s, if not nil, to the pool, releasing its blocks.
func putScratch(s *scratch) {
	if s != nil {
		s.pin.Release()
		s.indexPin.Release()
		s.partPin.Release()
		s.hidxPin.Release()
		s.hidx = codec.HashIndex{}
		s.index.release()
		s.index.src, s.index.ps = nil, nil // keep no reader alive from the pool
		scratchPool.Put(s)
	}
}

// MayContain reports whether key may be in the table. False means the key
// is certainly absent. It probes the filter only (with key's prefix, in a
// table built with a splitter), allocates nothing, and returns true when
// the table's filter policy or splitter is unknown, its filter section is
// corrupt, or the reader is closed.
func (r *Reader) MayContain(key []byte) bool {
	fk := key[:r.split(key)]
	if f := r.held; f != nil && f.ready.Load() {
		return f.mayContain(fk, codec.KeyHash(fk)) || r.closed.Load()
	}
	return r.probeFilter(fk)
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
	if f := r.held; f != nil && f.ready.Load() {
		return f.mayContain(prefix, codec.KeyHash(prefix)) || r.closed.Load()
	}
	return r.probeFilter(prefix)
}

// probeFilter probes the filter for fk (a key, or a prefix in a table with
// a splitter), under the fault guard for a mapped file.
func (r *Reader) probeFilter(fk []byte) (ok bool) {
	if !r.acquire() {
		return true
	}
	if !r.guarded {
		ok = r.filter.mayContain(fk, codec.KeyHash(fk))
		r.release()
		return ok
	}
	defer r.endGuardedMayContain(&ok, protect())
	return r.filter.mayContain(fk, codec.KeyHash(fk))
}

// endGuardedMayContain is endGuardedGet for MayContain: a memory fault in
// the mapping makes it answer true.
func (r *Reader) endGuardedMayContain(ok *bool, old bool) {
	if v := recover(); v != nil {
		r.src.faultError(v) // re-panics unless the fault is in the mapping
		*ok = true
	}
	restoreFault(old)
	r.release()
}

// Get returns a copy of the value stored under key. It consults the
// filter first, then the index (the index block, the key's partition or
// the hash index) and one data block. An absent key gives ErrNotFound
// itself; a closed reader an error wrapping ErrClosed; damaged bytes a
// *format.CorruptError (wrapping format.ErrCorrupt); a failed read the
// source's error, wrapped. All but ErrNotFound name the table (see
// Reader). A key stored with a nil or empty value gives an empty, non-nil
// slice: the format does not tell them apart.
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
	fk := key[:r.split(key)]
	h := codec.KeyHash(fk)
	if f := r.held; f != nil && f.ready.Load() && !f.mayContainGet(fk, h) {
		// Ruled out without pinning the reader: the filter is on the
		// heap. Checked after the probe, closed tells a closed reader.
		if r.closed.Load() {
			return dst, r.errClosed
		}
		return dst, ErrNotFound
	}
	if !r.acquire() {
		return dst, r.errClosed
	}
	if !r.guarded {
		out, err = r.getAppend(dst, key, fk, h, false)
		r.release()
		if err != nil && err != ErrNotFound {
			err = r.named(err)
		}
		return out, err
	}
	defer r.endGuardedGet(dst, &out, &err, protect())
	return r.getAppend(dst, key, fk, h, false)
}

// Has reports whether key is in the table. It takes Get's path (filter,
// then index and data block) without copying the value, and allocates
// nothing. An absent key gives (false, nil); other errors are Get's.
func (r *Reader) Has(key []byte) (found bool, err error) {
	fk := key[:r.split(key)]
	h := codec.KeyHash(fk)
	if f := r.held; f != nil && f.ready.Load() && !f.mayContain(fk, h) {
		if r.closed.Load() {
			return false, r.errClosed
		}
		return false, nil
	}
	if !r.acquire() {
		return false, r.errClosed
	}
	if !r.guarded {
		_, err = r.getAppend(nil, key, fk, h, true)
		r.release()
	} else {
		err = r.hasGuarded(key, fk, h)
	}
	if err == nil {
		return true, nil
	}
	if err == ErrNotFound {
		return false, nil
	}
	return false, r.named(err)
}

// hasGuarded is Has's lookup in a mapped file, under the fault guard.
func (r *Reader) hasGuarded(key, fk []byte, h uint64) (err error) {
	var out []byte
	defer r.endGuardedGet(nil, &out, &err, protect())
	_, err = r.getAppend(nil, key, fk, h, true)
	return err
}

// endGuardedGet, deferred by GetAppend on a mapped file (one deferred call
// instead of three: their cost showed in the profile of a lookup served
// from cache), turns a memory fault in the mapping into an error, restores
// the goroutine's panic-on-fault setting and releases the reader.
func (r *Reader) endGuardedGet(dst []byte, out *[]byte, err *error, old bool) {
	if v := recover(); v != nil {
		*out, *err = dst, r.src.faultError(v)
	}
	if *err != nil && *err != ErrNotFound {
		*err = r.named(*err)
	}
	restoreFault(old)
	r.release()
}

// getAppend is a lookup, top to bottom: the filter rules the key (or its
// prefix, fk, whose hash is h) out or lets it through, then the index
// finds its data block and entry, which the source reads. With has it
// only reports, by a nil error, that key is there.
func (r *Reader) getAppend(dst, key, fk []byte, h uint64, has bool) ([]byte, error) {
	f := r.getFilter
	if hf := r.held; hf != nil {
		switch {
		case hf.ready.Load():
			f = nil // probed before the reader was pinned
		case hf.fill(r): // the first lookups make the copy
			f = hf
		}
	}
	if f != nil && !f.mayContain(fk, h) {
		return dst, ErrNotFound
	}
	return r.index.get(dst, key, fk, h, has)
}
