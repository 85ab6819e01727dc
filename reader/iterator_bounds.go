package reader

import "bytes"

// IterOptions configure an Iterator (Reader.NewIter). As in Pebble, the
// lower bound is inclusive and the upper bound exclusive: the iterator
// shows only keys k with LowerBound <= k < UpperBound in bytes.Compare
// order. A nil bound is no bound; an empty, non-nil LowerBound admits
// every key, an empty, non-nil UpperBound none. NewIter copies the
// bounds; Iterator.SetBounds changes them.
type IterOptions struct {
	LowerBound []byte // inclusive; nil: from the first key
	UpperBound []byte // exclusive; nil: to the last key
}

// SetBounds changes the iterator's bounds to lower (inclusive) and upper
// (exclusive), with the meaning of IterOptions' (nil: unbounded), as
// Pebble's Iterator.SetBounds does: one iterator serves queries with
// bounds of their own, where a new iterator per query costs its setup and
// allocations. The iterator is unpositioned afterwards, and out of prefix
// iteration mode: Next and Prev return false until First, Last or a seek
// positions it within the new bounds.
//
// SetBounds copies lower and upper into buffers the iterator keeps, so the
// caller may change or reuse them as soon as it returns; it allocates
// nothing once the buffers have room for the bounds. An error the
// iterator has met stays (Err). On a closed iterator it is harmless:
// every move still returns false.
func (it *Iterator) SetBounds(lower, upper []byte) {
	it.lower = setBound(&it.lowerBuf, lower)
	it.upper = setBound(&it.upperBuf, upper)
	it.loaded = false
	it.inPrefix = false
}

// setBound copies b into *buf, reused, and returns the copy; nil for a nil
// b (no bound), and an empty, non-nil slice for an empty b.
func setBound(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	*buf = append((*buf)[:0], b...)
	if *buf == nil {
		*buf = []byte{} // an empty bound is a bound; zero-size, so no allocation
	}
	return *buf
}

// checkUpper ends a forward move that reached the upper bound or, in
// prefix iteration mode, left the prefix.
func (it *Iterator) checkUpper(ok bool) bool {
	if ok && it.upper != nil && bytes.Compare(it.s.data.Key(), it.upper) >= 0 {
		ok = false
	}
	if ok && it.inPrefix && !hasPrefix(it.r.splitter, it.s.data.Key(), it.prefix) {
		ok = false
	}
	if !ok {
		it.loaded = false
	}
	return ok
}

// checkLower ends a backward move that went below the lower bound or, in
// prefix iteration mode, left the prefix.
func (it *Iterator) checkLower(ok bool) bool {
	if ok && it.lower != nil && bytes.Compare(it.s.data.Key(), it.lower) < 0 {
		ok = false
	}
	if ok && it.inPrefix && !hasPrefix(it.r.splitter, it.s.data.Key(), it.prefix) {
		ok = false
	}
	if !ok {
		it.loaded = false
	}
	return ok
}
