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
	lines(unsafe.Pointer(unsafe.SliceData(b)), uintptr(n))
}

// Range starts loading the lines holding b[from:to], clipped to b, in one
// call: for runs of more than a line or two, cheaper than Line per line.
// It is a hint; it never faults and does nothing where unsupported.
func Range(b []byte, from, to int) {
	from, to = max(from, 0), min(to, len(b))
	if to <= from {
		return
	}
	lines(unsafe.Pointer(&b[from]), uintptr(to-from))
}
