//go:build amd64 || arm64

package prefetch

import "unsafe"

// Line asks the CPU to start loading the cache line at p (PREFETCHT0 on
// amd64, PRFM PLDL1KEEP on arm64). Unlike a load, a prefetch does not
// hold up the instructions after it, and code that turns out not to need
// the line does not wait for it. It never faults, whatever p.
//
//go:noescape
func Line(p unsafe.Pointer)

// lines asks for the cache lines from p up to p+n-1 (n > 0 bytes): every
// 64 bytes from p, and the line of the last byte. One call for a run of
// lines, where a call of Line per line costs more than the prefetches.
//
//go:noescape
func lines(p unsafe.Pointer, n uintptr)
