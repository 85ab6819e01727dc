package codec

import (
	"encoding/binary"

	"github.com/sstkit/sstable/format"
)

// EntriesEnd returns the end of the entries of decoded block contents:
// the offset of the restart array. blockOff is the block's file offset,
// for errors, which wrap ErrCorrupt.
func EntriesEnd(contents []byte, blockOff int64) (int, error) {
	n := len(contents)
	if n < 4 {
		return 0, format.Corruptf(format.SectionDataBlock, blockOff, "block of %d bytes has no restart count", n)
	}
	nr := uint64(binary.LittleEndian.Uint32(contents[n-4:]))
	if nr > uint64(n-4)/4 {
		return 0, format.Corruptf(format.SectionDataBlock, blockOff, "restart count %d does not fit in a %d-byte block", nr, n)
	}
	return n - 4 - 4*int(nr), nil
}

// EntryAt decodes the self-contained entry (shared = 0) at byte offset off
// of decoded data block contents: its key and value, aliasing contents.
// blockOff is the block's file offset, for errors. An entry that overruns
// the block's entries, or is prefix-compressed, gives an error wrapping
// ErrCorrupt.
func EntryAt(contents []byte, blockOff int64, off uint32) (key, value []byte, err error) {
	end, err := EntriesEnd(contents, blockOff)
	if err != nil {
		return nil, nil, err
	}
	return EntryIn(contents[:end], blockOff, off)
}

// EntryIn is EntryAt for a block whose entries (the contents up to
// EntriesEnd) are already known, so that a lookup need not read the
// restart count at the far end of the block: another cache line.
func EntryIn(entries []byte, blockOff int64, off uint32) (key, value []byte, err error) {
	shared, unshared, vlen, p, fault := parseEntryHeader(entries, int(off))
	switch {
	case fault == entryOutside:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "hash index entry offset %d lies past the entries (%d bytes)", off, len(entries))
	case fault == entryOverrun:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d (key %d bytes, value %d bytes) overruns the entries", off, unshared, vlen)
	case fault != entryOK && fault != entrySharedTooLong:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "bad entry header at block offset %d", off)
	case shared != 0:
		return nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d shares %d key bytes: a hash-indexed entry must stand alone", off, shared)
	}
	k := p + int(unshared)
	return entries[p:k:k], entries[k : k+int(vlen) : k+int(vlen)], nil
}

// EntryParts decodes the entry at byte offset off of the entries of a
// Version4 data block (its contents up to EntriesEnd), whose entries
// share prefixes with the block's first key (BlockWriter.ShareWithFirst):
// the entry's key is head followed by tail, where head is the first key's
// first shared bytes. All three slices alias entries. blockOff is the
// block's file offset, for errors, which wrap ErrCorrupt: an offset past
// the entries, a bad header, an entry overrunning the entries, a first
// entry that is not whole, or a shared length beyond the first key.
func EntryParts(entries []byte, blockOff int64, off uint32) (head, tail, value []byte, err error) {
	shared, unshared, vlen, p, fault := parseEntryHeader(entries, int(off))
	switch {
	case fault == entryOutside:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "hash index entry offset %d lies past the entries (%d bytes)", off, len(entries))
	case fault == entryOverrun:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d (key %d bytes, value %d bytes) overruns the entries", off, unshared, vlen)
	case fault != entryOK && fault != entrySharedTooLong:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "bad entry header at block offset %d", off)
	}
	k := p + int(unshared)
	tail, value = entries[p:k:k], entries[k:k+int(vlen):k+int(vlen)]
	if shared == 0 {
		return nil, tail, value, nil
	}
	s0, u0, _, p0, fault := parseEntryHeader(entries, 0)
	switch {
	case fault != entryOK && fault != entrySharedTooLong || s0 != 0:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "the first entry of a block is not stored whole")
	case shared > u0:
		return nil, nil, nil, format.Corruptf(format.SectionDataBlock, blockOff, "entry at block offset %d shares %d key bytes with a first key of %d bytes", off, shared, u0)
	}
	return entries[p0 : p0+int(shared) : p0+int(shared)], tail, value, nil
}
