//go:build !unix

package main

// cpuTime returns -1: no process CPU time here.
func cpuTime() int64 { return -1 }
