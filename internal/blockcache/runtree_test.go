package blockcache

import (
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// TestRunTreeFind checks runTree against a scan of the bitmap: after any
// sequence of holds and frees, find(from, k) is the first run of k free
// chunks starting at or after from, and longest the longest run.
func TestRunTreeFind(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Up to 600 words: four levels above the words, the last node of
		// each level short of children unless the words are a power of
		// the fanout.
		words := rapid.SampledFrom([]int{1, 2, 8, 9, 16, 17, 37, 64, 65, 512, 600}).Draw(t, "words")
		nchunks := rapid.IntRange(max(1, 64*(words-1)-63), 64*words).Draw(t, "nchunks")
		s := &shard{nchunks: nchunks}
		s.bits = make([]uint64, (nchunks+63)/64)
		if r := nchunks % 64; r != 0 {
			s.bits[len(s.bits)-1] = ^uint64(0) << r
		}
		s.runs = newRunTree(s.bits, nil)
		s.dirtyLo, s.dirtyHi = 0, -1
		for range rapid.IntRange(0, 60).Draw(t, "ops") {
			at := rapid.IntRange(0, nchunks-1).Draw(t, "at")
			n := rapid.IntRange(1, nchunks-at).Draw(t, "n")
			s.setBits(at, n, rapid.Bool().Draw(t, "hold"))

			from := rapid.IntRange(0, nchunks).Draw(t, "from")
			k := rapid.IntRange(1, nchunks).Draw(t, "k")
			if rapid.Bool().Draw(t, "flush") {
				s.flushRuns() // else the next ops widen or move the dirty range first
			} else {
				continue
			}
			if got, want := s.runs.find(from, k), scanRun(s, from, k); got != want {
				t.Fatalf("find(%d, %d) = %d, scan says %d", from, k, got, want)
			}
			if got, want := s.runs.longest(), longestRun(s); got != want {
				t.Fatalf("longest() = %d, scan says %d", got, want)
			}
		}
	})
}

func scanRun(s *shard, from, k int) int {
	run := 0
	for c := from; c < s.nchunks; c++ {
		if s.held(c) {
			run = 0
		} else if run++; run == k {
			return c + 1 - k
		}
	}
	return -1
}

func longestRun(s *shard) int {
	best, run := 0, 0
	for c := 0; c < s.nchunks; c++ {
		if s.held(c) {
			run = 0
		} else {
			run++
			best = max(best, run)
		}
	}
	return best
}

// TestRunAround checks shard.runAround, which steps a word at a time,
// against a chunk at a time.
func TestRunAround(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nchunks := rapid.IntRange(1, 64*5).Draw(t, "nchunks")
		s := &shard{nchunks: nchunks}
		s.bits = make([]uint64, (nchunks+63)/64)
		for w := range s.bits {
			s.bits[w] = rapid.SampledFrom([]uint64{0, ^uint64(0), rapid.Uint64().Draw(t, "word")}).Draw(t, "bits")
		}
		if r := nchunks % 64; r != 0 {
			s.bits[len(s.bits)-1] |= ^uint64(0) << r
		}
		at := rapid.IntRange(0, nchunks-1).Draw(t, "at")
		n := rapid.IntRange(0, nchunks-at).Draw(t, "n")
		k := rapid.IntRange(1, nchunks+1).Draw(t, "k")
		wantLo, wantHi := at, at+n
		for wantHi-wantLo < k && wantHi < nchunks && !s.held(wantHi) {
			wantHi++
		}
		for wantHi-wantLo < k && wantLo > 0 && !s.held(wantLo-1) {
			wantLo--
		}
		if lo, hi := s.runAround(at, n, k); lo != wantLo || hi != wantHi {
			t.Fatalf("runAround(%d, %d, %d) = [%d, %d), chunk by chunk [%d, %d)", at, n, k, lo, hi, wantLo, wantHi)
		}
	})
}

// TestNewRunTree checks newRunTree, which computes only the summaries
// over a new shard's last word and reads the others' zeros as free,
// against newRunTreeOf, which computes every summary.
func TestNewRunTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		words := rapid.SampledFrom([]int{1, 2, 7, 8, 9, 64, 65, 600, 4096}).Draw(t, "words")
		nchunks := rapid.IntRange(64*(words-1)+1, 64*words).Draw(t, "nchunks")
		bits := make([]uint64, words)
		if r := nchunks % 64; r != 0 {
			bits[len(bits)-1] = ^uint64(0) << r
		}
		var got runTree
		if rapid.Bool().Draw(t, "arena") {
			a := &arena{b: make([]byte, shardMetaBytes(nchunks))}
			bits2 := carve[uint64](a, words)
			copy(bits2, bits)
			got = newRunTree(bits2, a)
			if len(a.b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(got.levels[len(got.levels)-1]))) < uintptr(unsafe.Pointer(unsafe.SliceData(bits2))) {
				t.Fatalf("arena of %d bytes short: %d left", shardMetaBytes(nchunks), len(a.b))
			}
		} else {
			got = newRunTree(bits, nil)
		}
		want := newRunTreeOf(bits)
		if !slices.Equal(got.leaves, want.leaves) {
			t.Fatalf("leaves differ")
		}
		if len(got.levels) != len(want.levels) {
			t.Fatalf("%d levels, want %d", len(got.levels), len(want.levels))
		}
		for l := range want.levels {
			if !slices.Equal(got.levels[l], want.levels[l]) {
				t.Fatalf("level %d: %v, want %v", l+1, got.levels[l], want.levels[l])
			}
		}
		if got.longest() != nchunks {
			t.Fatalf("longest %d, want %d", got.longest(), nchunks)
		}
	})
}
