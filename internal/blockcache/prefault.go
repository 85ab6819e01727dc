package blockcache

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sstkit/sstable/internal/hugemem"
)

// hugePageBytes is the size of a transparent huge page (a PMD mapping of
// 4 KiB pages on amd64 and arm64).
const hugePageBytes = 2 << 20

// slowHugeFault is how long the first touch of a 2 MiB range may take
// before the cache stops asking for huge pages: long enough for a huge
// page the host must back anew, short of direct compaction, which can
// stall a fault for tens of milliseconds. Measured on a 2-core VM (PVM,
// shadow page tables) with bench/cmd/touchprobe (MADV_POPULATE_WRITE per
// 2 MiB of a 512 MiB mapping, the thread's CPU time): a huge page took
// 0.10-0.33 ms, or 3.9-9.3 ms while the host re-supplied pages the
// guest had handed back; the same 2 MiB as small pages took 0.24-1.43
// ms to populate and then 1.2-5.1 ms more for the first write to each
// of them (the hypervisor builds its entry for a page then). So even a
// slow huge page costs the fill about twice what small pages do, and
// every later lookup and scan is spared TLB misses: with this limit at
// 1 ms, which turned huge pages off at the first slow fault, a first
// scan of a 1M-entry snappy table took 245-305 ns/entry against 120-197
// with them kept, Get hits 576-668 ns against 488-648, and warm scans
// were bimodal (19-48 ns/entry against 19-26). The time is the faulting
// thread's CPU time (faultCost), which the host's stalls count in and
// waiting for a CPU does not.
const slowHugeFault = 20 * time.Millisecond

// prefaulter faults the cache's memory in 2 MiB at a time, on the first
// use of each 2 MiB range, and asks for transparent huge pages while they
// come cheap.
//
// Faulting a range in with one call (MADV_POPULATE_WRITE) rather than by
// the writes of the blocks decoded into it matters where a page fault is
// dear: on a 2-core VM that traps to its host on every fault, the first
// writes to 512 small pages took 6.0-7.5 ms, one populate call of the
// same pages 0.23-0.5 ms, and a first scan of a 1M-entry snappy table,
// which fills the cache, spent most of its 540-650 ns per entry in
// those faults. Blocks fill the cache's memory in order (next fit), so a
// range faulted in is soon used.
//
// Huge pages: lookups land on random blocks of the whole budget, and 2
// MiB pages spare them TLB misses (Get hits on a 1M-entry snappy table
// with a hash index: about 8% faster). But where the kernel leaves huge
// pages to madvise, every first touch of an advised 2 MiB range takes one
// synchronously, and where that is very slow (direct compaction, see
// slowHugeFault) it would stall the cache's first fill. So the first
// fault slower than slowHugeFault turns huge pages off for the rest of
// the mapping (MADV_NOHUGEPAGE on all of it: one flag change, never a
// split of the mapping into many); the ranges touched so far keep their
// pages, and later ones are faulted in as small pages.
type prefaulter struct {
	mem        []byte
	first      int           // offset in mem of the first 2 MiB boundary of the address space
	on         atomic.Bool   // still asking for huge pages
	populating atomic.Bool   // faulting ranges in; off once a fault fails (a kernel before Linux 5.14)
	touched    []atomic.Bool // per 2 MiB range (from first - hugePageBytes): faulted in by Reserve

	fault  func(b []byte) error                        // faults b in for writing: populate, but for tests
	advise func(b []byte, on bool) bool                // hugemem.Advise, but for tests
	cost   func(f func() error) (time.Duration, error) // faultCost, but for tests
}

// newPrefaulter returns the tracker of mem, having asked for huge pages
// where the kernel may give them; nil where mem is smaller than two huge
// pages.
func newPrefaulter(mem []byte) *prefaulter {
	if len(mem) < 2*hugePageBytes {
		return nil
	}
	return trackPrefaults(mem, hugemem.Possible(), populate, hugemem.Advise, faultCost)
}

// trackPrefaults returns the tracker of mem, which faults ranges in
// through fault; with huge, it asks for huge pages through advise first.
func trackPrefaults(mem []byte, huge bool, fault func([]byte) error, advise func([]byte, bool) bool, cost func(func() error) (time.Duration, error)) *prefaulter {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	first := int((base+hugePageBytes-1)/hugePageBytes*hugePageBytes - base)
	pf := &prefaulter{mem: mem, first: first, touched: make([]atomic.Bool, (len(mem)-first)/hugePageBytes+2), fault: fault, advise: advise, cost: cost}
	pf.populating.Store(true)
	pf.on.Store(huge && advise(mem, true))
	return pf
}

// reserved faults in the 2 MiB ranges of mem[off:off+n] not yet touched,
// before the caller writes the block, and turns huge pages off on the
// first slow one.
func (pf *prefaulter) reserved(off, n int) {
	if !pf.populating.Load() {
		return
	}
	// Range r covers mem[first+(r-1)*hugePageBytes:][:hugePageBytes],
	// clipped to mem: range 0 is the part before the first boundary.
	for r := (off - pf.first + hugePageBytes) / hugePageBytes; r < len(pf.touched); r++ {
		lo := pf.first + (r-1)*hugePageBytes
		if lo >= off+n {
			break
		}
		if pf.touched[r].Load() || !pf.touched[r].CompareAndSwap(false, true) {
			continue
		}
		hi := min(lo+hugePageBytes, len(pf.mem))
		lo = max(lo, 0)
		huge := pf.on.Load()
		took, err := pf.cost(func() error { return pf.fault(pf.mem[lo:hi:hi]) })
		if err != nil {
			pf.populating.Store(false)
			pf.off()
			return
		}
		if huge && took > slowHugeFault {
			pf.off()
		}
	}
}

// off stops asking for huge pages; the ranges touched keep theirs.
func (pf *prefaulter) off() {
	if pf.on.Swap(false) {
		pf.advise(pf.mem, false)
	}
}

// wallCost is faultCost by the wall clock, where a thread's CPU time is
// not at hand.
func wallCost(fault func() error) (time.Duration, error) {
	start := time.Now()
	err := fault()
	return time.Since(start), err
}
