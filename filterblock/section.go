package filterblock

import (
	"encoding/binary"

	"github.com/sstkit/sstable/format"
)

// Alignment is the file alignment, in bytes, of the filter inside the
// filter section, so that each 64-byte filter line of a memory-mapped
// table sits in one cache line.
const Alignment = 64

// MaxNameLen bounds a policy name stored in a table, in bytes. Builders
// refuse longer names; readers treat them as corruption.
const MaxNameLen = 256

// AppendSection appends the contents of a filter section to dst, for a
// section that will start at byte offset fileOff of the file:
//
//	uvarint len(name) | name | zero padding | filter
//
// The padding (0 to 63 bytes) puts the filter at a file offset that is a
// multiple of Alignment. An empty name means the table has no filter.
func AppendSection(dst []byte, fileOff uint64, name string, filter []byte) []byte {
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	pad := paddingAt(fileOff + uint64(len(dst)-start))
	dst = append(dst, make([]byte, pad)...)
	return append(dst, filter...)
}

func paddingAt(off uint64) int { return int((Alignment - off%Alignment) % Alignment) }

// DecodeSection splits filter section contents, stored at byte offset
// fileOff of the file, into the policy name and the filter, which aliases
// contents. Errors wrap format.ErrCorrupt and name the offset.
func DecodeSection(contents []byte, fileOff uint64) (name string, filter []byte, err error) {
	n, w := binary.Uvarint(contents)
	if w <= 0 {
		return "", nil, format.Corruptf(format.SectionFilter, int64(fileOff), "bad policy name length varint")
	}
	if n > MaxNameLen || n > uint64(len(contents)-w) {
		return "", nil, format.Corruptf(format.SectionFilter, int64(fileOff), "policy name length %d exceeds section (%d bytes) or limit %d", n, len(contents), MaxNameLen)
	}
	p := w + int(n)
	name = string(contents[w:p])
	pad := paddingAt(fileOff + uint64(p))
	if pad > len(contents)-p {
		return "", nil, format.Corruptf(format.SectionFilter, int64(fileOff)+int64(p), "section ends inside its %d-byte alignment padding", pad)
	}
	for i, c := range contents[p : p+pad] {
		if c != 0 {
			return "", nil, format.Corruptf(format.SectionFilter, int64(fileOff)+int64(p+i), "nonzero padding byte %#02x", c)
		}
	}
	return name, contents[p+pad:], nil
}
