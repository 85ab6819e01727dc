package blockcache

import (
	"math/bits"
	"unsafe"
)

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
//
// Summaries are stored as what their runs fall short of the node's span
// (wordRuns, nodeRuns), so that zeroed memory reads as wholly free: a new
// shard's tree is built by computing only the nodes over its end
// (newRunTree), not by writing every summary.
type runTree struct {
	words  []uint64     // the shard's bitmap: bit c of word w is chunk 64w+c, 1 = held
	leaves []wordRuns   // level 0: the summary of each word
	levels [][]nodeRuns // levels 1 and up; the last holds the root alone
}

// fanout is the children of a node: 1<<fanoutLog.
const (
	fanoutLog = 3
	fanout    = 1 << fanoutLog
)

// runSummary summarises a node: the free chunks at its low end (pre), at
// its high end (suf) and in its longest free run (best).
type runSummary struct{ pre, suf, best int32 }

// nodeRuns is a node's runSummary as stored: span minus each count, so
// that the zero value is a wholly free node.
type nodeRuns struct{ pre, suf, best int32 }

func encodeNode(s runSummary, span int32) nodeRuns {
	return nodeRuns{span - s.pre, span - s.suf, span - s.best}
}

func (n nodeRuns) decode(span int32) runSummary {
	return runSummary{span - n.pre, span - n.suf, span - n.best}
}

// wordRuns summarises one word, whose runs fit a byte, as stored: 64
// minus each count, so that the zero value is a wholly free word. The pad
// makes it 4 bytes, so that a node's 8 word summaries never straddle a
// line.
type wordRuns struct{ pre, suf, best, _ uint8 }

func (w wordRuns) decode() (pre, suf, best int32) {
	return 64 - int32(w.pre), 64 - int32(w.suf), 64 - int32(w.best)
}

func summarizeWord(held uint64) wordRuns {
	if held == 0 {
		return wordRuns{}
	}
	// The longest run of free chunks, a run at a time.
	best := 0
	for free := ^held; free != 0; {
		free >>= uint(bits.TrailingZeros64(free))
		run := bits.TrailingZeros64(^free)
		best = max(best, run)
		free >>= uint(run)
	}
	return wordRuns{uint8(64 - bits.TrailingZeros64(held)), uint8(64 - bits.LeadingZeros64(held)), uint8(64 - best), 0}
}

// newRunTree returns the tree of a new shard's bitmap, words, in which
// only the last word may hold chunks (those past the shard's end), its
// summaries taken from a (zeroed memory) or, nil, the Go heap. Zeroed
// summaries read as free, so only the nodes over the last word are
// computed: O(levels), not O(words), and the summaries' memory is not
// touched (a 256 MiB cache's 256 KiB of word summaries, say, faulted in
// page by page). Past a new shard, see newRunTreeOf.
func newRunTree(words []uint64, a *arena) runTree {
	t := runTree{words: words, leaves: carve[wordRuns](a, len(words))}
	// free: the last node of the level just built is wholly free, so its
	// zeros are right as they are. Nothing is written (or read, which
	// would fault the pages in as well) for a shard of a multiple of
	// 64 * fanout^levels chunks, as a 256 MiB cache's are.
	free := true
	if last := len(words) - 1; last >= 0 && words[last] != 0 {
		t.leaves[last] = summarizeWord(words[last])
		free = false
	}
	// At least one level above the words, so that the root is a runSummary.
	for n := len(words); n > 1 || len(t.levels) == 0; {
		children := n
		n = (n + fanout - 1) / fanout
		t.levels = append(t.levels, carve[nodeRuns](a, n))
		// The last node may have fewer children: the missing ones count
		// as held.
		if free = free && children%fanout == 0; !free && n > 0 { // n == 0: a shard of no chunks
			t.recompute(len(t.levels), n-1)
		}
	}
	return t
}

// shardMetaBytes bounds the memory a shard of nchunks chunks carves from
// its arena: its bitmap and run tree, each slice aligned.
func shardMetaBytes(nchunks int) int {
	w := (nchunks + 63) / 64
	b := 8*w + 8 + int(unsafe.Sizeof(wordRuns{}))*w + 8
	for n, levels := w, 0; n > 1 || levels == 0; levels++ { // as newRunTree
		n = (n + fanout - 1) / fanout
		b += int(unsafe.Sizeof(nodeRuns{}))*n + 8
	}
	return b
}

// arena hands out zeroed memory for a shard's bitmap and run tree from
// b, a part of the cache's mapping that holds nothing else: summaries and
// bits of zero mean free, so a new shard writes only those over its end.
type arena struct{ b []byte }

// carve returns n zeroed Ts (which hold no pointers) from a, or from the
// Go heap when a is nil or short.
func carve[T any](a *arena, n int) []T {
	var z T
	size, align := int(unsafe.Sizeof(z)), uintptr(unsafe.Alignof(z))
	if a != nil && n > 0 && len(a.b) > 0 {
		pad := int((align - uintptr(unsafe.Pointer(unsafe.SliceData(a.b)))%align) % align)
		if pad+n*size <= len(a.b) {
			s := unsafe.Slice((*T)(unsafe.Pointer(&a.b[pad])), n)
			a.b = a.b[pad+n*size:]
			return s
		}
	}
	return make([]T, n)
}

// newRunTreeOf returns the tree of any bitmap, computing every summary;
// for tests.
func newRunTreeOf(words []uint64) runTree {
	t := runTree{words: words, leaves: make([]wordRuns, len(words))}
	for w, held := range words {
		t.leaves[w] = summarizeWord(held)
	}
	for n := len(words); n > 1 || len(t.levels) == 0; {
		n = (n + fanout - 1) / fanout
		t.levels = append(t.levels, make([]nodeRuns, n))
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
		pre, suf, best := t.leaves[i].decode()
		return runSummary{pre, suf, best}
	}
	return t.levels[l-1][i].decode(int32(span(l)))
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
			f.add(c.decode())
		}
	} else {
		for _, c := range t.levels[l-2][first:end] {
			s := c.decode(f.childSpan)
			f.add(s.pre, s.suf, s.best)
		}
	}
	if end-first < fanout { // missing children are held
		f.run = 0
	}
	n := encodeNode(runSummary{f.pre, f.run, f.best}, int32(span(l)))
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
func (t *runTree) longest() int {
	l := len(t.levels)
	return int(t.levels[l-1][0].decode(int32(span(l))).best)
}

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
