package codec

// LongSeparatorKey is the length in bytes above which AppendSeparator
// shortens a key that LevelDB's rule would keep whole.
const LongSeparatorKey = 64

// AppendSeparator appends to dst a short key k with a <= k < b, for a < b in
// bytes.Compare order, and returns the extended slice. Like LevelDB's
// BytewiseComparator::FindShortestSeparator (util/comparator.cc): past the
// common prefix, if a's next byte can be incremented and stay below b's,
// the key is the common prefix plus that incremented byte; otherwise it is
// a. One exception: when a is longer than LongSeparatorKey and its byte
// after the common prefix is one below b's, k is a up to the first byte
// past that one that is not 0xff, incremented, if that is shorter than a;
// so k is at most the common prefix plus a few bytes, whatever a's length,
// except for an a whose tail is all 0xff bytes.
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
		// a[i]+1 == b[i]: LevelDB keeps a whole, which for a long key
		// costs the key a second time. Any key that keeps a[i] and is
		// above a's rest is below b: for a long a, past i, increment the
		// first byte that is not 0xff and drop the rest. Keys of up to
		// LongSeparatorKey bytes keep LevelDB's rule, and tables of them
		// their bytes.
		for j := i + 1; len(a) > LongSeparatorKey && j < len(a)-1; j++ {
			if a[j] != 0xff {
				dst = append(dst, a[:j]...)
				return append(dst, a[j]+1)
			}
		}
	}
	return append(dst, a...)
}

// AppendSuccessor appends to dst a short key k >= a and returns the
// extended slice. Like LevelDB's FindShortSuccessor: the first byte of a
// that is not 0xff is incremented and the rest dropped, so k is at most
// one byte longer than a's leading 0xff bytes; a key of only 0xff bytes is
// kept as is.
func AppendSuccessor(dst, a []byte) []byte {
	for i, c := range a {
		if c != 0xff {
			dst = append(dst, a[:i]...)
			return append(dst, c+1)
		}
	}
	return append(dst, a...)
}
