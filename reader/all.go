package reader

import "iter"

// All returns the entries within the iterator's bounds, in key order, for
// a range-over-func loop: each range over it starts with First and goes
// on with Next, as the loop
//
//	it := r.NewIter(&reader.IterOptions{LowerBound: lo, UpperBound: hi})
//	for k, v := range it.All() {
//		...
//	}
//	if err := it.Close(); err != nil {
//		return err // damage or a failed read ended the loop early
//	}
//
// shows. k and v are Key and Value: valid only until the loop's next
// iteration (the iterator's next move), and v may alias the file mapping,
// so copy them to keep them (bytes.Clone) and never write to them.
//
// An iter.Seq2 cannot return an error, so the error stays on the
// iterator, as bufio.Scanner and sql.Rows keep theirs: a loop that meets
// damage or a failed read ends early, and Err and Close report the error
// afterwards. Close, which the iterator needs anyway, is the one place to
// check. The loop leaves the iterator open, on the entry a break left it
// on or exhausted: it may seek again, or range over All again after
// SetBounds. Reader.All is the one-call form for a whole table.
func (it *Iterator) All() iter.Seq2[[]byte, []byte] {
	return func(yield func(k, v []byte) bool) {
		for ok := it.First(); ok; ok = it.Next() {
			if !yield(it.s.data.Key(), it.s.data.Value()) {
				return
			}
		}
	}
}

// All returns every entry of the table, in key order, for a
// range-over-func loop over the whole table, and reports the scan's
// error through errp:
//
//	var err error
//	for k, v := range r.All(&err) {
//		...
//	}
//	if err != nil {
//		return err // damage or a failed read ended the loop early
//	}
//
// Each range opens an iterator and closes it when the loop ends, by a
// break or a panic too, then stores the iterator's error (Iterator.Close)
// in *errp: nil when the loop saw every entry or was broken off without
// error. A Reader cannot keep a scan's error, as it serves many scans at
// once, so the caller lends it a place. errp must not be nil: All(nil)
// yields nothing, rather than a scan whose error nobody could see. k and
// v are valid only until the loop's next iteration, as with
// Iterator.All: copy them to keep them. For bounds, or a scan whose
// iterator is reused, range over Iterator.All instead.
func (r *Reader) All(errp *error) iter.Seq2[[]byte, []byte] {
	return func(yield func(k, v []byte) bool) {
		if errp == nil {
			return
		}
		it := r.NewIterator()
		defer func() { *errp = it.Close() }()
		for k, v := range it.All() {
			if !yield(k, v) {
				return
			}
		}
	}
}
