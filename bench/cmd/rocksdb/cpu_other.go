//go:build !linux

package main

// cpuTime returns -1: no process CPU clock here.
func cpuTime() int64 { return -1 }

// majorFaults returns -1: not counted here.
func majorFaults() int64 { return -1 }
