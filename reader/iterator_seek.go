package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// First moves to the first entry within the bounds (at or after
// LowerBound); false if there is none or on error.
func (it *Iterator) First() (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	it.inPrefix = false
	if it.lower != nil {
		return it.checkUpper(it.seekGE(it.lower))
	}
	it.startScan()
	it.lazyIndex = 0
	if !it.usable() || !it.s.index.First() || !it.loadBlock(true) {
		it.stop()
		return false
	}
	it.s.data.First()
	return it.checkUpper(it.forward())
}

// Last moves to the last entry within the bounds (before UpperBound);
// false if there is none or on error.
func (it *Iterator) Last() (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	it.inPrefix = false
	if it.upper != nil {
		return it.checkLower(it.seekLT(it.upper))
	}
	it.startScan()
	it.lazyIndex = 0
	if !it.usable() || !it.s.index.Last() || !it.loadBlock(false) {
		it.stop()
		return false
	}
	it.s.data.Last()
	return it.checkLower(it.backward())
}

// SeekGE moves to the first entry whose key is >= key (and >= LowerBound,
// < UpperBound); false if there is none or on error.
func (it *Iterator) SeekGE(key []byte) (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	it.inPrefix = false
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.checkUpper(it.seekGE(key))
}

// SeekLT moves to the last entry whose key is < key (and < UpperBound,
// >= LowerBound); false if there is none or on error. Like SeekGE it
// allocates nothing.
func (it *Iterator) SeekLT(key []byte) (ok bool) {
	defer restoreFault(protect())
	defer it.recoverFault(&ok)
	it.inPrefix = false
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.checkLower(it.seekLT(key))
}

// SeekPrefixGE moves to the first entry whose key is >= key and whose
// prefix is prefix (and within the bounds); false if there is none or on
// error. As with Pebble's SeekPrefixGE, key should have the prefix
// (key[:Split(key)] == prefix); a key below prefix seeks from prefix.
//
// In a table built with a splitter (builder.Options.Splitter) the reader
// knows, the filter is probed with prefix first: when it rules the prefix
// out, SeekPrefixGE returns false without reading a data block. With a
// hash index as well, a present prefix's slot leads straight to its first
// entry, without searching the index block; in a memory-mapped
// partitioned table (format.Version3) with a hash index, the slots alone
// rule an absent prefix out (a slot whose tag matches by chance costs a
// data block's entry, as a filter's false positive would), without the
// filter. In other tables it works as
// SeekGE followed by a check that the key found starts with prefix
// (bytes.HasPrefix). The iterator is exhausted, not positioned, when it
// returns false; Next then returns false, and the next key with another
// prefix is not shown.
//
// When it returns true, the iterator is in prefix iteration mode (see
// Iterator): Next and Prev walk the prefix's keys, within the bounds, and
// return false past them, so that
//
//	for ok := it.SeekPrefixGE(p, k); ok; ok = it.Next() { ... }
//
// sees the keys >= k with prefix p and stops. The iterator copies prefix.
// It allocates nothing once its copy has room for prefix.
func (it *Iterator) SeekPrefixGE(prefix, key []byte) (ok bool) {
	r := it.r
	it.inPrefix = false
	if !it.usable() {
		return false
	}
	defer it.endGuard(&ok, protect())
	if bytes.Compare(key, prefix) < 0 {
		key = prefix // every key with the prefix is >= it
	}
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	// An index with a faster way (a hash index over prefixes) probes
	// the filter itself; others are served by the filter and SeekGE.
	ok, handled := r.index.seekPrefix(it, prefix, key)
	if !handled && r.splitter != nil && !r.filter.mayContain(prefix, codec.KeyHash(prefix)) {
		it.loaded = false
		return false
	}
	if !handled {
		ok = it.seekGE(key)
		// Keys sort by prefix (the builder refuses others), but a key
		// shorter than format.Suffix's n is its own prefix, so the first
		// key >= key may have a smaller prefix than key's (FuzzPrefix
		// found one: prefix "\x00" ahead of "\x00\x04"). Step over them.
		for ok && r.splitter != nil {
			k := it.s.data.Key()
			if bytes.Compare(k[:r.split(k)], prefix) >= 0 {
				break
			}
			ok = it.Next()
		}
	}
	if ok && !hasPrefix(r.splitter, it.s.data.Key(), prefix) {
		it.loaded = false
		return false
	}
	if ok = it.checkUpper(ok); ok {
		it.inPrefix = true
		it.prefix = append(it.prefix[:0], prefix...)
	}
	return ok
}

// SeekPrefixLT moves to the last entry whose key is < key and whose
// prefix is prefix (and within the bounds); false if there is none or on
// error. It is SeekPrefixGE's mirror, for keys whose suffixes sort
// ascending by version, such as a big-endian timestamp after the user
// key: the newest version of user key p at or below timestamp ts is
//
//	it.SeekPrefixLT(p, binary.BigEndian.AppendUint64(p, ts+1))
//
// (see the example; for ts = math.MaxUint64, any key above
// the prefix's keys, such as p followed by nine 0xff bytes). key is an
// exclusive bound and need not have the prefix: one above every key with
// the prefix finds the prefix's last key, one at or below prefix finds
// none.
//
// In a table built with a splitter (builder.Options.Splitter) the reader
// knows, the filter is probed with prefix first: when it rules the prefix
// out, SeekPrefixLT returns false without reading a data block. Then it
// seeks as SeekLT does and checks the found key's prefix, reading no
// block that the index shows to lie wholly below the prefix. The
// iterator is unpositioned when it returns false.
//
// When it returns true, the iterator is in prefix iteration mode (see
// Iterator): Prev walks the prefix's older versions and Next its newer
// ones, within the bounds, and both return false past the prefix's
// keys. The iterator copies prefix; it allocates nothing once its copy
// has room for prefix.
func (it *Iterator) SeekPrefixLT(prefix, key []byte) (ok bool) {
	r := it.r
	it.inPrefix = false
	if !it.usable() {
		return false
	}
	defer it.endGuard(&ok, protect())
	if bytes.Compare(key, prefix) <= 0 || r.splitter != nil && !r.prefixMayBeIn(prefix) {
		it.loaded = false // every key with the prefix is >= prefix, or none is in the table
		return false
	}
	if !bytes.HasPrefix(key, prefix) {
		// key > prefix without starting with it is above every key with
		// the prefix; seek from their end, so that a step back lands on
		// the prefix's last key and not on a key between them and key.
		if end := it.prefixEnd(prefix); end != nil {
			key = end
		}
	}
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	// In prefix iteration mode from the start, so that backward leaves
	// unread the blocks whose separators lie below the prefix.
	it.inPrefix = true
	it.prefix = append(it.prefix[:0], prefix...)
	ok = it.seekLT(key)
	// Keys sort by prefix, but a key shorter than format.Suffix's n is its
	// own prefix, so the last key < key may have a larger prefix than
	// prefix (SeekPrefixGE's case, mirrored). Step back over them.
	for ok && r.splitter != nil {
		k := it.s.data.Key()
		if bytes.Compare(k[:r.split(k)], prefix) <= 0 {
			break
		}
		it.s.data.Prev()
		ok = it.backward()
	}
	ok = it.checkLower(ok) // the lower bound, and the prefix
	it.inPrefix = ok
	return ok
}

// prefixMayBeIn probes the filter for prefix, in a table whose splitter
// the reader knows, under the caller's fault guard: false means no key
// has the prefix.
func (r *Reader) prefixMayBeIn(prefix []byte) bool {
	h := codec.KeyHash(prefix)
	if f := r.held; f != nil && f.ready.Load() {
		return f.mayContain(prefix, h)
	}
	return r.filter.mayContain(prefix, h)
}

// prefixEnd returns the least key above every key that starts with
// prefix, in a buffer the iterator reuses: prefix without its trailing
// 0xff bytes, its last byte incremented. It returns nil when prefix is
// empty or all 0xff, for which no key is above the prefix's keys without
// starting with it (SeekPrefixLT never asks then).
func (it *Iterator) prefixEnd(prefix []byte) []byte {
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xff {
		n--
	}
	if n == 0 {
		return nil
	}
	it.end = append(it.end[:0], prefix[:n]...)
	it.end[n-1]++
	return it.end
}

// seekGE moves to the first entry >= key, ignoring the lower bound.
func (it *Iterator) seekGE(key []byte) bool {
	it.lazyIndex = 0
	if x := fencesOf(it.r); x != nil && it.usable() {
		if ok, handled := it.fencedSeekGE(x, key); handled {
			return ok
		}
	}
	if !it.usable() || !it.s.index.SeekGE(key) || !it.loadBlock(false) {
		it.stop()
		return false
	}
	it.s.data.SeekGE(key)
	return it.forward()
}

// seekLT moves to the last entry < key, ignoring the upper bound.
func (it *Iterator) seekLT(key []byte) bool {
	it.lazyIndex = 0
	if !it.usable() {
		it.loaded = false
		return false
	}
	// The block whose separator is the first >= key holds the first key
	// >= key, if any; the entry before that is the answer, in this block
	// or an earlier one. Past every separator, the answer is the last key.
	if !it.s.index.SeekGE(key) {
		if err := it.s.index.Err(); err != nil {
			it.err = err
			it.loaded = false
			return false
		}
		if !it.s.index.Last() || !it.loadBlock(false) {
			it.stop()
			return false
		}
		it.s.data.Last()
		return it.backward()
	}
	if !it.loadBlock(false) {
		return false
	}
	if it.s.data.SeekGE(key) {
		it.s.data.Prev()
	} else if it.s.data.Err() == nil {
		it.s.data.Last() // every key of the block is < key
	}
	return it.backward()
}

// loadHashedBlock loads data block i, at the handle the hash index x
// gives, into s.data, leaving s.index to be positioned when a move leaves
// the block.
//
// off is the entry's offset in the block. A raw, checked block of a
// mapped file, or a cached block, is set up from the end of its entries
// recorded when it was first checked or cached, without reading its
// restart array; the cached block's entry is prefetched. cached says the
// caller found the block in the cache (source.window): it is looked for
// there first, rather than after a raw block's check word, a line of its
// own that a compressed table's seek need not wait for.
func (it *Iterator) loadHashedBlock(x *codec.HashIndex, i int, off uint64, cached bool) bool {
	it.loaded = false
	h := x.BlockHandle(i)
	var contents []byte
	end := -1
	var err error
	if m, ok := it.r.src.(*mmapSource); ok && cached && !m.noTable {
		var hit bool
		if contents, end, hit = m.cachedEntries(&it.s, i, off); !hit {
			contents, end = nil, -1
		}
	}
	if contents == nil {
		contents, end, err = it.r.src.blockForEntry(&it.s, i, h, off)
	}
	if err == nil {
		if end >= 0 {
			err = it.s.data.InitEntries(format.SectionDataBlock, int64(h.Offset), contents, end)
		} else {
			err = it.s.data.Init(format.SectionDataBlock, int64(h.Offset), contents)
		}
	}
	if err != nil {
		it.err = err
		return false
	}
	it.loaded = true
	it.mapped = it.r.src.inPlace(contents)
	it.lazyIndex = i + 1
	return true
}

// releaseHashIndex releases the hash index pinned by seekPrefixHashed.
func (it *Iterator) releaseHashIndex() {
	it.s.hidxPin.Release()
	it.s.hidxPin = blockcache.Handle{}
	it.s.hidx = codec.HashIndex{}
}
