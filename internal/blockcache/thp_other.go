//go:build !linux

package blockcache

import (
	"errors"
	"time"
)

func populate(b []byte) error { return errors.ErrUnsupported }

func faultCost(fault func() error) (time.Duration, error) { return wallCost(fault) }
