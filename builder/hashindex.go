package builder

import (
	"fmt"
	"sync"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// sectionPool recycles hash index section buffers between builds, as
// internal/codec recycles the hash index writer's chunks: fresh memory
// costs a page fault per 4 KiB on first touch.
var sectionPool sync.Pool // *[]byte

// startHashIndex lays out the hash index section, if the table has one,
// on another goroutine, and returns a function that waits for it and
// returns it (nil without a hash index).
func (b *Builder) startHashIndex() (wait func() []byte) {
	if !b.hashIndex {
		return func() []byte { return nil }
	}
	var hashSection []byte
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
		var buf []byte
		if p, ok := sectionPool.Get().(*[]byte); ok {
			buf = (*p)[:0]
		}
		hashSection = b.hidx.Append(buf, b.props.DataSize, offsets)
		b.hidx = codec.HashIndexWriter{} // let the entries go
	}()
	return func() []byte {
		<-hashDone
		return hashSection
	}
}

// writeHashIndex writes hashSection, the hash index section from
// startHashIndex, with whole, the whole table's filter of wholeLen bytes
// (0 when the section carries none), copied into the room left for it at
// its end.
func (b *Builder) writeHashIndex(hashSection, whole []byte, wholeLen int) error {
	if wholeLen > 0 {
		if len(whole) != wholeLen {
			return fmt.Errorf("sstable: builder: internal error: whole filter of %d bytes, %d expected", len(whole), wholeLen)
		}
		copy(hashSection[len(hashSection)-wholeLen:], whole)
	}
	if b.hashIndex {
		b.writeBlock(hashSection, format.NoCompression)
		b.props.HashIndexSize = b.offset - b.props.DataSize
		sectionPool.Put(&hashSection) // written out: bufio copies or writes through
	}
	return nil
}
