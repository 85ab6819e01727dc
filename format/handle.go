package format

// BlockHandle locates a stored block in a table file: Offset is the byte
// offset of its first stored byte and Length the number of stored bytes,
// excluding the BlockTrailerLen-byte trailer that follows them.
type BlockHandle struct {
	Offset uint64 // bytes from the start of the file
	Length uint64 // stored bytes, trailer excluded
}

// End returns the offset just past the handle's trailer: Offset+Length+BlockTrailerLen.
func (h BlockHandle) End() uint64 { return h.Offset + h.Length + BlockTrailerLen }

// BlockTrailerLen is the size in bytes of the trailer after every stored
// block: one compression-type byte ([BlockTypeRaw] and the others, whose
// documentation specifies the trailer), then a masked CRC-32C as uint32 LE.
const BlockTrailerLen = 5
