//go:build !amd64 && !arm64

package prefetch

import "unsafe"

// Line is a no-op where no prefetch instruction is wired up.
func Line(p unsafe.Pointer) {}

func lines(p unsafe.Pointer, n uintptr) {}
