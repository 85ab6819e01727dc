package filterblock_test

import (
	"fmt"
	"testing"

	"github.com/sstkit/sstable/filterblock"
)

// benchKeys returns n distinct 16-byte random keys of family j0, j0+2, ...
func benchKeys(n int, odd bool) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		j := 2 * uint64(i)
		if odd {
			j++
		}
		keys[i] = families[0].key(make([]byte, 0, 16), j)
	}
	return keys
}

// BenchmarkGenerate builds one filter per op: Add every key, then Generate.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			keys := benchKeys(n, false)
			p := filterblock.Bloom(10)
			g := p.NewGenerator()
			var dst []byte
			b.ReportAllocs()
			for b.Loop() {
				for _, k := range keys {
					g.Add(k)
				}
				dst = g.Generate(dst[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// BenchmarkMayContain queries a filter of 1M keys at 10 bits/key with keys
// that are in it (hit) and keys that are not (miss; ~1% false positives).
func BenchmarkMayContain(b *testing.B) {
	const n = 1_000_000
	p := filterblock.Bloom(10)
	f := build(p, benchKeys(n, false))
	for _, c := range []struct {
		name string
		odd  bool
	}{{"hit", false}, {"miss", true}} {
		keys := benchKeys(n, c.odd)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			matched, i := 0, 0
			for b.Loop() {
				if filterblock.BloomMayContain(f, keys[i]) {
					matched++
				}
				if i++; i == n {
					i = 0
				}
			}
			if !c.odd && matched != b.N {
				b.Fatalf("%d of %d present keys matched", matched, b.N)
			}
		})
		b.Run(c.name+"/policy", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.MayContain(f, keys[i])
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}
