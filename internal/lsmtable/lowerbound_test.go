package lsmtable

import (
	"math/rand"
	"sort"
	"testing"
)

func TestLowerBoundMatchesSearch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 300; n++ {
		fs := make([]uint64, n)
		for i := range fs {
			fs[i] = uint64(r.Intn(50))
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
		for f := uint64(0); f < 52; f++ {
			want := sort.Search(n, func(i int) bool { return fs[i] >= f })
			if got := lowerBound(fs, f); got != want {
				t.Fatalf("n %d f %d: %d, want %d", n, f, got, want)
			}
		}
	}
}
