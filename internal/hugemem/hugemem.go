// Package hugemem allocates large scratch buffers outside the Go heap,
// on transparent huge pages where the kernel gives them, and says
// whether the kernel gives them (for the block cache's own memory).
//
// A buffer of a few MiB that a table build fills once, such as the hash
// index section, is fresh memory for the Go heap more often than not:
// the last build's buffer went back to the heap at a collection, and the
// runtime returns large free runs to the kernel. Each 4 KiB page of it
// then faults on its first write, which in a VM costs several
// microseconds: 6 MiB took 19-23 ms on a 2-core KVM guest, against
// 0.4-0.5 ms for the same bytes on 2 MiB huge pages (and 6 ms with
// MAP_POPULATE).
package hugemem

// hugePageBytes is the size of a transparent huge page on amd64 and
// arm64 (a PMD mapping of 4 KiB pages).
const hugePageBytes = 2 << 20

// MinBytes is the smallest buffer Alloc maps; a smaller one is a Go
// heap slice, as is any buffer where mapping fails or on systems
// without mmap.
const MinBytes = 2 << 20

// Buf is a zeroed buffer from Alloc. Call Free once it is no longer
// used.
type Buf struct {
	B       []byte // the buffer's n bytes
	mapping []byte // the whole mapping; nil for a Go heap buffer
}

// Alloc returns a buffer of n zeroed bytes. From MinBytes up it is a
// private anonymous mapping, advised MADV_HUGEPAGE where the kernel's
// policy for transparent huge pages is not "never", with B starting on
// a 2 MiB boundary so that whole huge pages cover it.
func Alloc(n int) Buf {
	if n < MinBytes {
		return Buf{B: make([]byte, n)}
	}
	if m, b := mapHuge(n); m != nil {
		return Buf{B: b, mapping: m}
	}
	return Buf{B: make([]byte, n)}
}

// Free releases a mapped buffer's memory and address space; a Go heap
// buffer is left to the collector. Neither b.B nor any slice of it may
// be used afterwards. Free on a zero Buf, or twice, does nothing.
func (b *Buf) Free() {
	if b.mapping != nil {
		unmap(b.mapping)
	}
	*b = Buf{}
}
