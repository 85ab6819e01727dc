package blockcache

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/sstkit/sstable/internal/hugemem"
)

// fakeFaults records the ranges a prefaulter faults in and the advice it
// gives, with the fault of range slowAt (counting from 0) taking slowFor
// and that of range failAt failing.
type fakeFaults struct {
	faults  [][2]int      // offsets in mem
	advice  []bool        // for the whole memory
	small   [][2]int      // small pages asked for these ranges (offsets in mem)
	took    time.Duration // the cost of the last fault
	slowAt  int
	slowFor time.Duration
	failAt  int
}

func (f *fakeFaults) track(t *testing.T, mem []byte) *prefaulter {
	t.Helper()
	pf := trackPrefaults(mem, true, func(b []byte) error {
		lo := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
		f.faults = append(f.faults, [2]int{lo, lo + len(b)})
		f.took = slowHugeFault / 10
		if len(f.faults)-1 == f.slowAt {
			f.took = f.slowFor
		}
		if len(f.faults)-1 == f.failAt {
			return errors.New("no")
		}
		return nil
	}, func(b []byte, on bool) bool {
		if len(b) != len(mem) {
			lo := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
			if on {
				t.Errorf("huge pages asked for [%d, %d), not the whole memory", lo, lo+len(b))
			}
			f.small = append(f.small, [2]int{lo, lo + len(b)})
			return true
		}
		f.advice = append(f.advice, on)
		return true
	}, func(fault func() error) (time.Duration, error) {
		err := fault()
		return f.took, err
	})
	if pf == nil || len(f.advice) != 1 || !f.advice[0] || !pf.on.Load() {
		t.Fatalf("tracker %v, advice %v: want huge pages advised and on", pf, f.advice)
	}
	return pf
}

// testMem returns n bytes starting off bytes past a 2 MiB boundary of
// the address space.
func testMem(n, off int) []byte {
	buf := make([]byte, n+off+hugePageBytes)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := int((base+hugePageBytes-1)/hugePageBytes*hugePageBytes-base) + off
	return buf[skip : skip+n : skip+n]
}

// TestHugePagesFaultEachRangeOnce fills the memory block by block, in an
// unaligned mapping: every 2 MiB range of the address space that it
// overlaps is faulted in once, before the block that first uses it,
// clipped to the memory, in order, covering it all.
func TestHugePagesFaultEachRangeOnce(t *testing.T) {
	for _, align := range []int{0, 4096, hugePageBytes - 64} {
		mem := testMem(9*hugePageBytes+12345, align)
		f := &fakeFaults{slowAt: -1, failAt: -1}
		pf := f.track(t, mem)
		for off := 0; off < len(mem); {
			n := min(4000+off%300, len(mem)-off)
			pf.reserved(off, n, 0, len(mem))
			if last := f.faults[len(f.faults)-1]; last[1] < off+n {
				t.Fatalf("align %d: block [%d, %d) reserved, faulted in only up to %d", align, off, off+n, last[1])
			}
			off += n
		}
		end := 0
		for i, r := range f.faults {
			if r[0] != end || r[1] <= r[0] || r[1]-r[0] > hugePageBytes {
				t.Fatalf("align %d: fault %d is [%d, %d), want one starting at %d, at most 2 MiB", align, i, r[0], r[1], end)
			}
			if r[1] != len(mem) && (uintptr(unsafe.Pointer(&mem[r[1]])))%hugePageBytes != 0 {
				t.Fatalf("align %d: fault %d ends at %d, not on a 2 MiB boundary", align, i, r[1])
			}
			end = r[1]
		}
		if end != len(mem) || !pf.on.Load() || len(f.advice) != 1 {
			t.Fatalf("align %d: faulted in up to %d of %d; on %v, advice %v", align, end, len(mem), pf.on.Load(), f.advice)
		}
		// Reusing the memory faults nothing more.
		n := len(f.faults)
		pf.reserved(0, len(mem), 0, len(mem))
		if len(f.faults) != n {
			t.Fatalf("align %d: %d faults after reuse, want %d", align, len(f.faults), n)
		}
	}
}

// TestHugePagesSlowFaultTurnsThemOff checks that one slow first touch
// turns huge pages off for the whole memory, and that later ranges are
// still faulted in, each once, as small pages; and that a failed fault
// (a kernel without MADV_POPULATE_WRITE) stops both.
func TestHugePagesSlowFaultTurnsThemOff(t *testing.T) {
	for _, f := range []*fakeFaults{
		{slowAt: 2, slowFor: 3 * slowHugeFault, failAt: -1},
		{slowAt: -1, failAt: 1},
	} {
		mem := testMem(8*hugePageBytes, 0)
		pf := f.track(t, mem)
		for off := 0; off < len(mem); off += 4096 {
			pf.reserved(off, 4096, 0, len(mem))
		}
		want := 8
		if f.failAt >= 0 {
			want = f.failAt + 1
		}
		if len(f.faults) != want || pf.on.Load() || len(f.advice) != 2 || f.advice[1] || pf.populating.Load() != (f.failAt < 0) {
			t.Errorf("slow at %d, failing at %d: %d faults (want %d), on %v, populating %v, advice %v (want [true false])", f.slowAt, f.failAt, len(f.faults), want, pf.on.Load(), pf.populating.Load(), f.advice)
		}
	}
}

// TestPrefaultWithoutHugePages: where the kernel gives no huge pages, the
// ranges are faulted in all the same, and no advice is given.
func TestPrefaultWithoutHugePages(t *testing.T) {
	f := &fakeFaults{slowAt: -1, failAt: -1}
	mem := testMem(4*hugePageBytes+100, 4096)
	pf := trackPrefaults(mem, false, func(b []byte) error {
		f.faults = append(f.faults, [2]int{})
		return nil
	}, func([]byte, bool) bool {
		t.Error("advice given")
		return true
	}, func(fault func() error) (time.Duration, error) { return 0, fault() })
	pf.reserved(0, len(mem), 0, len(mem))
	// 4 KiB past a boundary: the 2 MiB less 4 KiB before the next, three
	// whole ranges and the last 4196 bytes.
	if len(f.faults) != 5 || pf.on.Load() {
		t.Errorf("%d faults, want 5; on %v", len(f.faults), pf.on.Load())
	}
}

// TestNewAsksForHugePages checks that a real cache asks for huge pages
// where the kernel can give them, faults in what its blocks use, and
// that its blocks read back what was written.
func TestNewAsksForHugePages(t *testing.T) {
	c := newCache(16 << 20)
	defer c.Close()
	if !c.offHeap {
		if c.prefault != nil {
			t.Fatal("a Go heap budget is prefaulted")
		}
		t.Skip("no mapping here")
	}
	if c.prefault == nil {
		t.Fatal("no prefaulter")
	}
	if !hugemem.Possible() && c.prefault.on.Load() {
		t.Fatal("huge pages asked for where the kernel gives none")
	}
	tb, err := c.NewTable(8)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	h, ok := tb.Reserve(0, 3<<20)
	if !ok {
		t.Fatal("Reserve failed")
	}
	b := h.Bytes()
	for i := range b {
		b[i] = byte(i * 7)
	}
	tb.Publish(0, h, 0)
	h.Release()
	touched := 0
	for i := range c.prefault.state {
		if c.prefault.state[i].Load()&rangeTouched != 0 {
			touched++
		}
	}
	if c.prefault.on.Load() && touched < 2 {
		t.Errorf("a 3 MiB block touched %d ranges, want at least 2", touched)
	}
	g, ok := tb.Get(0)
	if !ok {
		t.Fatal("block 0 not cached")
	}
	for i, x := range g.Bytes() {
		if x != byte(i*7) {
			t.Fatalf("byte %d = %d, want %d", i, x, byte(i*7))
		}
	}
	g.Release()
}

// TestPrefaultSetAside follows a shard's set-aside region through the
// prefaulter: the range the region starts inside is asked for small
// pages; when it was faulted in on a huge page, its blocks are evicted
// (evictBelow) so that the whole huge page can be dropped, and it is
// faulted in again, clipped to the blocks' part; where its blocks cannot
// be evicted, only the region's part is dropped; ranges wholly in the
// region are untouched again; and a region that shrinks leaves its
// ranges to be faulted in again.
func TestPrefaultSetAside(t *testing.T) {
	const h = hugePageBytes
	mem := testMem(4*h, 0)
	f := &fakeFaults{slowAt: -1, failAt: -1}
	pf := f.track(t, mem)
	pf.reserved(0, len(mem), 0, len(mem)) // every range on a huge page
	if len(f.faults) != 4 {
		t.Fatalf("%d faults, want 4", len(f.faults))
	}
	var evicted []int
	evict := func(ok bool) func(int) bool {
		return func(at int) bool { evicted = append(evicted, at); return ok }
	}
	// The region grows from the top into the middle of range 2 (ranges
	// counted from 0 here; pf.state from 1 for an aligned memory).
	from := 2*h + h/2
	if got := pf.setAside(from, len(mem), 0, len(mem), evict(true)); got != 2*h {
		t.Fatalf("setAside dropping from %d, want the whole huge page from %d", got, 2*h)
	}
	if len(evicted) != 1 || evicted[0] != 2*h || len(f.small) != 1 || f.small[0] != [2]int{2 * h, 3 * h} {
		t.Fatalf("evicted below %v, small pages for %v; want [%d] and [[%d %d]]", evicted, f.small, 2*h, 2*h, 3*h)
	}
	if st2, st3 := pf.state[pf.rangeOf(2*h)].Load(), pf.state[pf.rangeOf(3*h)].Load(); st2 != rangeSmall || st3 != 0 {
		t.Fatalf("range states %b and %b, want %b (small, untouched) and 0", st2, st3, rangeSmall)
	}
	// The next block there faults in the blocks' part alone.
	pf.reserved(2*h, 4096, 0, from)
	if last := f.faults[len(f.faults)-1]; len(f.faults) != 5 || last != [2]int{2 * h, from} {
		t.Fatalf("faults %v, want a fifth of [%d, %d)", f.faults, 2*h, from)
	}
	// Growing further inside the same range asks nothing more.
	if got := pf.setAside(2*h+h/4, from, 0, len(mem), evict(true)); got != 2*h+h/4 || len(evicted) != 1 || len(f.small) != 1 {
		t.Fatalf("growing inside a small range: dropping from %d, evicted %v, small %v", got, evicted, f.small)
	}
	// Into range 1, on a huge page whose blocks cannot all be evicted:
	// only the region's part is dropped.
	if got := pf.setAside(h+h/2, 2*h+h/4, 0, len(mem), evict(false)); got != h+h/2 || len(evicted) != 2 || len(f.small) != 2 {
		t.Fatalf("with blocks pinned below: dropping from %d, evicted %v, small %v", got, evicted, f.small)
	}
	if st := pf.state[pf.rangeOf(h)].Load(); st != rangeTouched|rangeHuge|rangeSmall {
		t.Fatalf("range 1's state %b, want touched, huge and small", st)
	}
	// A range the region starts inside that lies partly in another shard
	// (floor above it) is not emptied.
	if got := pf.setAside(h/2, h+h/2, h/4, len(mem), evict(true)); got != h/2 || len(evicted) != 2 {
		t.Fatalf("range shared with another shard: dropping from %d, evicted %v", got, evicted)
	}
	// The region shrinks back to 3h: ranges 0 to 2 are to be faulted in
	// again (their pages in place stay), range 3 stays whole region.
	pf.unsetAside(h/2, 3*h, 0, len(mem))
	for r := range 3 {
		if st := pf.state[pf.rangeOf(r*h)].Load(); st&rangeTouched != 0 {
			t.Fatalf("range %d still touched (%b) once blocks may use it again", r, st)
		}
	}
	// Shrinking to the middle of range 3 asks it for small pages.
	pf.unsetAside(3*h, 3*h+h/2, 0, len(mem))
	if n := len(f.small); n != 4 || f.small[n-1] != [2]int{3 * h, 4 * h} {
		t.Fatalf("small pages asked for %v, want range 3 last", f.small)
	}
}
