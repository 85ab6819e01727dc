//go:build !linux

package blockcache

import (
	"errors"
	"time"
)

// thpPossible is false: huge pages are asked for only on Linux.
func thpPossible() bool { return false }

func adviseHuge(b []byte, on bool) bool { return false }

func populate(b []byte) error { return errors.ErrUnsupported }

func faultCost(fault func() error) (time.Duration, error) { return wallCost(fault) }
