//go:build !linux

package cache

import "errors"

// thpPossible is false: huge pages are asked for only on Linux.
func thpPossible() bool { return false }

func adviseHuge(b []byte, on bool) bool { return false }

func populate(b []byte) error { return errors.ErrUnsupported }
