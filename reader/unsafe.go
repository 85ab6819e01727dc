package reader

import "unsafe"

// unsafePointer returns the address of b's first byte; b must not be empty.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
