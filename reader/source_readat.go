package reader

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// readAtSource reads through an io.ReaderAt (New, or Open with NoMmap):
// every byte it keeps is in the shared cache, within its capacity,
// except sections too large for a cache shard, which it keeps on the Go
// heap. Sections and partitions live in cache slots of their own, read
// again, with their checksums, if evicted; blocks are checked by their
// checksums on every read. A failed read is returned as the source's
// error and never remembered: only corruption is (lazySection).
//
// Its other parts: the kept tail (source_tail.go), iterators' read-ahead
// windows (readahead.go) and partition windows (partitions_readat.go).
type readAtSource struct {
	ra   io.ReaderAt
	file *os.File // closed by free, if Open opened it
	size int64

	// sections holds the index block, filter and hash index, the kept
	// tail and read-ahead reservations (slot*); it registers the reader
	// with the cache from Open to Close.
	sections *blockcache.Table
	blockCache

	// meta lists the sections lookups use, loaded together by loadMeta
	// in one ReadAt: the filter and index block are adjacent, so a table
	// whose tail did not hold them needs one more read, not two.
	meta   []*section
	metaMu sync.Mutex

	// copied has bit 1<<slot set for each section of meta that Open
	// copied from the tail into its cache slot unchecked (copyTail); its
	// first use checks it there (loadCopy). Set by Open, then read only.
	copied uint8

	// The part of the tail New read that holds data blocks, or a
	// Version3 table's partitions: the file's bytes [tailOff, tailEnd),
	// kept in the cache (slot slotTail). tailOff == tailEnd when nothing
	// is kept.
	tailOff, tailEnd uint64

	partsOnce  sync.Once
	partTable  *blockcache.Table // a Version3 table's partitions, slot p for partition p
	partFills  flights           // partitions being read into partTable
	partMisses atomic.Int32      // lookups' partition misses, counted up to the one that prefetches
}

// Slots of readAtSource.sections.
const (
	slotIndex = iota
	slotFilter
	slotHashIndex
	slotTail      // the tail's data blocks or partitions (source_tail.go)
	slotSpans     // a Version5 table's span block as copied from the tail, until loaded (spanLayer.keepTail)
	slotReadahead // reserved for read-ahead windows, never published
	numSections
)

// read returns n bytes at off, read into buf (grown as needed) by
// readFull. A range outside the file gives an error wrapping ErrCorrupt;
// failed reads give errors that do not.
func (s *readAtSource) read(section string, off int64, n int, buf []byte) ([]byte, error) {
	if off < 0 || n < 0 || off > s.size || int64(n) > s.size-off {
		return nil, format.Corruptf(section, off, "%d bytes at offset %d lie outside the %d-byte file", n, off, s.size)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if err := s.readFull(section, buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// readBlock returns the stored bytes and trailer of the block at h.
func (s *readAtSource) readBlock(section string, h format.BlockHandle, buf []byte) ([]byte, error) {
	if h.Length > uint64(s.size) {
		return nil, format.Corruptf(section, int64(h.Offset), "block length %d exceeds the file", h.Length)
	}
	return s.read(section, int64(h.Offset), int(h.Length)+format.BlockTrailerLen, buf)
}

// readFull fills buf from s.ra at off. A short read, with a nil error or
// io.EOF, is followed by a read of the rest, as long as each call makes
// progress. Failures never wrap format.ErrCorrupt: a read that fails may
// succeed when tried again, so callers must not remember it as damage.
// A source that ends before the size given to New gives an error wrapping
// io.ErrUnexpectedEOF.
func (s *readAtSource) readFull(section string, buf []byte, off int64) error {
	got := 0
	for got < len(buf) {
		m, err := s.ra.ReadAt(buf[got:], off+int64(got))
		if m < 0 || m > len(buf)-got {
			return fmt.Errorf("sstable: read %s at offset %d: ReaderAt returned %d for a %d-byte read", section, off+int64(got), m, len(buf)-got)
		}
		got += m
		if got == len(buf) {
			return nil
		}
		if m > 0 && (err == nil || err == io.EOF) {
			continue // a short read: ask for the rest
		}
		switch err {
		case nil:
			err = io.ErrNoProgress
		case io.EOF:
			return fmt.Errorf("sstable: read %s at offset %d: input ends %d bytes into a %d-byte read, before the size given (%d bytes): %w", section, off, got, len(buf), s.size, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("sstable: read %s at offset %d: %w", section, off+int64(got), err)
	}
	return nil
}

// section loads sec on first use (with the other sections lookups use,
// in one ReadAt: loadMeta), then serves it from the Go heap if kept
// there, else from the cache, reading it again after an eviction.
func (s *readAtSource) section(sec *section) ([]byte, blockcache.Handle, error) {
	if !sec.state.done.Load() {
		if err := s.loadMeta(); err != nil && !sec.state.done.Load() {
			return nil, blockcache.Handle{}, err
		}
		if err := sec.state.load(func() error { return s.loadSection(sec, nil) }); err != nil {
			return nil, blockcache.Handle{}, err
		}
	} else if sec.state.err != nil {
		return nil, blockcache.Handle{}, sec.state.err
	}
	if sec.kept != nil {
		return sec.kept, blockcache.Handle{}, nil
	}
	if p, ok := s.sections.Get(sec.slot); ok {
		// Cached with its trailer, as read.
		b := p.Bytes()
		return b[:len(b)-format.BlockTrailerLen], p, nil
	}
	return s.readSection(sec, nil)
}

// loadSection loads sec from pre, its bytes and trailer, or with a read
// if pre is nil, keeping it on the heap when the cache cannot take it.
// Call it inside sec.state.load.
func (s *readAtSource) loadSection(sec *section, pre []byte) error {
	contents, pin, err := s.readSection(sec, pre)
	if err != nil {
		return err
	}
	if !pin.Cached() {
		sec.kept = contents
	}
	pin.Release()
	return nil
}

// readSection reads sec (or takes pre, its bytes and trailer, already
// read), checks it and caches it in its slot; the contents are pinned by
// the returned Handle, or are memory of their own when the cache cannot
// take them.
func (s *readAtSource) readSection(sec *section, pre []byte) ([]byte, blockcache.Handle, error) {
	var buf []byte
	var pin blockcache.Handle
	if sec.h.Length <= uint64(s.size) {
		if p, ok := s.sections.Reserve(sec.slot, int(sec.h.Length)+format.BlockTrailerLen); ok {
			pin, buf = p, p.Bytes()[:0]
		}
	}
	var raw []byte
	var err error
	switch {
	case pre != nil && buf != nil:
		raw = append(buf, pre...)
	case pre != nil:
		raw = bytes.Clone(pre) // kept: not pinning the rest of pre's buffer
	default:
		raw, err = s.readBlock(sec.name, sec.h, buf)
	}
	var contents []byte
	if err == nil {
		contents, err = rawContents(sec.name, sec.h, raw)
	}
	if err == nil {
		err = sec.check(contents, !sec.state.done.Load())
	}
	if err != nil {
		pin.Release()
		return nil, blockcache.Handle{}, err
	}
	if pin.Cached() {
		s.sections.Publish(sec.slot, pin, 0)
	}
	return contents, pin, nil
}

// loadFrom loads the sections of s.meta that lie in buf, which holds the
// file's bytes from offset off.
func (s *readAtSource) loadFrom(buf []byte, off int64) {
	for _, sec := range s.meta {
		if pre := tailPart(buf, off, sec.h); pre != nil && !sec.state.done.Load() {
			sec.state.load(func() error { return s.loadSection(sec, pre) })
		}
	}
}

// copyTail copies the sections of s.meta that lie in the tail Open read
// (buf, from file offset off) into their cache slots, as read: their
// checksums and structure are checked on first use (loadCopy), as those
// of the sections read later are. So Open neither checks nor decodes what
// lookups may never use: a partitioned table's top-level index, whose
// check records every partition's handle and key (at 10M entries about
// 90 µs of Open, and 110-125 KiB of Go heap, charged to the cache). A
// section the cache cannot take is loaded now, onto the Go heap
// (loadSection).
func (s *readAtSource) copyTail(buf []byte, off int64) {
	for _, sec := range s.meta {
		pre := tailPart(buf, off, sec.h)
		if pre == nil {
			continue
		}
		if p, ok := s.sections.Reserve(sec.slot, len(pre)); ok {
			copy(p.Bytes(), pre)
			s.sections.Publish(sec.slot, p, 0)
			p.Release()
			s.copied |= 1 << sec.slot
			continue
		}
		sec.state.load(func() error { return s.loadSection(sec, pre) })
	}
}

// loadCopy loads sec from the copy copyTail made in its slot, checking
// it there; false, loading nothing, if the copy has been evicted. Until
// sec is loaded its slot holds nothing else: a section is published
// there only once checked, and then it is loaded. Call it with metaMu
// held.
func (s *readAtSource) loadCopy(sec *section) bool {
	p, ok := s.sections.Get(sec.slot)
	if !ok {
		return false
	}
	defer p.Release()
	sec.state.load(func() error {
		contents, err := rawContents(sec.name, sec.h, p.Bytes())
		if err == nil {
			err = sec.check(contents, true)
		}
		return err
	})
	return true
}

// loadMeta loads, with one ReadAt of the span they cover, the sections
// of s.meta not loaded yet, and those Open copied from the tail from
// their copies, while cached. A version 2 table's hash index is in the
// tail whenever Get uses it.
func (s *readAtSource) loadMeta() error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	var lo, hi uint64
	n := 0
	for _, sec := range s.meta {
		if sec.state.done.Load() || s.copied&(1<<sec.slot) != 0 && s.loadCopy(sec) {
			continue
		}
		if n == 0 {
			lo, hi = sec.h.Offset, sec.h.End()
		}
		lo, hi = min(lo, sec.h.Offset), max(hi, sec.h.End())
		n++
	}
	if n == 0 {
		return nil
	}
	// init checked that the sections lie inside the file.
	buf, err := s.read(format.SectionFile, int64(lo), int(hi-lo), nil)
	if err != nil {
		return err
	}
	s.loadFrom(buf, int64(lo))
	return nil
}

// tailPart returns the bytes of the block at h with its trailer, if they
// lie in tail, which starts at file offset tailOff; else nil.
func tailPart(tail []byte, tailOff int64, h format.BlockHandle) []byte {
	end := h.End()
	if h.Offset < uint64(tailOff) || end < h.Offset || end > uint64(tailOff)+uint64(len(tail)) {
		return nil
	}
	return tail[h.Offset-uint64(tailOff) : end-uint64(tailOff)]
}

func (s *readAtSource) dataBlock(sc *scratch, i int, h format.BlockHandle) ([]byte, error) {
	sc.setPin(blockcache.Handle{})
	if err := s.checkHandle(i, h); err != nil {
		return nil, err
	}
	if b, ok := s.cached(sc, i, h); ok {
		return b, nil
	}
	return s.fill(sc, i, h)
}

// fill reads data block i, missed in the cache, and decodes it into the
// cache; a concurrent miss of the same block waits for this read rather
// than making its own (one request, not several, on object storage).
func (s *readAtSource) fill(sc *scratch, i int, h format.BlockHandle) ([]byte, error) {
	f, lead := s.fills.join(i)
	if !lead {
		s.fills.wait(f)
		if b, ok := s.cached(sc, i, h); ok {
			return b, nil
		}
	} else {
		defer s.fills.land(i, f)
	}
	stored, typ, err := s.stored(sc, h)
	if err != nil {
		return nil, err
	}
	return s.decode(sc, i, h, stored, typ)
}

// stored returns the stored bytes and type of the data block at h, its
// checksum checked: from the kept tail (pinned by sc), an iterator's
// read-ahead window, or a read into sc.raw.
func (s *readAtSource) stored(sc *scratch, h format.BlockHandle) ([]byte, byte, error) {
	if s.tailEnd != 0 {
		if raw, pin, ok := s.fromTail(h.Offset, h.Length+format.BlockTrailerLen); ok {
			if stored, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw); err == nil {
				sc.setPin(pin) // stored stays valid until sc moves on
				if sc.ra != nil {
					sc.ra.next = int64(h.End()) // a read after it is sequential
				}
				return stored, typ, nil
			}
			pin.Release() // read it instead: the kept copy may be what is damaged
		}
	}
	if sc.ra != nil {
		raw, err := s.readAhead(sc, h)
		if err != nil {
			return nil, 0, err
		}
		return codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw)
	}
	raw, err := s.readBlock(format.SectionDataBlock, h, sc.raw)
	if err != nil {
		return nil, 0, err
	}
	sc.raw = raw[:0]
	return codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), raw)
}

func (s *readAtSource) blockForEntry(sc *scratch, i int, h format.BlockHandle, off uint64) ([]byte, int, error) {
	sc.setPin(blockcache.Handle{})
	if b, end, ok := s.cachedEntries(sc, i, off); ok {
		return b, end, nil
	}
	contents, err := s.dataBlock(sc, i, h)
	return contents, -1, err
}

func (s *readAtSource) forget(int, bool) {} // every read is checked
func (s *readAtSource) beginScan()       {}
func (s *readAtSource) endScan()         {}
func (s *readAtSource) inPlace([]byte) bool {
	return false
}
func (s *readAtSource) faultError(v any) error        { return mappingFault(nil, v) }
func (s *readAtSource) blockTable() *blockcache.Table { return s.table() }

func (s *readAtSource) drop() {
	s.close()
	s.partsOnce.Do(func() {})
	if s.partTable != nil {
		s.partTable.Close()
	}
	if s.sections != nil {
		s.sections.Close()
	}
}

func (s *readAtSource) free() {
	if s.file != nil {
		s.file.Close()
	}
}
