package filterblock_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sstkit/sstable/filterblock"
)

// A keyFamily writes its j-th key into buf. Distinct j give distinct keys;
// filters are built from the even members and probed with the odd ones,
// so every probe is known to be absent.
type keyFamily struct {
	name string
	key  func(buf []byte, j uint64) []byte
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

var prefix100 = func() []byte {
	r := rand.New(rand.NewPCG(100, 100))
	b := make([]byte, 100)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

var families = []keyFamily{
	// splitmix64 is a bijection, so the first 8 bytes alone keep keys distinct.
	{"random16", func(buf []byte, j uint64) []byte {
		buf = binary.LittleEndian.AppendUint64(buf[:0], splitmix64(j))
		return binary.LittleEndian.AppendUint64(buf, splitmix64(j^0x5555555555555555))
	}},
	{"decimal%016d", func(buf []byte, j uint64) []byte {
		// fmt.Sprintf("%016d", j), without fmt's cost.
		buf = append(buf[:0], "0000000000000000"...)
		for i := 15; j > 0; i-- {
			buf[i] = byte('0' + j%10)
			j /= 10
		}
		return buf
	}},
	{"prefix12+be32", func(buf []byte, j uint64) []byte {
		buf = append(buf[:0], "common/pfx/:"...)
		return binary.BigEndian.AppendUint32(buf, uint32(j))
	}},
	{"prefix100+be32", func(buf []byte, j uint64) []byte {
		buf = append(buf[:0], prefix100...)
		return binary.BigEndian.AppendUint32(buf, uint32(j))
	}},
}

// measureFPR builds a filter from n keys of fam at bitsPerKey, checks that
// all of them match, and returns the fraction of m absent keys that match
// too, with the policy's k.
func measureFPR(t *testing.T, fam keyFamily, bitsPerKey, n, m int) (fpr float64, k int) {
	t.Helper()
	p := filterblock.Bloom(float64(bitsPerKey))
	g := p.NewGenerator()
	buf := make([]byte, 0, 128)
	for i := 0; i < n; i++ {
		buf = fam.key(buf, 2*uint64(i))
		g.Add(buf)
	}
	f := g.Generate(nil)
	for i := 0; i < n; i++ {
		buf = fam.key(buf, 2*uint64(i))
		if !filterblock.BloomMayContain(f, buf) {
			t.Fatalf("%s: false negative for key %d (%q)", fam.name, 2*i, buf)
		}
	}
	hits := 0
	for i := 0; i < m; i++ {
		buf = fam.key(buf, 2*uint64(i)+1)
		if filterblock.BloomMayContain(f, buf) {
			hits++
		}
	}
	return float64(hits) / float64(m), probes(t, p)
}

// TestFPR measures the false positive rate at 10 bits per key over 1M keys
// for random and structured key sets. Over 16 seeds of random keys the
// measured rate was 0.9666% with a standard deviation of 0.0059% (4M
// probes), against 0.9571% in theory; the structured families, shifted
// over six key ranges each, measured 0.953% to 0.979%. Both the 1.2x band
// and the 1.0% ceiling are therefore at least 3 standard deviations away.
func TestFPR(t *testing.T) {
	buf := make([]byte, 0, 16)
	for _, j := range []uint64{0, 7, 1234567890, 9999999999999999} {
		if got, want := string(families[1].key(buf, j)), fmt.Sprintf("%016d", j); got != want {
			t.Fatalf("decimal key %d = %q, want %q", j, got, want)
		}
	}
	const n, m = 1_000_000, 4_000_000
	for _, fam := range families {
		t.Run(fam.name, func(t *testing.T) {
			fpr, k := measureFPR(t, fam, 10, n, m)
			theory := filterblock.CacheLocalFPR(10, k)
			t.Logf("%s: %d keys, 10 bits/key, k=%d: FPR %.4f%% (theory %.4f%%, ratio %.3f)", fam.name, n, k, 100*fpr, 100*theory, fpr/theory)
			if fpr > 1.2*theory || fpr < theory/1.2 {
				t.Errorf("FPR %.4f%% is not within 1.2x of the cache-local theory %.4f%%", 100*fpr, 100*theory)
			}
			if fpr > 0.010 {
				t.Errorf("FPR %.4f%% is above 1.0%%", 100*fpr)
			}
		})
	}
}

// TestFPRSweep checks the rate against theory across bits per key, with
// 200k random keys. The probe count gives at least ~1500 expected false
// positives at each point (7.8M probes at 20 bits/key, where the rate is
// about 0.02%), so the binomial noise is under 2.6% and the 1.2x band is
// more than 5 standard deviations wide; over 16 seeds the 20 bits/key
// rate measured 1.037x theory with a 2.7% standard deviation.
func TestFPRSweep(t *testing.T) {
	const n = 200_000
	for _, bits := range []int{6, 8, 10, 12, 16, 20} {
		t.Run(fmt.Sprint(bits), func(t *testing.T) {
			k := probes(t, filterblock.Bloom(float64(bits)))
			theory := filterblock.CacheLocalFPR(float64(bits), k)
			m := max(1_000_000, int(1500/theory))
			fpr, _ := measureFPR(t, families[0], bits, n, m)
			t.Logf("%d bits/key, k=%d, %d probes: FPR %.5f%% (theory %.5f%%, ratio %.3f)", bits, k, m, 100*fpr, 100*theory, fpr/theory)
			if fpr > 1.2*theory || fpr < theory/1.2 {
				t.Errorf("%d bits/key: FPR %.5f%% is not within 1.2x of theory %.5f%%", bits, 100*fpr, 100*theory)
			}
		})
	}
}
