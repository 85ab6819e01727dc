package hugemem

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestAlloc checks buffers of sizes around MinBytes: zeroed, of the size
// asked, writable to the last byte, mapped (on a 2 MiB boundary) from
// MinBytes up where mmap exists, and that Free empties the Buf and may be
// called twice.
func TestAlloc(t *testing.T) {
	for _, n := range []int{0, 1, 4096, MinBytes - 1, MinBytes, MinBytes + 1, 3*MinBytes + 12345} {
		b := Alloc(n)
		if len(b.B) != n || cap(b.B) != n && b.mapping != nil {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b.B), cap(b.B))
		}
		mapped := b.mapping != nil
		if want := n >= MinBytes && runtime.GOOS != "windows" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" && runtime.GOOS != "plan9"; mapped != want {
			t.Fatalf("Alloc(%d): mapped %v, want %v", n, mapped, want)
		}
		if mapped && uintptr(unsafe.Pointer(unsafe.SliceData(b.B)))%hugePageBytes != 0 {
			t.Fatalf("Alloc(%d): mapped buffer at %p, not on a 2 MiB boundary", n, unsafe.SliceData(b.B))
		}
		for i, c := range b.B {
			if c != 0 {
				t.Fatalf("Alloc(%d): byte %d is %#x", n, i, c)
			}
		}
		for i := range b.B {
			b.B[i] = byte(i)
		}
		for i := 0; i < n; i += 4093 {
			if b.B[i] != byte(i) {
				t.Fatalf("Alloc(%d): byte %d reads %#x after writing %#x", n, i, b.B[i], byte(i))
			}
		}
		b.Free()
		if b.B != nil || b.mapping != nil {
			t.Fatalf("Alloc(%d): Free left %d bytes", n, len(b.B))
		}
		b.Free()
	}
}

// TestPossible checks that Advise is taken on a mapped buffer where the
// kernel may give huge pages.
func TestPossible(t *testing.T) {
	if !Possible() {
		t.Skip("no transparent huge pages here")
	}
	b := Alloc(MinBytes)
	defer b.Free()
	if !Advise(b.mapping, true) || !Advise(b.mapping, false) {
		t.Fatal("MADV_HUGEPAGE or MADV_NOHUGEPAGE refused on a private anonymous mapping")
	}
}
