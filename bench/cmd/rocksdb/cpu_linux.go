//go:build linux

package main

import "golang.org/x/sys/unix"

// cpuTime returns the process's CPU time so far, in nanoseconds, every
// thread's (CLOCK_PROCESS_CPUTIME_ID, the clock the C++ side reads), or
// -1 where it cannot be had.
func cpuTime() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

// majorFaults returns the process's major page faults so far (those that
// read from the disk), or -1.
func majorFaults() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Majflt
}
