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

// eachFilterHash calls add with every hash Add recorded for partitions,
// once each: the prefixes continued into another partition left out, as
// a one-level table's filter holds them.
func (b *Builder) eachFilterHash(add func(uint64)) {
	from := 0
	for _, c := range b.cuts {
		if c.carry {
			b.hashes.each(from, int(c.endHash), add)
			from = int(c.endHash) + 1
		}
	}
	b.hashes.each(from, b.hashes.len(), add)
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
