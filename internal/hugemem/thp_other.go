//go:build !linux

package hugemem

// Possible is false: huge pages are asked for only on Linux.
func Possible() bool { return false }

// Advise does nothing and reports false: huge pages are asked for only
// on Linux.
func Advise(b []byte, on bool) bool { return false }
