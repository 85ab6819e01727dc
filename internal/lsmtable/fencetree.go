package lsmtable

import (
	"math"
	"math/bits"
	"unsafe"
)

// nodeKeys is a fence tree node's width: 8 fences, one 64-byte cache line.
const nodeKeys = 8

// fenceTree answers lower-bound searches over sorted fences touching one
// cache line per level: a static B+ tree of 8-fence nodes laid out level
// by level (the "S+ tree" of Sergey Slotin's "Static B-Trees",
// Algorithmica, en.algorithmica.org/hpc/data-structures/s-tree). A
// binary search of a table's 28,572 fences made 15 dependent loads, the
// last 6 to 8 of them cache misses; the tree makes 5, its upper levels
// (4 KiB for that table) staying in cache between searches.
//
// levels[0] is the fences, padded with MaxUint64 to a whole number of
// nodes; entry g of levels[k+1] is the last (largest) fence of node g of
// levels[k], so the first entry of a node at or above f leads to the one
// child node whose last fence is at or above f. Every level starts on a
// 64-byte boundary. The top level is one node.
type fenceTree struct {
	levels [][]uint64
	n      int    // fences, without the padding
	last   uint64 // the largest fence
}

// newFenceTree builds the tree over sorted fences; the slice itself is
// not kept.
func newFenceTree(fences []uint64) fenceTree {
	n := len(fences)
	if n == 0 {
		return fenceTree{}
	}
	sizes := []int{roundNode(n)}
	for sizes[len(sizes)-1] > nodeKeys {
		sizes = append(sizes, roundNode(sizes[len(sizes)-1]/nodeKeys))
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	// One allocation, its start moved to a cache line boundary.
	mem := make([]uint64, total+nodeKeys)
	off := int((64 - uintptr(unsafe.Pointer(&mem[0]))%64) % 64 / 8)
	mem = mem[off : off+total]
	t := fenceTree{levels: make([][]uint64, len(sizes)), n: n, last: fences[n-1]}
	// The upper levels first: the ones every search reads lie together.
	at := total
	for k, s := range sizes {
		at -= s
		t.levels[k] = mem[at : at+s : at+s]
	}
	leaves := t.levels[0]
	copy(leaves, fences)
	for i := n; i < len(leaves); i++ {
		leaves[i] = math.MaxUint64
	}
	for k := 1; k < len(sizes); k++ {
		below, level := t.levels[k-1], t.levels[k]
		for g := range level {
			if j := g*nodeKeys + nodeKeys - 1; j < len(below) {
				level[g] = below[j]
			} else {
				level[g] = math.MaxUint64
			}
		}
	}
	return t
}

// roundNode rounds n up to a whole number of nodes, at least one.
func roundNode(n int) int { return max(nodeKeys, (n+nodeKeys-1)/nodeKeys*nodeKeys) }

// fences returns the sorted fences, without the padding.
func (t *fenceTree) fences() []uint64 {
	if len(t.levels) == 0 {
		return nil
	}
	return t.levels[0][:t.n:t.n]
}

// lowerBound returns the index of the first fence at or above f, or the
// number of fences if none is.
func (t *fenceTree) lowerBound(f uint64) int {
	if t.n == 0 || f > t.last {
		return t.n
	}
	// Every level's last real entry is at or above f, so no search
	// below leads into the padding past it.
	top := len(t.levels) - 1
	g := below(t.levels[top][:nodeKeys], f)
	for k := top - 1; k >= 0; k-- {
		level := t.levels[k]
		g = g*nodeKeys + below(level[g*nodeKeys:g*nodeKeys+nodeKeys], f)
	}
	return min(g, t.n)
}

// below counts the entries of a node below f, without branches: one
// subtraction's borrow each, so that random keys cost no mispredictions.
func below(node []uint64, f uint64) int {
	node = node[:nodeKeys]
	_, b0 := bits.Sub64(node[0], f, 0)
	_, b1 := bits.Sub64(node[1], f, 0)
	_, b2 := bits.Sub64(node[2], f, 0)
	_, b3 := bits.Sub64(node[3], f, 0)
	_, b4 := bits.Sub64(node[4], f, 0)
	_, b5 := bits.Sub64(node[5], f, 0)
	_, b6 := bits.Sub64(node[6], f, 0)
	_, b7 := bits.Sub64(node[7], f, 0)
	return int(b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7)
}
