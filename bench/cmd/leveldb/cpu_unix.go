//go:build unix

package main

import "syscall"

// cpuTime returns the process's user and system CPU time so far, in
// nanoseconds (every thread's), or -1 where it cannot be had.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
