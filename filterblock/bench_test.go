package filterblock_test

import (
	"fmt"
	"testing"

	"github.com/sstkit/sstable/filterblock"
)

// flatKeys holds n 16-byte keys of family 0 (j = 2i, or 2i+1 when odd) in
// one buffer, so that 10M keys cost 160 MB rather than a slice header each.
type flatKeys []byte

func benchKeys(n int, odd bool) flatKeys {
	buf := make([]byte, 0, 16*n)
	var tmp [16]byte
	for i := 0; i < n; i++ {
		j := 2 * uint64(i)
		if odd {
			j++
		}
		buf = append(buf, families[0].key(tmp[:0], j)...) // key writes from tmp[:0]
	}
	return buf
}

func (k flatKeys) at(i int) []byte { return k[16*i : 16*i+16 : 16*i+16] }

var benchPolicies = []struct {
	name   string
	policy filterblock.Policy
}{
	{"bloom", filterblock.Bloom(10)},
	{"leveldb", filterblock.LevelDBBloom(10)},
}

var benchSizes = []int{1_000_000, 10_000_000}

// BenchmarkGenerate builds one filter per op at 10 bits/key with a new
// generator, as the builder does per table: Add every key, then Generate.
// ns/key is the build cost per key.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range benchSizes {
		keys := benchKeys(n, false)
		for _, pc := range benchPolicies {
			b.Run(fmt.Sprintf("%s/keys=%d", pc.name, n), func(b *testing.B) {
				var dst []byte
				b.ReportAllocs()
				for b.Loop() {
					g := pc.policy.NewGenerator() // one per table, as the builder does
					for i := 0; i < n; i++ {
						g.Add(keys.at(i))
					}
					dst = g.Generate(dst[:0])
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			})
		}
	}
}

// BenchmarkMayContain probes a filter at 10 bits/key with keys that are in
// it (hit) and neighbouring keys that are not (miss), through the Policy
// interface. It must report 0 allocs/op.
func BenchmarkMayContain(b *testing.B) {
	for _, n := range benchSizes {
		present, absent := benchKeys(n, false), benchKeys(n, true)
		for _, pc := range benchPolicies {
			f := build(pc.policy, nil)
			g := pc.policy.NewGenerator()
			for i := 0; i < n; i++ {
				g.Add(present.at(i))
			}
			f = g.Generate(f[:0])
			for _, c := range []struct {
				name string
				keys flatKeys
			}{{"hit", present}, {"miss", absent}} {
				b.Run(fmt.Sprintf("%s/keys=%d/%s", pc.name, n, c.name), func(b *testing.B) {
					b.ReportAllocs()
					matched, i := 0, 0
					for b.Loop() {
						if pc.policy.MayContain(f, c.keys.at(i)) {
							matched++
						}
						if i++; i == n {
							i = 0
						}
					}
					if c.name == "hit" && matched != b.N {
						b.Fatalf("%d of %d present keys matched", matched, b.N)
					}
					if c.name == "miss" && b.N >= 100_000 && matched > b.N/20 {
						b.Fatalf("%d of %d absent keys matched", matched, b.N)
					}
					b.ReportMetric(100*float64(matched)/float64(b.N), "%matched")
				})
			}
		}
	}
}
