package prefetch

import (
	"testing"
	"unsafe"
)

// TestNeverFaults checks that prefetches of any length, including none,
// and of lines at the ends of a slice, neither fault nor change the bytes.
func TestNeverFaults(t *testing.T) {
	b := make([]byte, 1000)
	for i := range b {
		b[i] = byte(i)
	}
	for _, n := range []int{-1, 0, 1, 63, 64, 65, 256, 257, 10_000} {
		Bytes(b, n)
		Bytes(b[len(b)-1:], n)
		Bytes(b[:0], n)
		Bytes(nil, n)
	}
	Line(unsafe.Pointer(&b[0]))
	Line(unsafe.Pointer(&b[len(b)-1]))
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed to %d", i, b[i])
		}
	}
}
