package codec

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/prefetch"
)

// BlockIter walks the entries of one decoded block (data block or index
// block). Every read is bounds-checked, so a block whose checksum passes but
// whose contents are garbage yields an error, never a panic or a hang.
//
// Key returns a buffer owned by the iterator; Value aliases the block
// contents. Both stay valid until the next positioning call.
type BlockIter struct {
	data        []byte
	restartsOff int // end of the entries; start of the restart array
	numRestarts int
	section     string
	fileOff     int64

	offset     int    // current entry; -1 before the first, restartsOff past the last
	nextOffset int    // entry after the current one
	restartIdx int    // restart point at or before offset; -1 after SeekOffset until needed (see restartAt)
	key        []byte // never nil after Init: see keyBuf
	val        []byte
	err        error
	back       backCache
}

// backCache holds the entries of one restart interval, decoded forwards
// by a Prev (or Last), so that the Prevs after it step back through them
// without decoding the interval again. LevelDB's block iterator rescans
// the interval on every Prev: with 32-entry intervals (format version 4)
// that made a reverse scan cost about three times a forward one. Init
// empties it and keeps its buffers.
type backCache struct {
	ok   bool // ents and keys hold the interval at restart point run
	run  int
	pos  int // the entry the iterator was left on by the cache's last use
	ents []backEntry
	keys []byte // the entries' keys, whole, one after the other
}

// backEntry is one cached entry: its offset, the next entry's offset, the
// end of its key in backCache.keys and its value's length (the value
// ends at next).
type backEntry struct{ off, next, keyEnd, vlen int }

// record appends the entry the iterator is on to the cache.
func (b *backCache) record(it *BlockIter) {
	b.keys = append(b.keys, it.key...)
	b.ents = append(b.ents, backEntry{off: it.offset, next: it.nextOffset, keyEnd: len(b.keys), vlen: len(it.val)})
}

// reset empties the cache, keeping its buffers.
func (b *backCache) reset() { *b = backCache{ents: b.ents[:0], keys: b.keys[:0]} }

// fromBack positions the iterator on cached entry i of the interval.
func (it *BlockIter) fromBack(i int) bool {
	b := &it.back
	e := b.ents[i]
	ks := 0
	if i > 0 {
		ks = b.ents[i-1].keyEnd
	}
	b.pos = i
	it.key = append(it.key[:0], b.keys[ks:e.keyEnd]...)
	it.val = it.data[e.next-e.vlen : e.next : e.next]
	it.offset, it.nextOffset, it.restartIdx = e.off, e.next, b.run
	return true
}

// Init points the iterator at block contents (entries, restart array,
// restart count). section and fileOff name the block in errors. It returns
// an error wrapping ErrCorrupt if the restart array does not fit; the
// iterator is then empty and Err reports the same error.
func (it *BlockIter) Init(section string, fileOff int64, contents []byte) error {
	*it = BlockIter{key: it.keyBuf(), section: section, fileOff: fileOff, offset: -1, back: it.back}
	it.back.reset()
	if len(contents) < 4 {
		return it.fail(0, "block of %d bytes has no restart count", len(contents))
	}
	n := binary.LittleEndian.Uint32(contents[len(contents)-4:])
	if uint64(n) > uint64(len(contents)-4)/4 {
		return it.fail(len(contents)-4, "restart count %d does not fit in a %d-byte block", n, len(contents))
	}
	it.data = contents
	it.numRestarts = int(n)
	it.restartsOff = len(contents) - 4 - 4*int(n)
	if n == 0 && it.restartsOff != 0 {
		return it.fail(0, "block has %d bytes of entries but no restart points", it.restartsOff)
	}
	if n > 0 && it.restart(0) != 0 {
		return it.fail(it.restartsOff, "first restart point is %d, not 0", it.restart(0))
	}
	return nil
}

func (it *BlockIter) fail(blockOff int, msg string, args ...any) error {
	e := format.Corruptf(it.section, it.fileOff, msg, args...)
	if ce, ok := e.(*format.CorruptError); ok && blockOff > 0 {
		ce.Msg = ce.Msg + " (block offset " + strconv.Itoa(blockOff) + ")"
	}
	it.err = e
	it.offset = it.restartsOff
	it.val = nil
	return e
}

// keyBuf returns the key buffer emptied, and never nil: the moves append
// to it, and a nil buffer would give the empty key (a table's least key)
// as nil, which reader.Iterator.Key and merge's levels mean as "not
// positioned". An empty, non-nil slice costs no allocation.
func (it *BlockIter) keyBuf() []byte {
	if it.key == nil {
		return []byte{}
	}
	return it.key[:0]
}

// Err returns the first corruption met, or nil.
func (it *BlockIter) Err() error { return it.err }

// Valid reports whether the iterator is positioned on an entry.
func (it *BlockIter) Valid() bool { return it.offset >= 0 && it.offset < it.restartsOff }

// Key returns the current key, never nil once Init has run (the empty key
// is an empty, non-nil slice). It is valid until the next move.
func (it *BlockIter) Key() []byte { return it.key }

// Value returns the current value, aliasing the block contents.
func (it *BlockIter) Value() []byte { return it.val }

func (it *BlockIter) restart(i int) int {
	return int(binary.LittleEndian.Uint32(it.data[it.restartsOff+4*i:]))
}

// header parses an entry header at off: shared, unshared and value lengths,
// checked against the entries region. It returns the key suffix start.
func (it *BlockIter) header(off int) (shared, unshared, vlen, p int, ok bool) {
	s, u, v, p, fault := parseEntryHeader(it.data[:it.restartsOff], off)
	switch fault {
	case entryOK:
		return int(s), int(u), int(v), p, true
	case entryOutside:
		it.fail(off, "entry offset %d outside entries region of %d bytes", off, it.restartsOff)
	case entryBadShared:
		it.fail(off, "bad shared-length varint")
	case entryBadKeyLen:
		it.fail(off, "bad key-length varint")
	case entryBadValueLen:
		it.fail(off, "bad value-length varint")
	case entryOverrun:
		it.fail(off, "entry of %d key and %d value bytes overruns the entries region", u, v)
	case entrySharedTooLong:
		it.fail(off, "shared prefix length %d is too large", s)
	}
	return 0, 0, 0, 0, false
}

// decodeAt decodes the entry at off, whose key shares a prefix with it.key.
func (it *BlockIter) decodeAt(off int) bool {
	// parseEntryHeader's fast path, without the two calls: three
	// one-byte varints whose key suffix and value fit.
	if end := it.restartsOff; off >= 0 && off+3 <= end {
		d := it.data[off : off+3 : off+3]
		if d[0]|d[1]|d[2] < 0x80 {
			shared, kEnd := int(d[0]), off+3+int(d[1])
			if vEnd := kEnd + int(d[2]); vEnd <= end && shared <= len(it.key) {
				it.key = append(it.key[:shared], it.data[off+3:kEnd]...)
				it.val = it.data[kEnd:vEnd:vEnd]
				it.offset, it.nextOffset = off, vEnd
				return true
			}
		}
	}
	shared, unshared, vlen, p, ok := it.header(off)
	if !ok {
		return false
	}
	if shared > len(it.key) {
		it.fail(off, "shared prefix %d longer than previous key (%d bytes)", shared, len(it.key))
		return false
	}
	kEnd := p + unshared
	it.key = append(it.key[:shared], it.data[p:kEnd]...)
	it.val = it.data[kEnd : kEnd+vlen : kEnd+vlen]
	it.offset = off
	it.nextOffset = kEnd + vlen
	return true
}

// seekRestart positions on the entry at restart point i.
func (it *BlockIter) seekRestart(i int) bool {
	it.restartIdx = i
	it.key = it.key[:0]
	return it.decodeAt(it.restart(i))
}

// resolveRestart sets restartIdx after SeekOffset left it unknown: the
// last restart point at or before the current entry.
func (it *BlockIter) resolveRestart() {
	if it.restartIdx >= 0 {
		return
	}
	lo, hi := 0, it.numRestarts
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if it.restart(mid) <= it.offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	it.restartIdx = max(lo-1, 0)
}

// advance moves from the current entry to the next; false at the end.
func (it *BlockIter) advance() bool {
	if it.restartIdx < 0 {
		// Left unknown by SeekGEFrom or SeekOffset: a forward walk needs
		// no restart point (the entry at one shares no bytes, whatever
		// the key before it), and finding it would read the restart
		// array, a line of its own at the block's end.
		if it.nextOffset >= it.restartsOff {
			it.offset = it.restartsOff
			it.val = nil
			return false
		}
		return it.decodeAt(it.nextOffset)
	}
	it.resolveRestart()
	if it.nextOffset >= it.restartsOff {
		if r := it.restartIdx + 1; r < it.numRestarts { // never reached: Last, Prev and SeekGE would fail on it
			it.fail(it.restartsOff, "restart point %d at %d lies past the last entry", r, it.restart(r))
			return false
		}
		it.offset = it.restartsOff
		it.val = nil
		return false
	}
	if r := it.restartIdx + 1; r < it.numRestarts && it.restart(r) <= it.nextOffset {
		if it.restart(r) != it.nextOffset {
			it.fail(it.nextOffset, "restart point %d at %d is inside an entry", r, it.restart(r))
			return false
		}
		return it.seekRestart(r)
	}
	return it.decodeAt(it.nextOffset)
}

// First positions on the first entry; false if the block is empty or corrupt.
func (it *BlockIter) First() bool {
	if it.err != nil || it.numRestarts == 0 {
		it.offset = it.restartsOff
		return false
	}
	return it.seekRestart(0)
}

// Last positions on the last entry; false if the block is empty or corrupt.
func (it *BlockIter) Last() bool {
	if it.err != nil || it.numRestarts == 0 {
		it.offset = it.restartsOff
		return false
	}
	r := it.numRestarts - 1
	if !it.seekRestart(r) {
		return false
	}
	b := &it.back
	b.reset()
	b.record(it)
	for it.nextOffset < it.restartsOff {
		if !it.decodeAt(it.nextOffset) {
			return false
		}
		b.record(it)
	}
	b.ok, b.run, b.pos = true, r, len(b.ents)-1
	return true
}

// Next moves to the following entry; false past the last entry or on error.
func (it *BlockIter) Next() bool {
	if !it.Valid() {
		return false
	}
	return it.advance()
}

// Prev moves to the preceding entry; false before the first entry or on
// error. Entering a restart interval from above, it decodes the interval
// from its restart point, as LevelDB's block iterator does, and keeps
// its entries (backCache): the Prevs within the interval that follow
// read them from there.
func (it *BlockIter) Prev() bool {
	if !it.Valid() {
		return false
	}
	b := &it.back
	if b.ok && b.pos > 0 && b.pos < len(b.ents) && b.ents[b.pos].off == it.offset {
		return it.fromBack(b.pos - 1)
	}
	it.resolveRestart()
	target := it.offset
	r := it.restartIdx
	for r >= 0 && it.restart(r) >= target {
		r--
	}
	if r < 0 {
		it.offset = -1
		it.val = nil
		return false
	}
	if !it.seekRestart(r) {
		return false
	}
	b.reset()
	b.record(it)
	for it.nextOffset < target {
		if !it.decodeAt(it.nextOffset) {
			return false
		}
		b.record(it)
	}
	if it.nextOffset != target {
		it.fail(target, "entries do not chain from restart point %d", r)
		return false
	}
	b.ok, b.run, b.pos = true, r, len(b.ents)-1
	return true
}

// restartKey returns the full key stored at restart point i without copying.
func (it *BlockIter) restartKey(i int) ([]byte, bool) {
	off := it.restart(i)
	shared, unshared, _, p, ok := it.header(off)
	if !ok {
		return nil, false
	}
	if shared != 0 {
		it.fail(off, "entry at restart point %d shares %d bytes with its predecessor", i, shared)
		return nil, false
	}
	return it.data[p : p+unshared], true
}

// SeekGE positions on the first entry whose key is >= target; false if
// there is none or on error. It binary-searches the restart points, then
// scans at most one restart interval.
func (it *BlockIter) SeekGE(target []byte) bool {
	if it.err != nil || it.numRestarts == 0 {
		it.offset = it.restartsOff
		return false
	}
	// Find the first restart whose key is > target and start at the one
	// before it: the last restart whose key is <= target, so a target that
	// is itself a restart key is found without scanning the interval
	// before it.
	lo, hi := 0, it.numRestarts
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, ok := it.restartKey(mid)
		if !ok {
			return false
		}
		if bytes.Compare(k, target) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	start := lo - 1
	if start < 0 {
		start = 0
	}
	if !it.seekRestart(start) {
		return false
	}
	for bytes.Compare(it.key, target) < 0 {
		if !it.advance() {
			return false
		}
	}
	return true
}

// RestartIndex returns the index of the restart point the iterator is on,
// and false if the current entry is not itself a restart point. In an index
// block, written with a restart interval of 1, it is the entry's ordinal.
func (it *BlockIter) RestartIndex() (int, bool) {
	if !it.Valid() {
		return 0, false
	}
	it.resolveRestart()
	return it.restartIdx, it.restart(it.restartIdx) == it.offset
}

// Offset returns the byte offset of the current entry in the block
// contents; it is meaningful only while Valid.
func (it *BlockIter) Offset() int { return it.offset }

// Layout returns the length of the contents Init (or InitEntries) was
// given and the end of their entries (the restart array's offset): what
// InitEntries needs to take the same block up again.
func (it *BlockIter) Layout() (size, entriesEnd int) { return len(it.data), it.restartsOff }

// NumRestarts returns the number of restart points in the block.
func (it *BlockIter) NumRestarts() int { return it.numRestarts }

// SeekRestart positions on the entry at restart point i; false if i is out
// of range or the entry is corrupt. In an index block (restart interval 1)
// it positions on entry i.
func (it *BlockIter) SeekRestart(i int) bool {
	if it.err != nil || i < 0 || i >= it.numRestarts {
		it.offset = it.restartsOff
		it.val = nil
		return false
	}
	return it.seekRestart(i)
}

// SeekOffset positions on the entry that starts at byte offset off of the
// block contents, which must be stored whole (shared = 0), as every entry
// of a version 2 data block is; false, with a corruption error, if off
// does not start such an entry inside the entries region. Later moves
// (Next, Prev) work as from any other position, provided off is an entry
// boundary, which a hash index slot checked against the key it leads to
// is.
func (it *BlockIter) SeekOffset(off int) bool {
	if it.err != nil || it.numRestarts == 0 {
		it.offset = it.restartsOff
		it.val = nil
		return false
	}
	if off < 0 || off >= it.restartsOff {
		it.fail(off, "entry offset %d outside entries region of %d bytes", off, it.restartsOff)
		return false
	}
	// The restart point at or before off is found when a move needs it,
	// sparing a lookup that reads only this entry the restart array.
	it.restartIdx = -1
	it.key = it.key[:0]
	return it.decodeAt(off)
}

// PrefetchEntry starts loading the cache lines of the n bytes at off
// (at most 256), for an entry about to be decoded there: its value's
// lines then miss together with its header's rather than after them.
func (it *BlockIter) PrefetchEntry(off, n int) {
	if off >= 0 && off < len(it.data) {
		prefetch.Bytes(it.data[off:], n)
	}
}

// SeekOffsetPrefix is SeekOffset for an entry that may share a prefix
// with the key before it: the caller knows that key's first bytes, at
// least as many as the entry shares, to be prefix's. It reports false
// and leaves the iterator unpositioned, without an error, when the entry
// shares more than len(prefix) bytes; false with a corruption error when
// off does not start an entry inside the entries region. Moves after it
// work as after SeekOffset.
func (it *BlockIter) SeekOffsetPrefix(off int, prefix []byte) bool {
	if it.err != nil || it.numRestarts == 0 {
		it.offset = it.restartsOff
		it.val = nil
		return false
	}
	shared, _, _, _, ok := it.header(off)
	if !ok {
		return false
	}
	if shared > len(prefix) {
		it.offset, it.val = -1, nil
		return false
	}
	it.restartIdx = -1
	it.key = append(it.key[:0], prefix[:shared]...)
	return it.decodeAt(off)
}

// SeekGEFrom is SeekGE in a block written with ShareWithFirst (format
// version 4), for a caller that knows an entry boundary off whose entry
// and every entry before it have keys < target (off 0: the first entry):
// it decodes the block's first key (at offset 0, where the first restart
// point of such a block lies) and the entry at off, which shares its
// first bytes with the first key, then scans forward from there, reading
// none of the restart array, whose line a SeekGE would wait for. The scan
// is linear: the caller bounds it (the reader's sub-fences, a quarter of
// a block). An off that is not an entry boundary gives a corruption error
// or a wrong position, never a panic.
func (it *BlockIter) SeekGEFrom(off int, target []byte) bool {
	if it.err != nil || it.numRestarts == 0 || off < 0 || off >= it.restartsOff {
		if it.err == nil && it.numRestarts > 0 {
			it.fail(off, "entry offset %d outside entries region of %d bytes", off, it.restartsOff)
		}
		it.offset = it.restartsOff
		it.val = nil
		return false
	}
	it.key = it.key[:0]
	if !it.decodeAt(0) || off > 0 && !it.decodeAt(off) {
		return false
	}
	it.restartIdx = -1 // found when a move needs it, as after SeekOffset
	for bytes.Compare(it.key, target) < 0 {
		if !it.advance() {
			return false
		}
	}
	return true
}

// InitEntries is Init for contents whose entries end at entriesEnd (the
// restart array's offset), as EntriesEnd computed from the same bytes
// before: it derives the restart count from the sizes without reading the
// block's tail, and does not check the first restart point (moves still
// bounds-check every read). It returns an error wrapping ErrCorrupt if the
// sizes disagree.
func (it *BlockIter) InitEntries(section string, fileOff int64, contents []byte, entriesEnd int) error {
	*it = BlockIter{key: it.keyBuf(), section: section, fileOff: fileOff, offset: -1, back: it.back}
	it.back.reset()
	rest := len(contents) - 4 - entriesEnd
	if entriesEnd < 0 || rest < 0 || rest%4 != 0 || rest == 0 && entriesEnd != 0 {
		return it.fail(0, "entries end at %d of a %d-byte block", entriesEnd, len(contents))
	}
	it.data = contents
	it.numRestarts = rest / 4
	it.restartsOff = entriesEnd
	return nil
}

// PrefetchInterval starts loading the cache lines of restart interval i
// (from restart point i to the next, or to the entries' end), for a walk
// through it that follows: a seek's scan of the interval then takes its
// cache misses together rather than one entry after another.
func (it *BlockIter) PrefetchInterval(i int) {
	if i < 0 || i >= it.numRestarts {
		return
	}
	to := it.restartsOff
	if i+1 < it.numRestarts {
		to = it.restart(i + 1)
	}
	prefetch.Range(it.data, it.restart(i), to)
}

// PrefetchRestarts starts loading the first line of the entry at each of
// the block's first n restart points (and the restart array's line), for
// a binary search of them that follows: its probes then miss together.
func (it *BlockIter) PrefetchRestarts(n int) {
	n = min(n, it.numRestarts)
	prefetch.Range(it.data, it.restartsOff, it.restartsOff+4*n)
	for i := 0; i < n; i++ {
		prefetch.Range(it.data, it.restart(i), it.restart(i)+1)
	}
}
