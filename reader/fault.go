package reader

import (
	"runtime/debug"

	"github.com/sstkit/sstable/format"
)

// Memory faults.
//
// A mapped file that another process truncates raises SIGBUS when the
// reader touches a page past the new end. Every method that reads the
// mapping runs with runtime/debug.SetPanicOnFault(true), which turns the
// fault into a panic whose value has an Addr method, and a deferred
// recoverFault that converts a fault inside the mapping into an error
// wrapping format.ErrCorrupt (section "file", the faulting offset).
// Faults elsewhere are re-raised: they are bugs, not file damage.
//
// What stays the caller's responsibility: Iterator.Value may alias the
// mapping (raw blocks), and reading such a slice after the file shrank
// faults outside this protection. Copy values before the file can change,
// or use Get/GetAppend, which copy inside it.

// protect enables panic-on-fault for the calling goroutine and returns the
// previous setting, for restoreFault.
func protect() bool { return debug.SetPanicOnFault(true) }

func restoreFault(old bool) { debug.SetPanicOnFault(old) }

// mappingFault converts a recovered panic value v into an error if it is
// a memory fault inside mapped (nil for a reader without a mapping), and
// re-panics otherwise.
func mappingFault(mapped []byte, v any) error {
	f, ok := v.(interface{ Addr() uintptr })
	if ok && len(mapped) > 0 {
		base := uintptr(unsafePointer(mapped))
		if a := f.Addr(); a >= base && a < base+uintptr(len(mapped)) {
			return format.Corruptf(format.SectionFile, int64(a-base), "memory fault reading the mapped file (was it truncated while open?)")
		}
	}
	panic(v)
}

// recoverFault, deferred after protect, turns a fault in the mapping into
// *err.
func (r *Reader) recoverFault(err *error) {
	if v := recover(); v != nil {
		*err = r.src.faultError(v)
	}
}
