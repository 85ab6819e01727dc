// Package prefetch asks the CPU to start loading cache lines before the
// code that needs them: a lookup or a build that knows the address of a
// line it will touch soon overlaps that line's cache miss with other
// work, and with other misses, instead of taking the misses one after
// another.
package prefetch

import "unsafe"

// Bytes starts loading into the cache the lines holding the first n bytes
// of b (at most 256 bytes), without waiting for them. It is a hint; it
// never faults and does nothing where unsupported.
func Bytes(b []byte, n int) {
	n = min(n, len(b), 256)
	if n <= 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	for off := 0; off < n; off += 64 {
		Line(unsafe.Add(p, off))
	}
	Line(unsafe.Add(p, n-1)) // the last line, if the steps skipped it
}
