package reader

import "bytes"

// IterOptions configure an Iterator (Reader.NewIter). As in Pebble, the
// lower bound is inclusive and the upper bound exclusive: the iterator
// shows only keys k with LowerBound <= k < UpperBound in bytes.Compare
// order. A nil bound is no bound; an empty, non-nil LowerBound admits
// every key, an empty, non-nil UpperBound none. NewIter copies the
// bounds.
type IterOptions struct {
	LowerBound []byte // inclusive; nil: from the first key
	UpperBound []byte // exclusive; nil: to the last key
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
