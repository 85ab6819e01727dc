package blockcache

import "math/bits"

// runTree indexes a shard's chunk bitmap by the free runs in it, so that
// finding a run of k free chunks costs O(log chunks) whatever the
// capacity and however fragmented the shard is. Scanning the bitmap for
// each block cost a third of a thrashing cache's time at 64 MiB, and a
// hundred times more at 4 GiB (BenchmarkInsertThrash).
//
// It is a tree over the bitmap's words (as for first-fit allocation, e.g.
// the "longest" array of buddy allocators) in which each node summarises
// the chunks it spans by the free chunks at its low end (pre), at its high
// end (suf) and in its longest free run (best). Level 0 summarises each
// word; each node above summarises fanout nodes of the level below, up to
// a single root. A binary tree was 16 levels deep over a 256 MiB shard,
// and at 4 GiB its lower levels missed the CPU cache on every insert; 8
// children to a node make it 6 levels, and a node's children lie side by
// side (the word summaries of one node in half a 64-byte line, the
// summaries of 8 nodes in two lines), so refreshing or searching a node
// costs a line or two, not a miss per level. 16 children (4 levels) were
// 3-7% slower: a node's refresh folds every child, so each level
// costs twice the work. The word summaries cost 4 bytes per 64 chunks and
// the levels above about 1.7 more: under 6 bytes per 4 KiB of capacity
// (0.14%).
type runTree struct {
	words  []uint64       // the shard's bitmap: bit c of word w is chunk 64w+c, 1 = held
	leaves []wordRuns     // level 0: the summary of each word
	levels [][]runSummary // levels 1 and up; the last holds the root alone
}

// fanout is the children of a node: 1<<fanoutLog.
const (
	fanoutLog = 3
	fanout    = 1 << fanoutLog
)

type runSummary struct{ pre, suf, best int32 }

// wordRuns summarises one word, whose runs fit a byte. The pad makes it 4
// bytes, so that a node's 8 word summaries never straddle a line.
type wordRuns struct{ pre, suf, best, _ uint8 }

func summarizeWord(held uint64) wordRuns {
	if held == 0 {
		return wordRuns{64, 64, 64, 0}
	}
	// The longest run of free chunks, a run at a time.
	best := 0
	for free := ^held; free != 0; {
		free >>= uint(bits.TrailingZeros64(free))
		run := bits.TrailingZeros64(^free)
		best = max(best, run)
		free >>= uint(run)
	}
	return wordRuns{uint8(bits.TrailingZeros64(held)), uint8(bits.LeadingZeros64(held)), uint8(best), 0}
}

func newRunTree(words []uint64) runTree {
	t := runTree{words: words, leaves: make([]wordRuns, len(words))}
	for w, held := range words {
		t.leaves[w] = summarizeWord(held)
	}
	// At least one level above the words, so that the root is a runSummary.
	for n := len(words); n > 1 || len(t.levels) == 0; {
		n = (n + fanout - 1) / fanout
		t.levels = append(t.levels, make([]runSummary, n))
		for i := range n {
			t.recompute(len(t.levels), i)
		}
	}
	return t
}

// span returns the chunks a node of level l covers.
func span(l int) int { return 64 << (fanoutLog * l) }

// summary returns node i of level l.
func (t *runTree) summary(l, i int) runSummary {
	if l == 0 {
		s := t.leaves[i]
		return runSummary{int32(s.pre), int32(s.suf), int32(s.best)}
	}
	return t.levels[l-1][i]
}

// children returns the first and end children of node i of level l >= 1,
// in level l-1. Only the last node of a level may have fewer than fanout:
// the missing ones would lie past the shard, so they count as held.
func (t *runTree) children(l, i int) (first, end int) {
	n := len(t.leaves)
	if l > 1 {
		n = len(t.levels[l-2])
	}
	return i * fanout, min(i*fanout+fanout, n)
}

// recompute refreshes node i of level l >= 1 from its children, and
// reports whether it changed.
func (t *runTree) recompute(l, i int) bool {
	first, end := t.children(l, i)
	f := fold{childSpan: int32(span(l - 1)), prefix: true}
	if l == 1 {
		for _, c := range t.leaves[first:end] {
			f.add(int32(c.pre), int32(c.suf), int32(c.best))
		}
	} else {
		for _, c := range t.levels[l-2][first:end] {
			f.add(c.pre, c.suf, c.best)
		}
	}
	if end-first < fanout { // missing children are held
		f.run = 0
	}
	n := runSummary{f.pre, f.run, f.best}
	nodes := t.levels[l-1]
	if nodes[i] == n {
		return false
	}
	nodes[i] = n
	return true
}

// fold sums up a node's children, low to high, each spanning childSpan chunks.
type fold struct {
	childSpan      int32
	pre, best, run int32 // run: the free chunks up to the end of the children so far
	prefix         bool  // every child so far is free
}

func (f *fold) add(pre, suf, best int32) {
	full := pre == f.childSpan
	if f.prefix {
		f.pre += pre
		f.prefix = full
	}
	f.best = max(f.best, best, f.run+pre)
	if full { // a free child extends the run, any other ends it
		f.run += suf
	} else {
		f.run = suf
	}
}

// update refreshes the summaries over words lo to hi, after they changed,
// stopping at the first level where none changed.
func (t *runTree) update(lo, hi int) {
	changed := false
	for w := lo; w <= hi; w++ {
		if s := summarizeWord(t.words[w]); s != t.leaves[w] {
			t.leaves[w] = s
			changed = true
		}
	}
	for l := 1; changed && l <= len(t.levels); l++ {
		lo, hi = lo/fanout, hi/fanout
		changed = false
		for i := lo; i <= hi; i++ {
			changed = t.recompute(l, i) || changed
		}
	}
}

// longest returns the longest free run anywhere, in chunks.
func (t *runTree) longest() int { return int(t.levels[len(t.levels)-1][0].best) }

// find returns the first chunk of the first run of k free chunks that
// starts at or after chunk from, or -1.
func (t *runTree) find(from, k int) int {
	carry := 0
	return t.findIn(len(t.levels), 0, from, k, &carry)
}

// findIn searches node i of level l, which spans chunks [lo, lo+span(l)).
// carry counts the free chunks, all at or after from, that run up to lo:
// a run may start there and end in node i.
func (t *runTree) findIn(l, i, from, k int, carry *int) int {
	sp := span(l)
	lo := i * sp
	hi := lo + sp
	if hi <= from {
		return -1
	}
	if lo >= from {
		s := t.summary(l, i)
		if *carry+int(s.pre) >= k {
			return lo - *carry
		}
		if int(s.best) < k { // no run long enough starts inside
			if int(s.pre) == sp {
				*carry += sp
			} else {
				*carry = int(s.suf)
			}
			return -1
		}
	}
	if l == 0 { // a word: scan it a run at a time
		c := max(lo, from)
		held := t.words[i] >> uint(c-lo)
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
	// Children wholly before from are skipped; the one holding from is
	// searched from there, the others whole.
	first, end := t.children(l, i)
	for j := max(first, from/span(l-1)); j < end; j++ {
		if at := t.findIn(l-1, j, from, k, carry); at >= 0 {
			return at
		}
	}
	return -1 // missing children are held: nothing runs on past them
}
