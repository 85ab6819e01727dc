package filterblock_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/sstkit/sstable/filterblock"
)

// The vectors of LevelDB's util/hash_test.cc, including tail bytes >= 0x80
// that LevelDB before 1.18 sign-extended.
func TestLevelDBHashVectors(t *testing.T) {
	for _, v := range []struct {
		data []byte
		want uint32
	}{
		{[]byte{}, 0xbc9f1d34},
		{[]byte{0x62}, 0xef1345c4},
		{[]byte{0xc3, 0x97}, 0x5b663814},
		{[]byte{0xe2, 0x99, 0xa5}, 0x323c078f},
		{[]byte{0xe1, 0x80, 0xb9, 0x32}, 0xed21633a},
	} {
		if got := filterblock.LevelDBHash(v.data, 0xbc9f1d34); got != v.want {
			t.Errorf("LevelDBHash(%x) = %#08x, want %#08x", v.data, got, v.want)
		}
	}
}

func TestLevelDBBloomParameters(t *testing.T) {
	for _, c := range []struct{ bpk, k int }{{1, 1}, {2, 1}, {3, 2}, {10, 6}, {20, 13}, {43, 29}, {44, 30}, {100, 30}, {0, 6}, {-5, 6}} {
		p := filterblock.LevelDBBloom(c.bpk)
		if got := p.(filterblock.Probed).Probes(); got != c.k {
			t.Errorf("LevelDBBloom(%d) probes = %d, want %d", c.bpk, got, c.k)
		}
		if p.Name() != "leveldb.BuiltinBloomFilter2" {
			t.Errorf("name %q", p.Name())
		}
	}
	// At least 64 bits, k in the last byte.
	g := filterblock.LevelDBBloom(10).NewGenerator()
	g.Add([]byte("x"))
	if f := g.Generate(nil); len(f) != 9 || f[8] != 6 {
		t.Fatalf("one-key filter = %x, want 8 bytes of bits and k=6", f)
	}
}

func TestLevelDBBloomEdgeEncodings(t *testing.T) {
	p := filterblock.LevelDBBloom(10)
	for _, f := range [][]byte{nil, {}, {0x06}} {
		if p.MayContain(f, []byte("hello")) {
			t.Errorf("filter %x shorter than 2 bytes must match nothing", f)
		}
	}
	if !p.MayContain([]byte{0, 0, 0, 0, 0, 0, 0, 0, 31}, []byte("hello")) {
		t.Error("k > 30 is reserved and must match everything")
	}
}

// policies are the two built-in policies at 10 bits per key, for the tests
// ported from LevelDB's util/bloom_test.cc.
var policies = []filterblock.Policy{filterblock.Bloom(10), filterblock.LevelDBBloom(10)}

func seedKey(i int, buf []byte) []byte {
	return binary.LittleEndian.AppendUint32(buf[:0], uint32(i))
}

func TestSeedEmptyFilter(t *testing.T) {
	for _, p := range policies {
		f := p.NewGenerator().Generate(nil)
		for _, k := range []string{"hello", "world"} {
			if p.MayContain(f, []byte(k)) {
				t.Errorf("%s: empty filter matches %q", p.Name(), k)
			}
		}
	}
}

func TestSeedSmall(t *testing.T) {
	for _, p := range policies {
		g := p.NewGenerator()
		g.Add([]byte("hello"))
		g.Add([]byte("world"))
		f := g.Generate(nil)
		for _, k := range []string{"hello", "world"} {
			if !p.MayContain(f, []byte(k)) {
				t.Errorf("%s: false negative for %q", p.Name(), k)
			}
		}
		for _, k := range []string{"x", "foo"} {
			if p.MayContain(f, []byte(k)) {
				t.Errorf("%s: two-key filter matches %q", p.Name(), k)
			}
		}
	}
}

// nextLength steps through 1..10000 as LevelDB's test does: by 1 to 10, by
// 10 to 100, by 100 to 1000, then by 1000.
func nextLength(n int) int {
	switch {
	case n < 10:
		return n + 1
	case n < 100:
		return n + 10
	case n < 1000:
		return n + 100
	}
	return n + 1000
}

func TestSeedVaryingLengths(t *testing.T) {
	for _, p := range policies {
		t.Run(p.Name(), func(t *testing.T) {
			var buf [4]byte
			mediocre, good := 0, 0
			for n := 1; n <= 10000; n = nextLength(n) {
				g := p.NewGenerator()
				for i := 0; i < n; i++ {
					g.Add(seedKey(i, buf[:]))
				}
				f := g.Generate(nil)
				limit := n*10/8 + 40
				if p.Name() == filterblock.BloomName {
					// Whole 64-byte lines plus the k byte.
					limit = (n*10+511)/512*64 + 1
				}
				if len(f) > limit {
					t.Fatalf("%d keys: filter of %d bytes exceeds %d", n, len(f), limit)
				}
				for i := 0; i < n; i++ {
					if !p.MayContain(f, seedKey(i, buf[:])) {
						t.Fatalf("%d keys: false negative for key %d", n, i)
					}
				}
				fp := 0
				for i := 0; i < 10000; i++ {
					if p.MayContain(f, seedKey(i+1000000000, buf[:])) {
						fp++
					}
				}
				rate := float64(fp) / 10000
				if rate > 0.02 {
					t.Fatalf("%d keys: false positive rate %.2f%% > 2%%", n, 100*rate)
				}
				if rate > 0.0125 {
					mediocre++
				} else {
					good++
				}
			}
			t.Logf("good filters %d, mediocre %d", good, mediocre)
			if mediocre > good/5 {
				t.Fatalf("%d mediocre filters, more than good/5 (%d good)", mediocre, good)
			}
		})
	}
}

// TestBloomFPRTarget checks that BloomFPR(p) delivers at most 1.2·p on 1M
// random-like keys and 1M absent probes, for p in {0.1, 0.01, 0.001}.
func TestBloomFPRTarget(t *testing.T) {
	const n = 1 << 20
	for _, p := range []float64{0.1, 0.01, 0.001} {
		pol := filterblock.BloomFPR(p)
		g := pol.NewGenerator()
		var buf []byte
		for i := 0; i < n; i++ {
			buf = fmt.Appendf(buf[:0], "%016d", 2*i)
			g.Add(buf)
		}
		f := g.Generate(nil)
		fp := 0
		for i := 0; i < n; i++ {
			buf = fmt.Appendf(buf[:0], "%016d", 2*i+1)
			if pol.MayContain(f, buf) {
				fp++
			}
		}
		rate := float64(fp) / n
		bpk := pol.(filterblock.Sized).BitsPerKey()
		t.Logf("p=%g: %.3f bits/key, measured %.4f%%", p, bpk, 100*rate)
		if rate > 1.2*p {
			t.Errorf("BloomFPR(%g): measured FPR %.4f%% > 1.2 × target", p, 100*rate)
		}
		if std := -math.Log(p) / (math.Ln2 * math.Ln2); bpk < std {
			t.Errorf("BloomFPR(%g) uses %.3f bits/key, below the standard-Bloom %.3f", p, bpk, std)
		}
	}
}
