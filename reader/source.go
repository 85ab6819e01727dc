package reader

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/prefetch"
)

// source is the layer that knows where a table's bytes come from: given a
// block handle, it returns the block's checked bytes and the pin that
// keeps them alive. New and Open choose one implementation per reader:
// mmapSource (source_mmap.go) reads a memory-mapped file in place and
// checks each block's checksum once; readAtSource (source_readat.go)
// reads through an io.ReaderAt, with the kept tail, read-ahead windows,
// partition windows and the shared cache. The index and filter layers
// above it never ask which one they have.
type source interface {
	// section returns the contents of a metadata section (index block,
	// top-level index, filter section, hash index), loaded and checked
	// on first use, and the pin that keeps them in the cache (release
	// it when done; a section the source keeps, sec.kept, has none).
	// Handles are returned, not written through pointers, so that
	// callers' pins stay on their stacks.
	section(sec *section) ([]byte, blockcache.Handle, error)

	// dataBlock returns the decoded contents of data block i at handle
	// h, checked, pinned by s until s moves to another block or is put
	// back.
	dataBlock(s *scratch, i int, h format.BlockHandle) ([]byte, error)

	// entryAt decodes the entry a hash index slot names (slot offset off
	// of data block i) when that needs no read, decompression or
	// checksum: the fast path of a hashed Get. ok is false, with no
	// error, when the block is not at hand; the caller then takes
	// blockForEntry.
	// x must not be on the caller's stack: the call is dynamic, so x
	// escapes.
	entryAt(x *codec.HashIndex, i int, off uint64) (key, value []byte, pin blockcache.Handle, ok bool, err error)

	// entries returns the entries of data block i (its decoded contents
	// up to the restart array) at handle h when they are at hand with no
	// read, decompression or checksum (a checked raw block of the
	// mapping, a cached block), pinned by pin, having asked for the
	// cache lines of the entry at offset off and of the block's first
	// entry: the fast path of a version 4 Get. ok is false when the block
	// is not at hand; the caller then takes blockForEntry.
	entries(i int, h format.BlockHandle, off uint64) (entries []byte, pin blockcache.Handle, ok bool)

	// blockForEntry returns data block i's contents, pinned by s, and,
	// when it is at hand (a checked raw block of the mapping, a cached
	// block), the end of its entries (its restart array's offset),
	// prefetching the entry at offset off of the contents; else -1.
	blockForEntry(s *scratch, i int, h format.BlockHandle, off uint64) (contents []byte, end int, err error)

	// partition returns the checked bytes of partition p of a Version3
	// table (filter, trailer, index partition, trailer), with the pin
	// that keeps them cached. ahead, for an iterator scanning across
	// partitions, is its read-ahead buffer; nil for a lookup.
	partition(ps *partitions, p int, ahead *[]byte) ([]byte, blockcache.Handle, error)

	// window returns memory that data block i, stored from file offset
	// off, is about to be read from, for prefetching only: its decoded
	// bytes where the cache holds it (blockcache.Table.Window), else its
	// stored bytes in a file mapping; nil when neither is at hand.
	window(i int, off uint64) []byte

	// forget makes the next use of data block i (or, with part, of
	// partition i) check its checksum again: Verify checks everything.
	forget(i int, part bool)

	// beginScan and endScan bracket a full scan (a memory-mapped file is
	// then read ahead by the kernel).
	beginScan()
	endScan()

	// inPlace reports whether b lies in a file mapping: reading it can
	// fault if the file shrinks.
	inPlace(b []byte) bool

	// faultError turns a recovered memory fault inside the mapping into
	// an error, and re-panics for any other value (fault.go).
	faultError(v any) error

	// blockTable is the cache table of decoded data blocks (slot i is
	// block i), nil until first use or when the source needs none.
	blockTable() *blockcache.Table

	// drop releases what the source holds in the cache: its blocks leave
	// the cache and it no longer keeps the cache open. free releases the
	// file itself (unmap, close), once no call or iterator uses it.
	drop()
	free()
}

// section is one metadata section of a table: the index block (the
// top-level index in a Version3 table), the filter section or the hash
// index. It is loaded and checked once; a source that keeps it in memory
// (the mapping, or the Go heap when the cache cannot take it) sets kept,
// and a reader without a mapping otherwise reads it from the cache,
// again from the file after an eviction.
type section struct {
	name string             // codec.Section*, for messages
	h    format.BlockHandle // its handle (length without the trailer)
	slot int                // its slot in a readAtSource's section table

	// check checks the contents' structure once the checksum passed;
	// first is set on the section's first load, when check may record
	// what it found (later loads, after an eviction, must agree).
	check func(contents []byte, first bool) error

	state lazySection
	kept  []byte // the contents, when kept; set before state.done
}

// contents returns sec's contents from src, loading them if need be;
// release *pin when done with them.
func (sec *section) contents(src source, pin *blockcache.Handle) ([]byte, error) {
	if sec.state.done.Load() && sec.kept != nil {
		return sec.kept, nil
	}
	b, p, err := src.section(sec)
	*pin = p
	return b, err
}

// load loads sec once, without returning its contents.
func (sec *section) load(src source) error {
	if sec.state.done.Load() {
		return sec.state.err
	}
	_, pin, err := src.section(sec)
	pin.Release()
	return err
}

// lazySection records the one-time load and checksum of a section.
type lazySection struct {
	done atomic.Bool
	mu   sync.Mutex
	err  error
}

// load runs fn until it succeeds or reports corruption; every caller
// gets that result. Other errors (failed reads) may be transient and are
// not remembered: the next call tries again.
func (l *lazySection) load(fn func() error) error {
	if l.done.Load() {
		return l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done.Load() {
		err := fn()
		if err != nil && !errors.Is(err, format.ErrCorrupt) {
			return err
		}
		l.err = err
		l.done.Store(true)
	}
	return l.err
}

// rawContents checks the block at h, whose bytes and trailer are raw,
// and returns its contents: metadata sections and partitions are never
// compressed.
func rawContents(section string, h format.BlockHandle, raw []byte) ([]byte, error) {
	stored, typ, err := codec.CheckBlock(section, int64(h.Offset), raw)
	if err != nil {
		return nil, err
	}
	if typ != format.BlockTypeRaw {
		return nil, format.Corruptf(section, int64(h.End())-format.BlockTrailerLen, "must be stored raw, has compression type %d", typ)
	}
	return stored, nil
}

// blockCache holds a source's decoded data blocks in the shared cache:
// compressed blocks of either source, and every block read through
// ReadAt. It is set up on first use, so that readers that are opened but
// never read hold no per-block state.
type blockCache struct {
	cache    *blockcache.Cache
	owner    *blockcache.Table // the source's section table: blocks is its sibling, so the cache counts the reader once
	n        int               // data blocks
	maxBlock int               // bound on a decoded block's size (Properties.MaxBlockSize)
	dict     *codec.ZstdDict   // the table's zstd dictionary, nil without one
	dataEnd  uint64            // end of the data blocks: the hash index's offset
	indexOff int64             // the index block's offset, for messages
	once     sync.Once
	blocks   *blockcache.Table // slot i is data block i; nil until first use, or with noTable
	fills    flights           // data blocks being read and decoded into blocks
	noTable  bool              // no table is wanted: a mapped, uncompressed table reads every block in place
	admit    bool              // admit blocks by blockcache.ReserveAdmitted: a miss costs a decompression, not a read
	onDecode func(i int)       // tests (export_test.go): called as each decode of a data block begins
}

// table returns the cache table of data blocks, creating it on first use.
func (c *blockCache) table() *blockcache.Table {
	c.once.Do(func() {
		if !c.noTable {
			c.blocks, _ = c.owner.NewSibling(c.n) // cannot fail: the source's section table keeps the cache open
		}
	})
	return c.blocks
}

// close closes the table, once; no table is created after it.
func (c *blockCache) close() {
	c.once.Do(func() {})
	if c.blocks != nil {
		c.blocks.Close()
	}
}

// scanAheadBytes is how much of the next data block a forward scan
// prefetches while it reads the current one: a decoded block of the
// default 4 KiB block size and its restart array. Past it, the CPU's own
// prefetcher follows the scan.
const scanAheadBytes = 4608

// window is source.window for the cache alone.
func (c *blockCache) window(i int, _ uint64) []byte {
	if c.noTable {
		return nil
	}
	t := c.table()
	if t == nil || i >= t.Len() {
		return nil
	}
	return t.Window(i, scanAheadBytes)
}

// checkHandle checks data block i's handle h against the data section.
func (c *blockCache) checkHandle(i int, h format.BlockHandle) error {
	if h.Offset > c.dataEnd || h.Length > c.dataEnd-h.Offset || c.dataEnd-h.Offset-h.Length < format.BlockTrailerLen {
		return format.Corruptf(format.SectionIndex, c.indexOff, "index entry %d: data block handle (offset %d, length %d) lies outside the data section [0, %d)", i, h.Offset, h.Length, c.dataEnd)
	}
	return nil
}

// cached returns data block i from the cache, pinned by s.
func (c *blockCache) cached(s *scratch, i int, h format.BlockHandle) ([]byte, bool) {
	t := c.table()
	if t == nil || i >= t.Len() {
		return nil, false
	}
	pin, ok := t.Get(i)
	if !ok {
		return nil, false
	}
	// A cached block was checked against this handle's bytes when it
	// was read; a hash index naming another length for block i is
	// caught by that check on the general path.
	s.setPin(pin)
	if s.ra != nil && int64(h.Offset) == s.ra.next {
		// A cached block continues an iterator's sequential run: the
		// read after it is still sequential.
		s.ra.next = int64(h.Offset+h.Length) + format.BlockTrailerLen
	}
	return pin.Bytes(), true
}

// decode decodes the checked stored block of type typ (data block i at
// h) into the cache, pinned by s, or, when the cache cannot take it,
// into s's buffer.
func (c *blockCache) decode(s *scratch, i int, h format.BlockHandle, stored []byte, typ byte) ([]byte, error) {
	if c.onDecode != nil {
		c.onDecode(i)
	}
	if t := c.table(); t != nil && i < t.Len() {
		n := decodedLen(stored, typ, c.maxBlock)
		var pin blockcache.Handle
		var ok bool
		if c.admit {
			pin, ok = t.ReserveAdmitted(i, n)
		} else {
			pin, ok = t.Reserve(i, n)
		}
		if ok {
			out, err := decodeInto(pin.Bytes(), stored, typ, int64(h.Offset), c.maxBlock, c.dict)
			if err != nil {
				pin.Release()
				return nil, err
			}
			aux := uint32(math.MaxUint32) // malformed restarts: lookups take the slow path, which reports them
			if end, err := codec.EntriesEnd(out, int64(h.Offset)); err == nil {
				aux = uint32(end)
			}
			t.Publish(i, pin, aux)
			s.setPin(pin) // releases the kept tail, if stored came from it
			return out, nil
		}
	}
	if typ == format.BlockTypeRaw {
		return stored, nil
	}
	out, err := codec.DecodeBlockDict(format.SectionDataBlock, int64(h.Offset), stored, typ, c.maxBlock, s.decoded, c.dict)
	if err != nil {
		return nil, err
	}
	s.decoded = out[:0]
	return out, nil
}

// entryAt is source.entryAt for a block in the cache, whose hash index
// slots hold offsets into the concatenated decoded blocks: the lookup
// goes from the slot to the cached block to the entry, which stays
// pinned by the returned Handle.
func (c *blockCache) entryAt(x *codec.HashIndex, i int, off uint64) (key, value []byte, pin blockcache.Handle, ok bool, err error) {
	t := c.table()
	if !x.DecodedOffsets() || t == nil || i >= t.Len() {
		return nil, nil, pin, false, nil
	}
	base := x.DecodedStart(i)
	pin, ok = t.GetAt(i, int(off-base)) // off < base gives a hint past the block, ignored
	if !ok {
		return nil, nil, pin, false, nil
	}
	b := pin.Bytes()
	end := uint64(pin.Aux())
	if off < base || off-base >= end || end > uint64(len(b)) {
		if end > uint64(len(b)) { // a malformed block: let the general path report it
			pin.Release()
			return nil, nil, blockcache.Handle{}, false, nil
		}
		return nil, nil, pin, true, format.Corruptf(format.SectionHashIndex, int64(c.dataEnd), "slot names decoded offset %d, outside the entries of data block %d [%d, %d)", off, i, base, base+end)
	}
	off -= base
	prefetch.Bytes(b[off:], entryPrefetchBytes)
	key, value, err = codec.EntryIn(b[:end:end], int64(x.BlockHandle(i).Offset), uint32(off))
	return key, value, pin, true, err
}

// entries is source.entries for a block in the cache.
func (c *blockCache) entries(i int, _ format.BlockHandle, off uint64) ([]byte, blockcache.Handle, bool) {
	pin, end, ok := c.pinEntries(i, off, true)
	if !ok {
		return nil, blockcache.Handle{}, false
	}
	return pin.Bytes()[:end:end], pin, true
}

// cachedEntries returns data block i pinned by s, with the end of its
// entries, if it is in the cache with a known end, prefetching the entry
// at off.
func (c *blockCache) cachedEntries(s *scratch, i int, off uint64) ([]byte, int, bool) {
	pin, end, ok := c.pinEntries(i, off, false)
	if !ok {
		return nil, 0, false
	}
	s.setPin(pin)
	return pin.Bytes(), end, true
}

// pinEntries pins data block i if it is in the cache with a known end of
// its entries (a block with malformed restarts is left to the general
// path, which reports them), having asked for the cache lines of the
// entry at off and, with start, of the block's first entry.
func (c *blockCache) pinEntries(i int, off uint64, start bool) (pin blockcache.Handle, end int, ok bool) {
	t := c.table()
	if t == nil || i >= t.Len() || off > 1<<31 {
		return pin, 0, false
	}
	if start {
		pin, ok = t.GetAtStart(i, int(off))
	} else {
		pin, ok = t.GetAt(i, int(off))
	}
	if !ok {
		return pin, 0, false
	}
	if e := pin.Aux(); e == math.MaxUint32 || int(e) > len(pin.Bytes()) {
		pin.Release()
		return blockcache.Handle{}, 0, false
	}
	return pin, int(pin.Aux()), true
}

// entryPrefetchBytes is how much of an entry a lookup prefetches from its
// first byte: three cache lines.
const entryPrefetchBytes = 192

// decodedLen returns the decoded size of a checked stored block, or 0 if
// its header is bad or claims more than maxLen bytes (decoding then
// reports the error).
func decodedLen(stored []byte, typ byte, maxLen int) int {
	n, err := codec.DecodedLen(stored, typ)
	if err != nil || n < 0 || n > maxLen {
		return 0
	}
	return n
}

// decodeInto decodes a checked stored block into dst, which must be
// exactly its decoded size, and returns dst.
func decodeInto(dst, stored []byte, typ byte, off int64, maxLen int, dict *codec.ZstdDict) ([]byte, error) {
	if typ == format.BlockTypeRaw {
		copy(dst, stored)
		return dst, nil
	}
	out, err := codec.DecodeBlockDict(format.SectionDataBlock, off, stored, typ, maxLen, dst[:0], dict)
	if err != nil {
		return nil, err
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return nil, format.Corruptf(format.SectionDataBlock, off, "block decodes to %d bytes, its header says %d", len(out), len(dst))
	}
	return dst, nil
}

// maxSnappyDecoded bounds the decoded size of n stored bytes.
func maxSnappyDecoded(n uint64) uint64 { return 22*n + 16 }

// charge charges the cache, through t, for n bytes a reader keeps on the
// Go heap, when they are more than the few KiB it keeps uncounted
// (blockcache.MinCharge); Close gives them back with t. A charge the
// cache cannot take is left uncounted: the memory is needed all the same.
func charge(t *blockcache.Table, n int) {
	if t != nil && n >= blockcache.MinCharge {
		t.Charge(n)
	}
}
