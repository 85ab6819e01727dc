package lsmtable

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"unsafe"
)

// TestFenceTreeMatchesSearch checks the fence tree's lower bound against
// sort.Search at every size up to four levels, with ties, fences of 0 and
// MaxUint64, and targets below, between, on and above the fences.
func TestFenceTreeMatchesSearch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	sizes := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 72, 73, 511, 512, 513, 4095, 4096, 4097}
	for n := 0; n < 200; n++ {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		for _, spread := range []uint64{3, 50, math.MaxUint64} {
			fs := make([]uint64, n)
			for i := range fs {
				if spread == math.MaxUint64 {
					fs[i] = r.Uint64()
				} else {
					fs[i] = uint64(r.Int63n(int64(spread)))
				}
			}
			if n > 2 && spread != 3 {
				fs[0], fs[1] = 0, math.MaxUint64
			}
			sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
			tree := newFenceTree(fs)
			if got := tree.fences(); len(got) != n || (n > 0 && &got[0] == &fs[0]) {
				t.Fatalf("n %d: fences() has %d entries (or shares the input)", n, len(got))
			}
			for k, level := range tree.levels {
				if uintptr(unsafe.Pointer(&level[0]))%64 != 0 || len(level)%nodeKeys != 0 {
					t.Fatalf("n %d: level %d is not whole aligned nodes", n, k)
				}
			}
			targets := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1}
			for _, f := range fs {
				targets = append(targets, f, f-1, f+1)
			}
			for range 50 {
				targets = append(targets, r.Uint64(), uint64(r.Int63n(int64(min(spread, math.MaxInt64-2))+2)))
			}
			for _, f := range targets {
				want := sort.Search(n, func(i int) bool { return fs[i] >= f })
				if got := tree.lowerBound(f); got != want {
					t.Fatalf("n %d spread %d f %d: %d, want %d", n, spread, f, got, want)
				}
			}
		}
	}
}
