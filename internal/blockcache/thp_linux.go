package blockcache

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// populate faults b's pages in for writing (MADV_POPULATE_WRITE, Linux
// 5.14), as the first write to each would.
func populate(b []byte) error { return unix.Madvise(b, unix.MADV_POPULATE_WRITE) }

// faultCost runs fault and returns the CPU time the calling thread spent
// in it: the kernel's work for the fault (zeroing, compaction, and in a
// VM the host's faults, which stall the thread), without the time it
// waited for a CPU, which on a busy machine would make a cheap fault look
// slow.
func faultCost(fault func() error) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t0, t1 unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0) != nil {
		return wallCost(fault)
	}
	err := fault()
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1) != nil {
		return 0, err
	}
	return time.Duration(t1.Nano() - t0.Nano()), err
}
