//go:build !cgo

package main

// cgoEnabled: without cgo Pebble's block cache lives on the Go heap.
const cgoEnabled = false
