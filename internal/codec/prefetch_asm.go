//go:build amd64 || arm64

package codec

import "unsafe"

// prefetch asks the CPU to start loading the cache line at p (PREFETCHT0
// on amd64, PRFM PLDL1KEEP on arm64). Unlike a load, a prefetch does not
// hold up the instructions after it, so a lookup can overlap the cache
// miss with other work, and a lookup that turns out not to need the line
// does not wait for it. It never faults.
//
//go:noescape
func prefetch(p unsafe.Pointer)
