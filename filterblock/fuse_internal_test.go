package filterblock

import (
	"errors"
	"testing"

	"github.com/FastFilter/xorfilter"
	"github.com/cespare/xxhash/v2"
)

// failFuse makes the construction fail its first n runs, counting runs.
func failFuse(t *testing.T, n int) *int {
	runs := new(int)
	orig := buildFuse
	buildFuse = func(b *xorfilter.BinaryFuseBuilder, keys []uint64) (xorfilter.BinaryFuse[uint8], error) {
		*runs++
		if *runs <= n {
			return xorfilter.BinaryFuse[uint8]{}, errors.New("injected failure")
		}
		return orig(b, keys)
	}
	t.Cleanup(func() { buildFuse = orig })
	return runs
}

func fuseKeys(n int) [][]byte {
	var keys [][]byte
	for i := range n {
		keys = append(keys, []byte{byte(i), byte(i >> 8), 'k'})
	}
	return keys
}

// TestFuseRetry: a failed run is retried with another seed sequence, and
// the stored seed accounts for it, so every key still matches.
func TestFuseRetry(t *testing.T) {
	for fails := 1; fails < FuseAttempts; fails++ {
		runs := failFuse(t, fails)
		g := BinaryFuse8().NewGenerator()
		keys := fuseKeys(5000)
		for _, k := range keys {
			g.Add(k)
		}
		f := g.Generate(nil)
		if *runs != fails+1 {
			t.Fatalf("%d failures: %d runs", fails, *runs)
		}
		if used := g.(FallbackReporter).GeneratedPolicy(); used.Name() != BinaryFuse8Name {
			t.Fatalf("%d failures: fell back to %s", fails, used.Name())
		}
		for _, k := range keys {
			if !FuseMayContain(f, k) {
				t.Fatalf("%d failures: false negative for %q", fails, k)
			}
		}
		fp := 0
		for i := range 100000 {
			if FuseMayContainHash(f, xxhash.Sum64([]byte{byte(i), byte(i >> 8), byte(i >> 16), 'x'})) {
				fp++
			}
		}
		if fp > 600 { // 2^-8 of 100000 is 391
			t.Fatalf("%d failures: %d false positives in 100000", fails, fp)
		}
		buildFuse = xorfilter.BuildBinaryFuse[uint8]
	}
}

// TestFuseFallback: after FuseAttempts failed runs the generator builds a
// Bloom(10) filter of the same keys and reports Bloom as its policy.
func TestFuseFallback(t *testing.T) {
	runs := failFuse(t, FuseAttempts)
	g := BinaryFuse8().NewGenerator()
	keys := fuseKeys(3000)
	for _, k := range keys {
		g.(HashAdder).AddHash(xxhash.Sum64(k))
	}
	f := g.Generate(nil)
	if *runs != FuseAttempts {
		t.Fatalf("%d runs, want %d", *runs, FuseAttempts)
	}
	used := g.(FallbackReporter).GeneratedPolicy()
	if used.Name() != BloomName || used.(Sized).BitsPerKey() != 10 {
		t.Fatalf("fell back to %s", used.Name())
	}
	if len(f) != (3000*10+511)/512*64+1 {
		t.Fatalf("fallback filter of %d bytes", len(f))
	}
	for _, k := range keys {
		if !BloomMayContain(f, k) {
			t.Fatalf("fallback filter lacks %q", k)
		}
	}
	// The next filter is a fuse filter again.
	g.Add([]byte("x"))
	g.Generate(nil)
	if used := g.(FallbackReporter).GeneratedPolicy(); used.Name() != BinaryFuse8Name {
		t.Fatalf("after a fallback, the next filter reports %s", used.Name())
	}
}
