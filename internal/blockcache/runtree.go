package blockcache

import "math/bits"

// runTree indexes a shard's chunk bitmap by the free runs in it, so that
// finding a run of k free chunks costs O(log chunks) whatever the
// capacity and however fragmented the shard is. Scanning the bitmap for
// each block cost a third of a thrashing cache's time at 64 MiB, and a
// hundred times more at 4 GiB (BenchmarkInsertThrash).
//
// It is a segment tree over the bitmap's words (as for first-fit
// allocation, e.g. the "longest" array of buddy allocators): node i (1 is
// the root, 2i and 2i+1 its halves) summarises the chunks it spans by the
// free chunks at its low end (pre), at its high end (suf) and in its
// longest free run (best). Leaves are the bitmap's words themselves,
// summarised on demand, so the tree costs 12 bytes per 64 chunks (0.3% of
// the capacity).
type runTree struct {
	words []uint64     // the shard's bitmap: bit c of word w is chunk 64w+c, 1 = held
	size  int          // leaves: a power of two >= len(words); leaves past the bitmap are held
	nodes []runSummary // internal nodes 1 .. size-1, one load each
}

type runSummary struct{ pre, suf, best int32 }

func newRunTree(words []uint64) runTree {
	size := 1
	for size < len(words) {
		size *= 2
	}
	t := runTree{words: words, size: size, nodes: make([]runSummary, size)}
	for i := size - 1; i >= 1; i-- {
		t.recompute(i, int32(t.span(i)/2))
	}
	return t
}

// span returns the chunks node i covers.
func (t *runTree) span(i int) int { return 64 * t.size >> (bits.Len(uint(i)) - 1) }

func (t *runTree) summary(i int) runSummary {
	if i < t.size {
		return t.nodes[i]
	}
	w := i - t.size
	if w >= len(t.words) {
		return runSummary{}
	}
	held := t.words[w]
	if held == 0 {
		return runSummary{64, 64, 64}
	}
	// The longest run of free chunks, a run at a time.
	best := 0
	for free := ^held; free != 0; {
		free >>= uint(bits.TrailingZeros64(free))
		run := bits.TrailingZeros64(^free)
		best = max(best, run)
		free >>= uint(run)
	}
	return runSummary{int32(bits.TrailingZeros64(held)), int32(bits.LeadingZeros64(held)), int32(best)}
}

// recompute refreshes node i, whose halves span half chunks each, and
// reports whether it changed.
func (t *runTree) recompute(i int, half int32) bool {
	l, r := t.summary(2*i), t.summary(2*i+1)
	pre, suf := l.pre, r.suf
	if l.pre == half {
		pre = half + r.pre
	}
	if r.suf == half {
		suf = half + l.suf
	}
	n := runSummary{pre, suf, max(l.best, r.best, l.suf+r.pre)}
	if t.nodes[i] == n {
		return false
	}
	t.nodes[i] = n
	return true
}

// update refreshes the nodes over words lo to hi, after they changed,
// stopping at the first level where no node changed.
func (t *runTree) update(lo, hi int) {
	lo, hi = (t.size+lo)/2, (t.size+hi)/2
	for half := int32(64); lo >= 1; half *= 2 {
		changed := false
		for i := lo; i <= hi; i++ {
			changed = t.recompute(i, half) || changed
		}
		if !changed {
			return
		}
		lo, hi = lo/2, hi/2
	}
}

// longest returns the longest free run anywhere, in chunks.
func (t *runTree) longest() int { return int(t.summary(1).best) }

// find returns the first chunk of the first run of k free chunks that
// starts at or after chunk from, or -1.
func (t *runTree) find(from, k int) int {
	carry := 0
	return t.findIn(1, 0, 64*t.size, from, k, &carry)
}

// findIn searches node i, which spans chunks [lo, lo+span). carry counts
// the free chunks, all at or after from, that run up to lo: a run may
// start there and end in node i.
func (t *runTree) findIn(i, lo, span, from, k int, carry *int) int {
	hi := lo + span
	if hi <= from {
		return -1
	}
	if lo >= from {
		s := t.summary(i)
		if *carry+int(s.pre) >= k {
			return lo - *carry
		}
		if int(s.best) < k { // no run long enough starts inside
			if int(s.pre) == span {
				*carry += span
			} else {
				*carry = int(s.suf)
			}
			return -1
		}
	}
	if i >= t.size { // a leaf: scan its word a run at a time
		c := max(lo, from)
		held := t.words[i-t.size] >> uint(c-lo)
		for c < hi {
			free := min(bits.TrailingZeros64(held), hi-c) // free chunks from c
			if *carry+free >= k {
				return c - *carry
			}
			if c+free == hi {
				*carry += free
				return -1
			}
			c += free
			held >>= uint(free)
			n := bits.TrailingZeros64(^held) // held chunks from c
			c += n
			held >>= uint(n)
			*carry = 0
		}
		return -1
	}
	if at := t.findIn(2*i, lo, span/2, from, k, carry); at >= 0 {
		return at
	}
	return t.findIn(2*i+1, lo+span/2, span/2, from, k, carry)
}
