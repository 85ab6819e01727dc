package format

// AppendSeparator appends to dst a short key k with a <= k < b, for a < b in
// bytes.Compare order, and returns the extended slice. Like LevelDB's
// BytewiseComparator::FindShortestSeparator (util/comparator.cc): past the
// common prefix, if a's next byte can be incremented and stay below b's,
// the key is the common prefix plus that incremented byte; otherwise it is a.
func AppendSeparator(dst, a, b []byte) []byte {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i < n {
		if c := a[i]; c < 0xff && c+1 < b[i] {
			dst = append(dst, a[:i]...)
			return append(dst, c+1)
		}
	}
	return append(dst, a...)
}

// AppendSuccessor appends to dst a short key k >= a and returns the
// extended slice. Like LevelDB's FindShortSuccessor: the first byte of a
// that is not 0xff is incremented and the rest dropped; a key of only 0xff
// bytes is kept as is.
func AppendSuccessor(dst, a []byte) []byte {
	for i, c := range a {
		if c != 0xff {
			dst = append(dst, a[:i]...)
			return append(dst, c+1)
		}
	}
	return append(dst, a...)
}
