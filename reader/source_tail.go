package reader

import "github.com/sstkit/sstable/internal/blockcache"

// The tail's data blocks and partitions.
//
// New reads the file's last Options.TailSize bytes in one ReadAt. In a
// table whose filter, index block and properties take less than that,
// the rest of the tail is data blocks (in a version 3 table, partitions
// too), already paid for: on object storage a request of 10-50 ms. New
// reads the tail into memory the cache lends, and the reader keeps it
// there, one entry in slot slotTail counted against the capacity and
// evicted like any block. A lookup or iterator needing a block or
// partition that lies whole in it takes it from there instead of reading
// it. A 10,000-entry table of 100-byte values (about 800 KB) thus serves
// a third of its blocks without a read, and a table of up to about 250 KB
// all of them: no lookup or scan reads anything after New.
//
// The kept bytes are checked like read ones, block by block, by their
// checksums. A block or partition that fails the check is read again, as
// if it were not kept: bytes damaged on the way are never taken for
// damage to the file.

// keepTail keeps the tail New read, the file's bytes from offset off in
// memory the cache lent (pin), when it holds data blocks or partitions,
// which end at end: it publishes the entry in slot slotTail (the caller
// still releases its pin). Nothing is kept when the tail holds none, or
// when the cache could not lend the memory.
func (s *readAtSource) keepTail(pin blockcache.Handle, off int64, end uint64) {
	if uint64(off) >= end || !pin.Cached() {
		return
	}
	s.sections.Publish(slotTail, pin, 0)
	s.tailOff, s.tailEnd = uint64(off), end // init checked that end <= the footer's offset, inside the tail
}

// inTail reports whether the file's bytes [off, off+n) lie in the kept
// tail, whether or not it is still cached.
func (s *readAtSource) inTail(off, n uint64) bool {
	return off >= s.tailOff && off <= s.tailEnd && n <= s.tailEnd-off && n > 0
}

// fromTail returns the file's bytes [off, off+n), pinned by the returned
// Handle, when they lie in the kept tail and it is still cached.
func (s *readAtSource) fromTail(off, n uint64) ([]byte, blockcache.Handle, bool) {
	if !s.inTail(off, n) {
		return nil, blockcache.Handle{}, false
	}
	pin, ok := s.sections.Get(slotTail)
	if !ok {
		return nil, blockcache.Handle{}, false
	}
	b := pin.Bytes()
	i := off - s.tailOff
	if uint64(len(b)) < i+n { // never: the entry is the whole kept range
		pin.Release()
		return nil, blockcache.Handle{}, false
	}
	return b[i : i+n : i+n], pin, true
}
