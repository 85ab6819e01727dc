package builder

import (
	"bytes"
	"fmt"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// partCut records the end of a partition: its last key (its key in the
// top-level index), the data block count and the count of b.hashes at
// its end, and whether the next partition's first hash is a prefix
// continued from this one.
type partCut struct {
	last              []byte
	endBlock, endHash uint64
	carry             bool
}

// cutHash returns the count of b.hashes at the last cut.
func (b *Builder) cutHash() int {
	if len(b.cuts) == 0 {
		return 0
	}
	return int(b.cuts[len(b.cuts)-1].endHash)
}

// cut ends a partition after the first blocks data blocks, whose last
// key is last, and the first hashes key hashes.
func (b *Builder) cut(last []byte, blocks uint64, hashes int) {
	b.cuts = append(b.cuts, partCut{last: bytes.Clone(last), endBlock: blocks, endHash: uint64(hashes)})
	b.partBytes = 0
}

// writePartitions writes the partitions of a partitioned table, each its
// keys' filter then its data blocks' index entries (taken from index, the
// whole index block), and returns the top-level index block: one entry
// per partition, keyed by its last key, whose value is its
// codec.PartitionHandle.
func (b *Builder) writePartitions(index []byte, filters <-chan []byte) ([]byte, error) {
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, 0, index); err != nil {
		return nil, fmt.Errorf("sstable: builder: index block: %w", err)
	}
	it.First()
	top := codec.BlockWriter{RestartInterval: 1}
	part := codec.BlockWriter{RestartInterval: 1}
	var handle []byte
	var block uint64
	for _, c := range b.cuts {
		filter := <-filters
		ph := codec.PartitionHandle{Offset: b.offset, FirstBlock: block}
		ph.FilterLen = b.writeBlock(filter, format.NoCompression).Length
		part.Reset()
		for ; block < c.endBlock; block++ {
			if !it.Valid() {
				return nil, fmt.Errorf("sstable: builder: index block ends before block %d", block)
			}
			part.Add(it.Key(), it.Value())
			it.Next()
		}
		ph.IndexLen = b.writeBlock(part.Finish(), format.NoCompression).Length
		handle = codec.AppendPartitionHandle(handle[:0], ph)
		top.Add(c.last, handle)
	}
	b.hashes, b.cuts = hashList{}, nil
	return top.Finish(), nil
}

// partitionFilters cuts the last partition, then generates each
// partition's filter on another goroutine, in order, into the channel it
// returns, so that the filters are built while the hash index is laid
// out (at 1M entries, about 8 ms and 17 ms of Finish's work).
func (b *Builder) partitionFilters() <-chan []byte {
	if n := len(b.cuts); n == 0 || b.cuts[n-1].endBlock != b.props.NumDataBlocks {
		b.cut(b.lastKey, b.props.NumDataBlocks, b.hashes.len()) // b.lastKey is the table's last key
	}
	out := make(chan []byte, len(b.cuts))
	cuts, hashes, g := b.cuts, &b.hashes, b.hashAdder
	go func() {
		var hash uint64
		for _, c := range cuts {
			feedHashes(g, hashes, int(hash), int(c.endHash))
			out <- g.(filterblock.Generator).Generate(nil)
			hash = c.endHash
		}
	}()
	return out
}

// hashChunkLen is the number of hashes in each chunk of a hashList: 256
// KiB.
const hashChunkLen = 1 << 15

// hashList holds the key hashes of a partitionable table in chunks, so
// that a table of millions of keys never re-copies them as one growing
// slice would (15 ms of a 1M-entry build, measured by pprof).
type hashList struct {
	chunks [][]uint64
	n      int
}

func (l *hashList) add(h uint64) {
	if l.n%hashChunkLen == 0 {
		l.chunks = append(l.chunks, make([]uint64, 0, hashChunkLen))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, h)
	l.n++
}

func (l *hashList) len() int { return l.n }

// eachRun calls f with the hashes from to to-1, in order, as slices of
// the chunks holding them.
func (l *hashList) eachRun(from, to int, f func([]uint64)) {
	for i := from; i < to; {
		c := l.chunks[i/hashChunkLen]
		end := min(len(c), i%hashChunkLen+to-i)
		f(c[i%hashChunkLen : end : end])
		i += end - i%hashChunkLen
	}
}

// each calls f with hashes from to to-1, in order.
func (l *hashList) each(from, to int, f func(uint64)) {
	for i := from; i < to; {
		c := l.chunks[i/hashChunkLen]
		end := min(len(c), i%hashChunkLen+to-i)
		for _, h := range c[i%hashChunkLen : end] {
			f(h)
		}
		i += end - i%hashChunkLen
	}
}
