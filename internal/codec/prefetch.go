package codec

import "unsafe"

// Prefetch starts loading into the cache the lines holding the first n
// bytes of b (at most 256 bytes), without waiting for them: a lookup that
// knows where an entry starts overlaps the misses on all of its lines
// instead of taking them one after another as it parses. It is a hint; it
// never faults and does nothing where unsupported.
func Prefetch(b []byte, n int) {
	n = min(n, len(b), 256)
	if n <= 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	for off := 0; off < n; off += 64 {
		prefetch(unsafe.Add(p, off))
	}
	prefetch(unsafe.Add(p, n-1)) // the last line, if the steps skipped it
}

// PrefetchLine starts loading the cache line holding p, as Prefetch does
// for a slice: for a structure's fields, a line at a time.
func PrefetchLine(p unsafe.Pointer) { prefetch(p) }
