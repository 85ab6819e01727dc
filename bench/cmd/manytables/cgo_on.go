//go:build cgo

package main

// cgoEnabled: Pebble's block cache is then allocated with C malloc, outside
// the Go heap (pebble/internal/manual).
const cgoEnabled = true
