package filterblock_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/filterblock"
)

// probes returns the policy's k.
func probes(t rapid.TB, p filterblock.Policy) int {
	t.Helper()
	pp, ok := p.(filterblock.Probed)
	if !ok {
		t.Fatalf("%T has no Probes method", p)
	}
	return pp.Probes()
}

func build(p filterblock.Policy, keys [][]byte) []byte {
	g := p.NewGenerator()
	for _, k := range keys {
		g.Add(k)
	}
	return g.Generate(nil)
}

// wantLen is the documented filter size: ceil(n·bitsPerKey/512) lines of
// 64 bytes, then the k byte.
// wantLen is the documented filter length for n keys: whole lines of 512
// bits holding round(n·bitsPerKey) bits, then the k byte.
func wantLen(n int, bitsPerKey float64) int {
	return (int(math.Round(float64(n)*bitsPerKey))+511)/512*64 + 1
}

// refFilter builds a filter from the description in Bloom's documentation,
// independently of the generator: XXH64 per key, the high 32 bits pick the
// line by multiply-shift, the low 32 bits a give probe bits a_i >> 23 with
// a_(i+1) = a_i · 0x9e3779b9.
func refFilter(keys [][]byte, bitsPerKey float64, k int) []byte {
	lines := uint64((int(math.Round(float64(len(keys))*bitsPerKey)) + 511) / 512)
	f := make([]byte, lines*64+1)
	for _, key := range keys {
		h := xxhash.Sum64(key)
		line := ((h >> 32) * lines) >> 32
		a := uint32(h)
		for i := 0; i < k; i++ {
			bit := uint64(a >> 23)
			f[line*64+bit/8] |= 1 << (bit % 8)
			a *= 0x9e3779b9
		}
	}
	f[len(f)-1] = byte(k)
	return f
}

func TestNoFalseNegatives(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bits := rapid.Float64Range(1, 30).Draw(t, "bitsPerKey") // fractional too
		keys := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 40), 0, 500).Draw(t, "keys")
		p := filterblock.Bloom(bits)
		// Add reuses one buffer: the generator must not keep the key bytes.
		g := p.NewGenerator()
		var buf []byte
		for _, k := range keys {
			buf = append(buf[:0], k...)
			g.Add(buf)
			for i := range buf {
				buf[i] ^= 0x5a
			}
		}
		f := g.Generate(nil)
		if len(keys) > 0 && len(f) != wantLen(len(keys), bits) {
			t.Fatalf("%d keys at %g bits/key: filter is %d bytes, want %d", len(keys), bits, len(f), wantLen(len(keys), bits))
		}
		if int(f[len(f)-1]) != probes(t, p) {
			t.Fatalf("k byte %d, policy k %d", f[len(f)-1], probes(t, p))
		}
		for _, k := range keys {
			if !p.MayContain(f, k) || !filterblock.BloomMayContain(f, k) {
				t.Fatalf("false negative for %q (%d keys, %g bits/key)", k, len(keys), bits)
			}
		}
	})
}

// TestLayoutMatchesSpec compares generated filters with the documented
// layout, bit for bit, and checks that MayContain tests exactly those bits.
func TestLayoutMatchesSpec(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bits := rapid.Float64Range(1, 30).Draw(t, "bitsPerKey") // fractional too
		keys := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 20), 1, 300).Draw(t, "keys")
		p := filterblock.Bloom(bits)
		want := refFilter(keys, bits, probes(t, p))
		if diff := cmp.Diff(want, build(p, keys)); diff != "" {
			t.Fatalf("filter differs from the documented layout (-want +got):\n%s", diff)
		}
	})

	// With one key, clearing any one of its bits makes it absent.
	key := []byte("the only key")
	p := filterblock.Bloom(10)
	f := build(p, [][]byte{key})
	set := 0
	for i := 0; i < len(f)-1; i++ {
		for b := 0; b < 8; b++ {
			if f[i]&(1<<b) == 0 {
				continue
			}
			set++
			g := bytes.Clone(f)
			g[i] &^= 1 << b
			if filterblock.BloomMayContain(g, key) {
				t.Fatalf("key still matches with bit %d of byte %d cleared", b, i)
			}
		}
	}
	if set == 0 || set > probes(t, p) {
		t.Fatalf("one key set %d bits, want 1..%d", set, probes(t, p))
	}
}

func TestEmptyFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, bits := range []int{1, 10, 30} {
		p := filterblock.Bloom(float64(bits))
		f := p.NewGenerator().Generate(nil)
		if len(f) != 1 || int(f[0]) != probes(t, p) {
			t.Fatalf("empty filter at %d bits/key = %x, want just the k byte", bits, f)
		}
		var key [8]byte
		for i := 0; i < 1000; i++ {
			binary.LittleEndian.PutUint64(key[:], r.Uint64())
			if p.MayContain(f, key[:]) || p.MayContain(f, key[:i%8]) {
				t.Fatalf("empty filter matches %x", key)
			}
		}
	}
	// Zero lines with any valid k match nothing.
	for k := 1; k <= 30; k++ {
		if filterblock.BloomMayContain([]byte{byte(k)}, []byte("x")) {
			t.Fatalf("zero-line filter with k=%d matches", k)
		}
	}
}

func TestMalformedFilterMatchesEverything(t *testing.T) {
	good := build(filterblock.Bloom(10), [][]byte{[]byte("a"), []byte("b")})
	withK := func(k byte) []byte {
		f := bytes.Clone(good)
		for i := range f {
			f[i] = 0 // no bit set: a well-formed filter would match nothing
		}
		f[len(f)-1] = k
		return f
	}
	cases := map[string][]byte{
		"nil":           nil,
		"empty":         {},
		"2 bytes":       {0, 7},
		"64 bytes":      make([]byte, 64),
		"66 bytes":      append(make([]byte, 65), 7),
		"130 bytes":     append(make([]byte, 129), 7),
		"good minus 1":  good[:len(good)-1],
		"good plus 1":   append(bytes.Clone(good), 7),
		"k=0":           withK(0),
		"k=31":          withK(31),
		"k=255":         withK(255),
		"k=0 no lines":  {0},
		"k=31 no lines": {31},
	}
	r := rand.New(rand.NewPCG(1, 1))
	p := filterblock.Bloom(10)
	for name, f := range cases {
		for i := 0; i < 200; i++ {
			key := binary.LittleEndian.AppendUint64(nil, r.Uint64())
			if !filterblock.BloomMayContain(f, key) || !p.MayContain(f, key) {
				t.Fatalf("malformed filter %q rejects %x", name, key)
			}
		}
	}
	// k=30 is the largest valid probe count: an all-zero filter with it
	// matches nothing.
	if filterblock.BloomMayContain(withK(30), []byte("a")) {
		t.Fatalf("all-zero filter with k=30 matches")
	}
}

func TestGenerateResetsAndAppends(t *testing.T) {
	p := filterblock.Bloom(10)
	var keys [][]byte
	for i := 0; i < 1000; i++ {
		keys = append(keys, []byte(fmt.Sprintf("key-%d", i)))
	}
	g := p.NewGenerator()
	for _, k := range keys {
		g.Add(k)
	}
	first := g.Generate(nil)

	// Nothing added since: the empty filter.
	second := g.Generate(nil)
	if len(second) != 1 {
		t.Fatalf("second Generate gave %d bytes, want the 1-byte empty filter", len(second))
	}
	for _, k := range keys {
		if p.MayContain(second, k) {
			t.Fatalf("filter from a reset generator matches %q", k)
		}
	}

	// Appending after a prefix, into a buffer whose spare capacity holds
	// garbage: the prefix is kept and the filter is the same.
	dst := make([]byte, 5, 1<<16)
	for i := range dst[:cap(dst)] {
		dst[:cap(dst)][i] = 0xaa
	}
	copy(dst, "hello")
	for _, k := range keys {
		g.Add(k)
	}
	out := g.Generate(dst)
	if string(out[:5]) != "hello" {
		t.Fatalf("Generate changed dst's prefix to %q", out[:5])
	}
	if diff := cmp.Diff(first, out[5:]); diff != "" {
		t.Fatalf("filter appended to dst differs (-want +got):\n%s", diff)
	}
	// A generator from the same policy gives the same filter.
	if diff := cmp.Diff(first, build(p, keys)); diff != "" {
		t.Fatalf("second generator differs (-want +got):\n%s", diff)
	}
}

func TestPolicy(t *testing.T) {
	p := filterblock.Bloom(12)
	if p.Name() != filterblock.BloomName || filterblock.BloomName != "sstkit.CacheLocalBloom.xxh64" {
		t.Fatalf("Name() = %q, BloomName = %q", p.Name(), filterblock.BloomName)
	}
	if s, ok := p.(filterblock.Sized); !ok || s.BitsPerKey() != 12 {
		t.Fatalf("Bloom(12) is not Sized at 12 bits/key")
	}
	for _, bits := range []float64{0, -1, -100, 0.999, math.NaN()} {
		p := filterblock.Bloom(bits)
		if p.(filterblock.Sized).BitsPerKey() != 10 || probes(t, p) != probes(t, filterblock.Bloom(10)) {
			t.Errorf("Bloom(%g) is not the 10 bits/key default", bits)
		}
	}
	if s := fmt.Sprint(filterblock.Bloom(10)); !strings.Contains(s, filterblock.BloomName) || !strings.Contains(s, "k=7") {
		t.Errorf("String() = %q", s)
	}
}

// TestProbeCount checks that k minimises the cache-local false positive
// rate (7 at 10 bits per key, as documented) and stays within the range
// MayContain accepts.
func TestProbeCount(t *testing.T) {
	if k := probes(t, filterblock.Bloom(10)); k != 7 {
		t.Errorf("k at 10 bits/key = %d, want 7", k)
	}
	for bits := 1; bits <= 40; bits++ {
		k := probes(t, filterblock.Bloom(float64(bits)))
		if k < 1 || k > 30 {
			t.Fatalf("k = %d at %d bits/key is outside 1..30", k, bits)
		}
		best := filterblock.CacheLocalFPR(float64(bits), k)
		for j := 1; j <= 16; j++ {
			if r := filterblock.CacheLocalFPR(float64(bits), j); r < best {
				t.Errorf("%d bits/key: k=%d gives %.6g, but k=%d gives %.6g", bits, k, best, j, r)
			}
		}
	}
}

func TestMayContainNoAllocs(t *testing.T) {
	p := filterblock.Bloom(10)
	var keys [][]byte
	for i := 0; i < 100; i++ {
		keys = append(keys, []byte(fmt.Sprint(i)))
	}
	f := build(p, keys)
	miss := []byte("absent key")
	if n := testing.AllocsPerRun(100, func() {
		filterblock.BloomMayContain(f, keys[3])
		filterblock.BloomMayContain(f, miss)
	}); n != 0 {
		t.Errorf("BloomMayContain: %v allocs per call", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		p.MayContain(f, keys[3])
		p.MayContain(f, miss)
	}); n != 0 {
		t.Errorf("Policy.MayContain: %v allocs per call", n)
	}
}

// TestBloomProberAgrees checks that a BloomProber answers exactly as
// BloomMayContainHash does, on filters of many sizes and on malformed
// ones (a bad length, a probe count of 0 or over 30, no lines).
func TestBloomProberAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var filter []byte
		if rapid.Bool().Draw(t, "built") {
			g := filterblock.Bloom(rapid.Float64Range(1, 20).Draw(t, "bitsPerKey")).NewGenerator().(filterblock.HashAdder)
			for _, h := range rapid.SliceOfN(rapid.Uint64(), 0, 300).Draw(t, "keys") {
				g.AddHash(h)
			}
			filter = g.(filterblock.Generator).Generate(nil)
		} else {
			filter = rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "raw")
		}
		p := filterblock.NewBloomProber(filter)
		for _, h := range rapid.SliceOfN(rapid.Uint64(), 1, 50).Draw(t, "probes") {
			if got, want := p.MayContainHash(h), filterblock.BloomMayContainHash(filter, h); got != want {
				t.Fatalf("hash %#x: prober %v, BloomMayContainHash %v (filter of %d bytes)", h, got, want, len(filter))
			}
		}
	})
}

// TestBloomFractional: Bloom takes fractional bits per key, as BloomFPR
// chooses them, and BloomFPR's policy is Bloom at the size it chose.
func TestBloomFractional(t *testing.T) {
	fpr := filterblock.BloomFPR(0.01)
	bpk := fpr.(filterblock.Sized).BitsPerKey()
	if bpk < 9.85 || bpk > 9.95 || bpk == math.Trunc(bpk) {
		t.Fatalf("BloomFPR(0.01) at %g bits/key, want about 9.9 as documented", bpk)
	}
	p := filterblock.Bloom(bpk)
	if got := p.(filterblock.Sized).BitsPerKey(); got != bpk || probes(t, p) != probes(t, fpr) {
		t.Fatalf("Bloom(%g): %g bits/key, k=%d; BloomFPR's k=%d", bpk, got, probes(t, p), probes(t, fpr))
	}
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(i)*7919)
	}
	f := build(p, keys)
	if !bytes.Equal(f, build(fpr, keys)) || len(f) != wantLen(len(keys), bpk) {
		t.Fatalf("Bloom(%g) and BloomFPR(0.01) filters differ, or %d bytes, want %d", bpk, len(f), wantLen(len(keys), bpk))
	}
	// Between two integer sizes, the filter is sized between them.
	if lo, hi := len(build(filterblock.Bloom(9), keys)), len(build(filterblock.Bloom(10), keys)); len(f) <= lo || len(f) > hi {
		t.Fatalf("filter at %g bits/key is %d bytes; at 9 and 10 bits/key %d and %d", bpk, len(f), lo, hi)
	}
	if s := filterblock.BloomFPR(math.NaN()).(filterblock.Sized).BitsPerKey(); s != 10 {
		t.Fatalf("BloomFPR(NaN) at %g bits/key, want 10", s)
	}
}

// TestAddHashesSameFilter checks that a Bloom generator fed runs of hashes
// (AddHashes, as a builder of a partitioned table does) builds the same
// filter, byte for byte, as one fed the same hashes one by one, in any
// split into runs and mixed with AddHash, and keys enough to take the
// prefetching path over many chunks.
func TestAddHashesSameFilter(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 100_000).Draw(t, "n")
		seed := rapid.Uint64().Draw(t, "seed")
		hs := make([]uint64, n)
		x := seed
		for i := range hs {
			x = x*6364136223846793005 + 1442695040888963407
			hs[i] = x ^ x>>29
		}
		policy := filterblock.Bloom(rapid.Float64Range(1, 20).Draw(t, "bitsPerKey"))
		one := policy.NewGenerator()
		for _, h := range hs {
			one.(filterblock.HashAdder).AddHash(h)
		}
		want := one.Generate(nil)
		runs := policy.NewGenerator()
		for rest := hs; len(rest) > 0; {
			k := rapid.IntRange(1, len(rest)).Draw(t, "run")
			if rapid.Bool().Draw(t, "single") {
				for _, h := range rest[:k] {
					runs.(filterblock.HashAdder).AddHash(h)
				}
			} else {
				runs.(filterblock.HashesAdder).AddHashes(rest[:k])
			}
			rest = rest[k:]
		}
		if got := runs.Generate(nil); !bytes.Equal(got, want) {
			t.Fatalf("filter from runs differs (%d vs %d bytes)", len(got), len(want))
		}
	})
}
