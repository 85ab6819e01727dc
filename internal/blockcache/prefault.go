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
//
// A shard's set-aside region (shard.setAside) takes no memory: its pages
// are dropped, and never faulted in here, since each fault is clipped to
// the blocks' part of the shard. A 2 MiB range the region starts inside
// is asked for small pages (MADV_NOHUGEPAGE) before anything is faulted
// in there, as a huge page would bring the region's part of the range
// back with the blocks' part.
type prefaulter struct {
	mem        []byte
	first      int             // offset in mem of the first 2 MiB boundary of the address space
	asked      bool            // huge pages were asked for at the start
	on         atomic.Bool     // still asking for huge pages
	populating atomic.Bool     // faulting ranges in; off once a fault fails (a kernel before Linux 5.14)
	state      []atomic.Uint32 // per 2 MiB range (from first - hugePageBytes): rangeTouched, rangeHuge, rangeSmall

	fault  func(b []byte) error                        // faults b in for writing: populate, but for tests
	advise func(b []byte, on bool) bool                // hugemem.Advise, but for tests
	cost   func(f func() error) (time.Duration, error) // faultCost, but for tests
}

// A range's state bits.
const (
	rangeTouched = 1 << iota // faulted in by Reserve, or being faulted in
	rangeHuge                // faulted in while asking for huge pages: it may lie on one
	rangeSmall               // asked for small pages: a set-aside region starts inside it
)

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
	pf := &prefaulter{mem: mem, first: first, state: make([]atomic.Uint32, (len(mem)-first)/hugePageBytes+2), fault: fault, advise: advise, cost: cost}
	pf.populating.Store(true)
	pf.asked = huge && advise(mem, true)
	pf.on.Store(pf.asked)
	return pf
}

// rangeOf returns the range holding mem[off]. Range r covers
// mem[first+(r-1)*hugePageBytes:][:hugePageBytes], clipped to mem: range
// 0 is the part before the first boundary.
func (pf *prefaulter) rangeOf(off int) int { return (off - pf.first + hugePageBytes) / hugePageBytes }

// bounds returns range r's offsets in mem.
func (pf *prefaulter) bounds(r int) (lo, hi int) {
	lo = pf.first + (r-1)*hugePageBytes
	return max(lo, 0), min(lo+hugePageBytes, len(pf.mem))
}

// reserved faults in the 2 MiB ranges of mem[off:off+n] not yet touched,
// each clipped to mem[lo:hi] (the blocks' part of the block's shard),
// before the caller writes the block, and turns huge pages off on the
// first slow one.
func (pf *prefaulter) reserved(off, n, lo, hi int) {
	if !pf.populating.Load() {
		return
	}
	for r := pf.rangeOf(off); r < len(pf.state); r++ {
		rlo, rhi := pf.bounds(r)
		if rlo >= off+n {
			break
		}
		st := pf.state[r].Load()
		for st&rangeTouched == 0 && !pf.state[r].CompareAndSwap(st, st|rangeTouched) {
			st = pf.state[r].Load() // rangeSmall came meanwhile
		}
		if st&rangeTouched != 0 {
			continue
		}
		rlo, rhi = max(rlo, lo), min(rhi, hi)
		if rlo >= rhi {
			continue
		}
		huge := pf.on.Load() && st&rangeSmall == 0
		if huge {
			pf.state[r].Or(rangeHuge)
		}
		took, err := pf.cost(func() error { return pf.fault(pf.mem[rlo:rhi:rhi]) })
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

// setAside readies mem[from:to], newly set aside in the shard that owns
// mem[floor:ceil] (the region then runs from from to ceil), for its pages
// to be dropped, and returns where dropping may start: from, or lower.
// Ranges wholly in the region become untouched, to be faulted in again
// should the region shrink. The range the region starts inside is asked
// for small pages, once; if it was faulted in on a huge page, that page
// would stay whole with the region's part of it: so where the range lies
// in the shard and evictBelow(at) can evict every block of mem[at:from]
// (none pinned), the whole range is dropped, and its blocks' part
// faulted in again as small pages by the next Reserve there. Where it
// cannot, dropping the region's part splits the huge page. Called with
// the shard's lock held.
func (pf *prefaulter) setAside(from, to, floor, ceil int, evictBelow func(at int) bool) (dropFrom int) {
	dropFrom = from
	for r := pf.rangeOf(from); r < len(pf.state); r++ {
		rlo, rhi := pf.bounds(r)
		if rlo >= to {
			break
		}
		if rlo >= from {
			if rhi <= ceil {
				pf.state[r].And(rangeSmall)
			}
			continue
		}
		st := pf.state[r].Load()
		if st&rangeSmall != 0 {
			continue
		}
		pf.small(r)
		if st&rangeHuge != 0 && rlo >= floor && rhi <= ceil && evictBelow(rlo) {
			pf.state[r].And(rangeSmall)
			dropFrom = rlo
		}
	}
	return dropFrom
}

// unsetAside readies mem[from:to], no longer set aside in the shard
// that owns mem[floor:ceil] (the region now starts at to), for blocks:
// its ranges become untouched, so that the next Reserve there faults
// them in (pages already in stay), and the range the region now starts
// inside is asked for small pages. Called with the shard's lock held.
func (pf *prefaulter) unsetAside(from, to, floor, ceil int) {
	for r := pf.rangeOf(from); r < len(pf.state); r++ {
		rlo, rhi := pf.bounds(r)
		if rlo >= to {
			break
		}
		if rlo >= floor && rhi <= ceil {
			pf.state[r].And(^uint32(rangeTouched))
		}
		if rlo < to && to < min(rhi, ceil) && pf.state[r].Load()&rangeSmall == 0 {
			pf.small(r)
		}
	}
}

// small asks range r for small pages.
func (pf *prefaulter) small(r int) {
	if pf.asked {
		lo, hi := pf.bounds(r)
		pf.advise(pf.mem[lo:hi:hi], false)
	}
	pf.state[r].Or(rangeSmall)
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
