package builder

import (
	"fmt"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/hugemem"
)

// startHashIndex lays out the hash index section, if the table has one,
// on another goroutine, and returns a function that waits for it and
// returns it (an empty Buf without a hash index). The section's buffer
// (4.4 bytes per key in a version 4 table) comes from hugemem: from the
// Go heap it was fresh memory at nearly every build, whose page faults
// took 20 ms of a 1M-entry build's 220 on a VM, 30-40% of Finish.
func (b *Builder) startHashIndex() (wait func() hugemem.Buf) {
	if !b.hashIndex {
		return func() hugemem.Buf { return hugemem.Buf{} }
	}
	var hashSection hugemem.Buf
	hashDone := make(chan struct{})
	offsets := append(b.blockOffsets, b.offset)
	// With every block raw, slots can hold entries' file offsets;
	// otherwise offsets in the concatenated decoded blocks, with a
	// table of each block's decoded start, which take a reader from
	// a slot to the entry in its cached, decoded block. (Version 4
	// slots hold offsets in the block.)
	b.hidx.FileOffsets = !b.anyCompressed
	if b.anyCompressed {
		b.hidx.DecodedStarts = append(b.decodedStart, b.decodedTotal)
	}
	go func() {
		defer close(hashDone)
		hashSection = hugemem.Alloc(b.hidx.SectionLen(b.props.DataSize, offsets))
		hashSection.B = b.hidx.Append(hashSection.B[:0], b.props.DataSize, offsets)
		b.hidx = codec.HashIndexWriter{} // let the entries go
	}()
	return func() hugemem.Buf {
		<-hashDone
		return hashSection
	}
}

// writeHashIndex writes the hash index section from startHashIndex, with
// whole, the whole table's filter of wholeLen bytes (0 when the section
// carries none), copied into the room left for it at its end, and frees
// the section's buffer.
func (b *Builder) writeHashIndex(section hugemem.Buf, whole []byte, wholeLen int) error {
	defer section.Free() // written out: bufio copies or writes through
	hashSection := section.B
	if wholeLen > 0 {
		if len(whole) != wholeLen {
			return fmt.Errorf("sstable: builder: internal error: whole filter of %d bytes, %d expected", len(whole), wholeLen)
		}
		copy(hashSection[len(hashSection)-wholeLen:], whole)
	}
	if b.hashIndex {
		b.writeBlock(hashSection, format.NoCompression)
		b.props.HashIndexSize = b.offset - b.props.DataSize
	}
	return nil
}
