package builder

import (
	"fmt"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/hugemem"
)

// startHashIndex lays out the hash index section, if the table has one,
// on another goroutine, with room at its end for the whole table's
// filter of filterLen bytes (0: none), which the caller fills meanwhile.
// It returns the section's buffer (empty without a hash index) and a
// function that waits for the layout. The buffer (4.4 bytes per key in
// a version 4 table) comes from hugemem: from the Go heap it was fresh
// memory at nearly every build, whose page faults took 20 ms of a
// 1M-entry build's 220 on a VM, 30-40% of Finish.
func (b *Builder) startHashIndex(filterLen int) (section hugemem.Buf, wait func()) {
	if !b.hashIndex {
		return hugemem.Buf{}, func() {}
	}
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
	b.hidx.FilterLen = filterLen
	section = hugemem.Alloc(b.hidx.SectionLen(b.props.DataSize, offsets))
	go func() {
		defer close(hashDone)
		b.hidx.Append(section.B[:0], b.props.DataSize, offsets)
		b.hidx = codec.HashIndexWriter{} // let the entries go
	}()
	return section, func() { <-hashDone }
}

// fillWholeFilter generates the whole table's filter, of filterLen
// bytes, into the room left for it at the end of the hash index section.
func (b *Builder) fillWholeFilter(section []byte, filterLen int) error {
	room := section[len(section)-filterLen:]
	g := b.policy.NewGenerator()
	b.eachFilterHash(g.(filterblock.HashAdder)) // partitionable: the generator takes hashes
	whole := g.Generate(room[:0:filterLen])
	if len(whole) != filterLen {
		return fmt.Errorf("sstable: builder: internal error: whole filter of %d bytes, %d expected", len(whole), filterLen)
	}
	if &whole[0] != &room[0] { // a generator that did not append in place
		copy(room, whole)
	}
	return nil
}

// writeHashIndex waits for the hash index section from startHashIndex,
// writes it unless err is set, and frees its buffer.
func (b *Builder) writeHashIndex(section hugemem.Buf, wait func(), err error) error {
	wait()
	defer section.Free() // written out: bufio copies or writes through
	if err != nil {
		return err
	}
	if b.hashIndex {
		b.writeBlock(section.B, format.NoCompression)
		b.props.HashIndexSize = b.offset - b.props.DataSize
	}
	return nil
}
