package lsmtable

import (
	"runtime/debug"
	"unsafe"

	"github.com/sstkit/sstable/format"
)

// Memory faults: a mapped file that another process truncates raises
// SIGBUS when a page past its new end is read. Every method that reads
// the mapping runs with runtime/debug.SetPanicOnFault(true) and a
// deferred recoverFault, which turns a fault inside the mapping into an
// error wrapping format.ErrCorrupt and re-raises any other (a bug, not
// damage). Values that alias the mapping (raw blocks) are the caller's
// to copy before the file can change, as with package reader.

func protect() bool { return debug.SetPanicOnFault(true) }

func restoreFault(old bool) { debug.SetPanicOnFault(old) }

// recoverFault, deferred after protect, sets *err for a fault in t's
// mapping.
func (t *Table) recoverFault(err *error) {
	if v := recover(); v != nil {
		*err = t.Named(t.faultError(v))
	}
}

// faultError returns the error for a recovered panic value v that is a
// memory fault inside t's mapping, or ErrClosed for one inside the
// mapping Close released (an iterator used after Close), and re-panics
// with any other.
func (t *Table) faultError(v any) error {
	f, ok := v.(interface{ Addr() uintptr })
	if !ok {
		panic(v)
	}
	a := f.Addr()
	if len(t.mapped) > 0 {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(t.mapped)))
		if a >= base && a < base+uintptr(len(t.mapped)) {
			return t.Named(format.Corruptf(format.SectionFile, int64(a-base), "memory fault reading the mapped file (was it truncated while open?)"))
		}
	}
	if t.closed.Load() && a-t.unmapped[0] < t.unmapped[1] {
		return ErrClosed
	}
	panic(v)
}
