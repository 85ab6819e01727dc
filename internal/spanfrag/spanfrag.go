// Package spanfrag cuts spans that may overlap into fragments that do
// not: the step between spans as a writer or a memtable takes them (any
// order, overlapping) and spans as a table's span block and a merge level
// give them (sorted, disjoint, each listing the values over it). Package
// bulk fragments the spans of a build with it, and package merge a
// memtable's.
package spanfrag

import (
	"bytes"
	"slices"
)

// Fragment is [Start, End) and the values of every span covering it, in
// the order the spans were given.
type Fragment struct {
	Start, End []byte
	Values     [][]byte
}

// Cut returns the fragments of spans, in key order: the key space is cut
// wherever a span starts or ends, and each piece that some span covers is
// a fragment listing the values of the spans covering it (appended by
// values, span by span in the order of spans). bounds gives a span's
// [start, end); a span whose start is not below its end covers nothing.
// Cut neither modifies spans nor keeps them; the fragments' bounds and
// values alias the spans' bytes.
//
// It is a sweep over the sorted, distinct span bounds, as Pebble's
// keyspan.Fragmenter and the builder's span block do, in O(n log n + f·a)
// for n spans, f fragments and a spans over a fragment.
func Cut[S any](spans []S, bounds func(*S) (start, end []byte), values func(dst [][]byte, s *S) [][]byte) []Fragment {
	if len(spans) == 0 {
		return nil
	}
	start := func(i int32) []byte { s, _ := bounds(&spans[i]); return s }
	end := func(i int32) []byte { _, e := bounds(&spans[i]); return e }
	// The spans by start, ties in the order given, and every bound.
	order := make([]int32, 0, len(spans))
	bs := make([][]byte, 0, 2*len(spans))
	for i := range spans {
		s, e := bounds(&spans[i])
		if bytes.Compare(s, e) >= 0 {
			continue
		}
		order = append(order, int32(i))
		bs = append(bs, s, e)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return bytes.Compare(start(a), start(b)) })
	slices.SortFunc(bs, bytes.Compare)
	bs = slices.CompactFunc(bs, bytes.Equal)

	var out []Fragment
	var active []int32 // the spans covering the current bound, by index: the order given
	next := 0          // order[next:] start at or above the current bound
	for k := 0; k+1 < len(bs); k++ {
		x := bs[k]
		active = slices.DeleteFunc(active, func(i int32) bool { return bytes.Compare(end(i), x) <= 0 })
		// Every start is a bound, so the spans starting at x are next.
		for ; next < len(order) && bytes.Equal(start(order[next]), x); next++ {
			j, _ := slices.BinarySearch(active, order[next])
			active = slices.Insert(active, j, order[next])
		}
		if len(active) == 0 {
			continue
		}
		f := Fragment{Start: x, End: bs[k+1]}
		for _, i := range active {
			f.Values = values(f.Values, &spans[i])
		}
		out = append(out, f)
	}
	return out
}
