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

// cut ends a partition after data block endBlock-1, whose last key is
// last, and hash endHash-1. Once the table is sure to be partitioned, it
// starts generating the partitions' filters.
func (b *Builder) cut(last []byte, endBlock, endHash uint64) {
	b.cuts = append(b.cuts, partCut{last: bytes.Clone(last), endBlock: endBlock, endHash: endHash})
	b.partBytes = 0
	if b.index.EstimatedSize()+b.filterBytes(int(b.filterKeys)) > b.partThreshold {
		// Both only grow, so Finish will partition: filters made now
		// are not wasted (index entries the dictionary's queue holds
		// back only delay this).
		b.startPartitionFilters()
	}
}

// startPartitionFilters generates, each on a goroutine of its own, the
// filters of the partitions cut whose filters are not started, into
// b.partFilters, in order: during Add they use a core Add leaves idle, and
// Finish only collects them (at 1M entries, 17 ms of Finish's work).
func (b *Builder) startPartitionFilters() {
	for i := len(b.partFilters); i < len(b.cuts); i++ {
		from := uint64(0)
		if i > 0 {
			from = b.cuts[i-1].endHash
		}
		// The runs are views of b.hashes's chunks, whose elements never
		// change once added: the goroutine does not read b.hashes,
		// which Add keeps growing.
		var runs [][]uint64
		b.hashes.eachRun(int(from), int(b.cuts[i].endHash), func(r []uint64) { runs = append(runs, r) })
		out := make(chan []byte, 1)
		b.partFilters = append(b.partFilters, out)
		g := b.policy.NewGenerator()
		go func() {
			for _, r := range runs {
				feedRun(g.(filterblock.HashAdder), r)
			}
			out <- g.Generate(nil)
		}()
	}
}

// writePartitions writes the partitions of a partitioned table, each its
// keys' filter then its data blocks' index entries (taken from index, the
// whole index block), and returns the top-level index block: one entry
// per partition, keyed by its last key, whose value is its
// codec.PartitionHandle.
func (b *Builder) writePartitions(index []byte) ([]byte, error) {
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, 0, index); err != nil {
		return nil, fmt.Errorf("sstable: builder: index block: %w", err)
	}
	it.First()
	top := codec.BlockWriter{RestartInterval: 1}
	part := codec.BlockWriter{RestartInterval: 1}
	var handle []byte
	var block uint64
	for i, c := range b.cuts {
		filter := <-b.partFilters[i]
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
	b.hashes, b.cuts, b.partFilters = hashList{}, nil, nil
	return top.Finish(), nil
}

// partitionFilters cuts the last partition, then starts generating the
// filters not started yet (startPartitionFilters), so that they are
// built while the hash index is laid out.
func (b *Builder) partitionFilters() {
	if n := len(b.cuts); n == 0 || b.cuts[n-1].endBlock != b.props.NumDataBlocks {
		b.cut(b.lastKey, b.props.NumDataBlocks, uint64(b.hashes.len())) // the table's last key
	}
	b.startPartitionFilters()
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
