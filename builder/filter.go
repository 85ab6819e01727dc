package builder

import "github.com/sstkit/sstable/filterblock"

// filterBytes returns the size in bytes of a Bloom filter of n keys at
// b.bitsPerKey, as filterblock.Bloom builds it: whole 64-byte lines and a
// byte for the probe count.
func (b *Builder) filterBytes(n int) int {
	if n == 0 {
		return 1
	}
	lines := (uint64(float64(n)*b.bitsPerKey+0.5) + 511) / 512
	return int(max(lines, 1))*64 + 1
}

// eachFilterHash gives g every hash Add recorded for partitions, once
// each: the prefixes continued into another partition left out, as a
// one-level table's filter holds them.
func (b *Builder) eachFilterHash(g filterblock.HashAdder) {
	from := 0
	for _, c := range b.cuts {
		if c.carry {
			feedHashes(g, &b.hashes, from, int(c.endHash))
			from = int(c.endHash) + 1
		}
	}
	feedHashes(g, &b.hashes, from, b.hashes.len())
}

// feedHashes gives g the hashes from to to-1 of l: as runs, which it
// keeps until Generate rather than copying, when it takes them
// (filterblock.HashesAdder), else one by one. l's chunks must not change
// until g has generated its filter.
func feedHashes(g filterblock.HashAdder, l *hashList, from, to int) {
	l.eachRun(from, to, func(r []uint64) { feedRun(g, r) })
}

// feedRun gives g the hashes of r: the run itself when it takes runs
// (filterblock.HashesAdder), else one by one.
func feedRun(g filterblock.HashAdder, r []uint64) {
	if ra, ok := g.(filterblock.HashesAdder); ok {
		ra.AddHashes(r)
		return
	}
	for _, h := range r {
		g.AddHash(h)
	}
}

// noteGeneratedPolicy records in the properties the policy whose filter
// was built, when the generator reports one (FallbackReporter).
func (b *Builder) noteGeneratedPolicy() {
	// A policy whose construction can fail (BinaryFuse8) may have built
	// another policy's filter; the table names the one built.
	if fr, ok := b.filter.(filterblock.FallbackReporter); ok {
		if used := fr.GeneratedPolicy(); used.Name() != b.policy.Name() {
			b.policy = used
			b.props.FilterPolicy = used.Name()
			b.props.FilterBitsPerKey = 0
			if s, ok := used.(filterblock.Sized); ok {
				b.props.FilterBitsPerKey = s.BitsPerKey()
			}
		}
	}
}

// NoFilter, as Options.Filter, builds a table without a filter, as a nil
// filter policy does in LevelDB and Pebble (a nil Options.Filter here
// means the default filterblock.Bloom(DefaultBitsPerKey), as it always
// has). The table's filter section holds no policy name and no filter:
// Properties.FilterPolicy is "" and FilterBitsPerKey 0, readers answer
// MayContain and MayContainPrefix with true, and Get finds each key
// through the index or the hash index alone, which saves the filter's
// bits (about 10 bits per key by default) at the cost of a data block
// read for every absent key the index does not rule out. Such a table is
// never partitioned: PartitionThreshold applies to tables with a Bloom
// filter only.
var NoFilter filterblock.Policy = noFilter{}

// noFilter is NoFilter's policy: no name, and an empty filter.
type noFilter struct{}

func (noFilter) Name() string                        { return "" }
func (noFilter) NewGenerator() filterblock.Generator { return noFilter{} }
func (noFilter) MayContain(filter, key []byte) bool  { return true }
func (noFilter) Add(key []byte)                      {}
func (noFilter) Generate(dst []byte) []byte          { return dst }
