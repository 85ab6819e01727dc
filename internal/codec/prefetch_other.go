//go:build !amd64 && !arm64

package codec

import "unsafe"

// prefetch is a no-op where no prefetch instruction is wired up.
func prefetch(p unsafe.Pointer) {}
