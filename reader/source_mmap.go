package reader

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/prefetch"
)

// mmapSource reads a memory-mapped file in place. Each data block's and
// partition's checksum is checked on its first use, and a per-block word
// then records it (with whether the block is stored raw and where its
// entries end); sections are slices of the mapping. Compressed data
// blocks are decoded into the shared cache. Reading the mapping can fault
// if the file shrinks: the reader's entry points guard against that
// (fault.go).
type mmapSource struct {
	mapped   []byte
	sections *blockcache.Table // no slots: registers the reader with the cache from Open to Close
	blockCache

	checkOnce sync.Once       // sets up verified
	verified  []atomic.Uint32 // per data block: see blockChecked
	partsOnce sync.Once
	partsOK   []atomic.Bool // per partition: checksums checked
	scans     atomic.Int32  // full scans in progress; the mapping is advised sequential while > 0
}

// Per-block words of mmapSource.verified: 0 until the block's checksum
// has passed; then blockChecked, with blockRaw if the block is stored
// raw, and in the low 30 bits the end of a raw block's entries (the
// restart array's offset), or entriesUnknown. Knowing the end spares a
// hash-index lookup a read of the restart count at the block's far end.
const (
	blockChecked   = 1 << 31
	blockRaw       = 1 << 30
	entriesUnknown = 1<<30 - 1
)

// words returns the per-block words, set up on first use.
func (m *mmapSource) words() []atomic.Uint32 {
	m.checkOnce.Do(func() {
		m.verified = make([]atomic.Uint32, m.n)
		charge(m.sections, 4*m.n)
	})
	return m.verified
}

func (m *mmapSource) section(sec *section) ([]byte, blockcache.Handle, error) {
	err := sec.state.load(func() error {
		off, n := sec.h.Offset, sec.h.Length+format.BlockTrailerLen
		if sec.h.Length > uint64(len(m.mapped)) || off > uint64(len(m.mapped))-n {
			return format.Corruptf(sec.name, int64(off), "%d bytes at offset %d lie outside the %d-byte file", n, off, len(m.mapped))
		}
		contents, err := rawContents(sec.name, sec.h, m.mapped[off:off+n:off+n])
		if err == nil {
			err = sec.check(contents, true)
		}
		if err == nil {
			sec.kept = contents
		}
		return err
	})
	return sec.kept, blockcache.Handle{}, err
}

func (m *mmapSource) dataBlock(s *scratch, i int, h format.BlockHandle) ([]byte, error) {
	s.setPin(blockcache.Handle{})
	if err := m.checkHandle(i, h); err != nil {
		return nil, err
	}
	if !m.noTable {
		if b, ok := m.cached(s, i, h); ok {
			return b, nil
		}
	}
	return m.fill(s, i, h)
}

// fill decodes data block i, missed in the cache, into the cache; a
// concurrent miss of the same block waits for this decode rather than
// making its own.
func (m *mmapSource) fill(s *scratch, i int, h format.BlockHandle) ([]byte, error) {
	stored, typ, err := m.checked(i, h)
	if err != nil {
		return nil, err
	}
	if typ == format.BlockTypeRaw {
		return stored, nil // served from the mapping, never cached
	}
	if m.noTable {
		return m.decode(s, i, h, stored, typ)
	}
	f, lead := m.fills.join(i)
	if !lead {
		m.fills.wait(f)
		if b, ok := m.cached(s, i, h); ok {
			return b, nil
		}
		return m.decode(s, i, h, stored, typ)
	}
	defer m.fills.land(i, f)
	return m.decode(s, i, h, stored, typ)
}

// checked returns the stored bytes and type of data block i at h from
// the mapping, its checksum checked on first use.
func (m *mmapSource) checked(i int, h format.BlockHandle) ([]byte, byte, error) {
	buf := m.mapped[h.Offset:h.End()]
	// The trailer is read first, the block's start next (its decoded
	// length) and the block's checked flag before either: three misses
	// in a table larger than the CPU's caches, asked for together.
	prefetch.Line(unsafe.Pointer(unsafe.SliceData(buf)))
	prefetch.Line(unsafe.Pointer(&buf[h.Length]))
	words := m.words()
	if i >= len(words) {
		return codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), buf)
	}
	word := &words[i]
	if word.Load()&blockChecked == 0 {
		stored, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), buf)
		if err != nil {
			return nil, 0, err
		}
		st := uint32(blockChecked | entriesUnknown)
		if typ == format.BlockTypeRaw {
			st |= blockRaw
			if end, err := codec.EntriesEnd(stored, int64(h.Offset)); err == nil && end < entriesUnknown {
				st = blockChecked | blockRaw | uint32(end)
			}
		}
		word.Store(st)
	}
	return buf[:h.Length], buf[h.Length], nil
}

// rawEntries returns the entries of data block i (its contents up to the
// restart array) when they are at hand without a decompression, a
// checksum or a look at the block's far end: raw and already checked.
func (m *mmapSource) rawEntries(i int, h format.BlockHandle) ([]byte, bool) {
	if words := m.words(); i < len(words) {
		st := words[i].Load()
		if st&(blockChecked|blockRaw) == blockChecked|blockRaw && st&entriesUnknown != entriesUnknown {
			if end := uint64(st & entriesUnknown); end <= h.Length {
				return m.mapped[h.Offset : h.Offset+end : h.Offset+end], true
			}
		}
	}
	return nil, false
}

// entryAt serves a slot that holds a file offset straight from the
// mapping. The entry's address depends only on the slot, so its cache
// miss overlaps with the loads of block i's state and handle, which only
// bound it.
func (m *mmapSource) entryAt(x *codec.HashIndex, i int, off uint64) (key, value []byte, pin blockcache.Handle, ok bool, err error) {
	if !x.FileOffsets() {
		return m.blockCache.entryAt(x, i, off)
	}
	if off >= m.dataEnd {
		return nil, nil, pin, true, format.Corruptf(format.SectionHashIndex, int64(m.dataEnd), "slot names file offset %d, past the data blocks", off)
	}
	// An entry of a 16-byte key and a 100-byte value spans two or three
	// cache lines; ask for all of them now rather than for the value's
	// lines only once the header has arrived.
	prefetch.Bytes(m.mapped[off:], entryPrefetchBytes)
	h := x.BlockHandle(i)
	if words := m.words(); i < len(words) {
		st := words[i].Load()
		end := uint64(st & entriesUnknown)
		if st&(blockChecked|blockRaw) == blockChecked|blockRaw && end != entriesUnknown && end <= h.Length {
			if off < h.Offset || off >= h.Offset+end {
				return nil, nil, pin, true, format.Corruptf(format.SectionHashIndex, int64(m.dataEnd), "slot names file offset %d, outside the entries of data block %d [%d, %d)", off, i, h.Offset, h.Offset+end)
			}
			key, value, err = codec.EntryIn(m.mapped[off:h.Offset+end], int64(h.Offset), 0)
			return key, value, pin, true, err
		}
	}
	return nil, nil, pin, false, nil
}

// entries serves a raw block from the mapping once checked, else a
// cached one. In an uncompressed table the entry's and the first entry's
// addresses depend only on the handle, so their cache misses overlap with
// the load of block i's state word; a compressed table's blocks are
// looked for in the cache first, where nearly all of them are.
func (m *mmapSource) entries(i int, h format.BlockHandle, off uint64) ([]byte, blockcache.Handle, bool) {
	if m.noTable {
		if h.Offset+off < m.dataEnd {
			prefetch.Bytes(m.mapped[h.Offset+off:], entryPrefetchBytes)
			prefetch.Bytes(m.mapped[h.Offset:], 64)
		}
		ents, ok := m.rawEntries(i, h)
		return ents, blockcache.Handle{}, ok
	}
	if ents, pin, ok := m.blockCache.entries(i, h, off); ok {
		return ents, pin, true
	}
	ents, ok := m.rawEntries(i, h) // a block compression did not shrink enough
	return ents, blockcache.Handle{}, ok
}

func (m *mmapSource) blockForEntry(s *scratch, i int, h format.BlockHandle, off uint64) ([]byte, int, error) {
	if ents, ok := m.rawEntries(i, h); ok {
		s.setPin(blockcache.Handle{})
		if off < uint64(len(ents)) {
			prefetch.Bytes(ents[off:], entryPrefetchBytes)
		}
		return m.mapped[h.Offset : h.Offset+h.Length : h.Offset+h.Length], len(ents), nil
	}
	if !m.noTable {
		s.setPin(blockcache.Handle{})
		if b, end, ok := m.cachedEntries(s, i, off); ok {
			return b, end, nil
		}
	}
	contents, err := m.dataBlock(s, i, h)
	return contents, -1, err
}

func (m *mmapSource) partition(ps *partitions, p int, ahead *[]byte) ([]byte, blockcache.Handle, error) {
	ph := ps.parts[p]
	b := m.mapped[ph.Offset:ph.End():ph.End()]
	m.partsOnce.Do(func() {
		m.partsOK = make([]atomic.Bool, len(ps.parts))
		charge(m.sections, len(ps.parts))
	})
	if p >= len(m.partsOK) || !m.partsOK[p].Load() {
		if err := ps.check(p, b); err != nil {
			return nil, blockcache.Handle{}, err
		}
		if p < len(m.partsOK) {
			m.partsOK[p].Store(true)
		}
	}
	return b, blockcache.Handle{}, nil
}

func (m *mmapSource) forget(i int, part bool) {
	switch {
	case part && i < len(m.partsOK):
		m.partsOK[i].Store(false)
	case !part:
		if words := m.words(); i < len(words) {
			words[i].Store(0)
		}
	}
}

func (m *mmapSource) beginScan() {
	if m.scans.Add(1) == 1 {
		adviseAccess(m.mapped, true)
	}
}

func (m *mmapSource) endScan() {
	if m.scans.Add(-1) == 0 {
		adviseAccess(m.mapped, false)
	}
}

// window is source.window: a block not in the cache is read from the
// mapping, where a prefetch of a page not yet read in does nothing.
func (m *mmapSource) window(i int, off uint64) []byte {
	if b := m.blockCache.window(i, off); b != nil {
		return b
	}
	if off >= m.dataEnd || m.dataEnd > uint64(len(m.mapped)) {
		return nil
	}
	return m.mapped[off:min(off+scanAheadBytes, m.dataEnd)]
}

func (m *mmapSource) inPlace(b []byte) bool {
	if len(m.mapped) == 0 || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.mapped)))
	return p-base < uintptr(len(m.mapped))
}

func (m *mmapSource) faultError(v any) error { return mappingFault(m.mapped, v) }

func (m *mmapSource) blockTable() *blockcache.Table { return m.table() }

func (m *mmapSource) drop() {
	m.close()
	if m.sections != nil {
		m.sections.Close()
	}
}

func (m *mmapSource) free() { munmap(m.mapped) }
