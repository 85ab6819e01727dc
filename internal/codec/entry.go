package codec

import "encoding/binary"

// entryFault names the check an entry header failed (entryOK: none).
type entryFault uint8

const (
	entryOK            entryFault = iota
	entryOutside                  // the offset lies outside the entries
	entryBadShared                // bad shared-length varint
	entryBadKeyLen                // bad key-length varint
	entryBadValueLen              // bad value-length varint
	entryOverrun                  // key suffix and value overrun the entries
	entrySharedTooLong            // shared length beyond the entries (keeps int conversions exact)
)

// parseEntryHeader parses the header of the entry at off of entries (a
// block's contents up to its restart array): the shared, unshared and
// value lengths, and p, where the key suffix starts. The key suffix and
// the value are checked to lie within entries. Both BlockIter and EntryIn
// use it; each words its own errors from the fault.
func parseEntryHeader(entries []byte, off int) (shared, unshared, vlen uint64, p int, fault entryFault) {
	end := len(entries)
	// Fast path: three one-byte varints (keys and values under 128 bytes)
	// whose lengths fit, as in most blocks.
	if off >= 0 && off+3 <= end {
		d := entries[off : off+3 : off+3]
		if d[0]|d[1]|d[2] < 0x80 {
			s, u, v := uint64(d[0]), uint64(d[1]), uint64(d[2])
			if p = off + 3; u+v <= uint64(end-p) {
				return s, u, v, p, entryOK
			}
		}
	}
	if off < 0 || off >= end {
		return 0, 0, 0, 0, entryOutside
	}
	s, n1 := binary.Uvarint(entries[off:])
	if n1 <= 0 {
		return 0, 0, 0, 0, entryBadShared
	}
	u, n2 := binary.Uvarint(entries[off+n1:])
	if n2 <= 0 {
		return s, 0, 0, 0, entryBadKeyLen
	}
	v, n3 := binary.Uvarint(entries[off+n1+n2:])
	if n3 <= 0 {
		return s, u, 0, 0, entryBadValueLen
	}
	p = off + n1 + n2 + n3
	if room := uint64(end - p); u > room || v > room-u {
		return s, u, v, p, entryOverrun
	}
	if s > uint64(end) {
		return s, u, v, p, entrySharedTooLong
	}
	return s, u, v, p, entryOK
}
