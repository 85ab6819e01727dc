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
// before the cache stops asking for huge pages. A huge page the kernel
// has at hand takes about 0.1 ms (zeroing 2 MiB); 512 small pages about
// 0.6 ms; a huge page that costs more is being assembled or fetched:
// direct compaction of fragmented memory, or, in a VM with free page
// reporting (virtio-balloon), host faults on 512 pages the guest had
// handed back, 2-5 ms each measured. The time is the faulting thread's
// CPU time (faultCost), which those stalls count in and waiting for a
// CPU does not.
const slowHugeFault = time.Millisecond

// hugePages asks for transparent huge pages for the cache's memory while
// they come cheap. Lookups land on random blocks of the whole budget,
// and 2 MiB pages spare them TLB misses (Get hits on a 1M-entry snappy
// table with a hash index: about 8% faster). But where the kernel leaves
// huge pages to madvise, every first touch of an advised 2 MiB range
// takes one synchronously, and where that is slow (see slowHugeFault)
// the first fill of the cache was up to 6 times slower: a first scan of
// a 1M-entry snappy table at 280-400 ns/entry instead of 57 or, with
// 4 KiB pages, 75-110. So Reserve faults in each 2 MiB range itself, on
// its first use, and times it: one slow fault turns huge pages off for
// the rest of the mapping (MADV_NOHUGEPAGE on all of it: one flag change,
// never a split of the mapping into many). The ranges touched so far
// keep their pages.
type hugePages struct {
	mem     []byte
	first   int           // offset in mem of the first 2 MiB boundary of the address space
	on      atomic.Bool   // still asking for huge pages
	touched []atomic.Bool // per 2 MiB range (from first - hugePageBytes): faulted in by Reserve

	fault  func(b []byte) error                        // faults b in for writing: populate, but for tests
	advise func(b []byte, on bool) bool                // hugemem.Advise, but for tests
	cost   func(f func() error) (time.Duration, error) // faultCost, but for tests
}

// newHugePages advises huge pages for mem and returns their tracker, or
// nil where the kernel gives none or mem is too small to hold one.
func newHugePages(mem []byte) *hugePages {
	if len(mem) < 2*hugePageBytes || !hugemem.Possible() {
		return nil
	}
	return trackHugePages(mem, populate, hugemem.Advise, faultCost)
}

// trackHugePages advises huge pages for mem through advise and returns
// their tracker, which faults ranges in through fault; nil if the advice
// failed.
func trackHugePages(mem []byte, fault func([]byte) error, advise func([]byte, bool) bool, cost func(func() error) (time.Duration, error)) *hugePages {
	if !advise(mem, true) {
		return nil
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	first := int((base+hugePageBytes-1)/hugePageBytes*hugePageBytes - base)
	hp := &hugePages{mem: mem, first: first, touched: make([]atomic.Bool, (len(mem)-first)/hugePageBytes+2), fault: fault, advise: advise, cost: cost}
	hp.on.Store(true)
	return hp
}

// reserved faults in the 2 MiB ranges of mem[off:off+n] not yet touched,
// before the caller writes the block, and turns huge pages off on the
// first slow one.
func (hp *hugePages) reserved(off, n int) {
	if !hp.on.Load() {
		return
	}
	// Range r covers mem[first+(r-1)*hugePageBytes:][:hugePageBytes],
	// clipped to mem: range 0 is the part before the first boundary.
	for r := (off - hp.first + hugePageBytes) / hugePageBytes; r < len(hp.touched); r++ {
		lo := hp.first + (r-1)*hugePageBytes
		if lo >= off+n {
			break
		}
		if hp.touched[r].Load() || !hp.touched[r].CompareAndSwap(false, true) {
			continue
		}
		hi := min(lo+hugePageBytes, len(hp.mem))
		lo = max(lo, 0)
		took, err := hp.cost(func() error { return hp.fault(hp.mem[lo:hi:hi]) })
		if err != nil || took > slowHugeFault {
			hp.off()
			return
		}
	}
}

// off stops asking for huge pages; the ranges touched keep theirs.
func (hp *hugePages) off() {
	if hp.on.Swap(false) {
		hp.advise(hp.mem, false)
	}
}

// wallCost is faultCost by the wall clock, where a thread's CPU time is
// not at hand.
func wallCost(fault func() error) (time.Duration, error) {
	start := time.Now()
	err := fault()
	return time.Since(start), err
}
