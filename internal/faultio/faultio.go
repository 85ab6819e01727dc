// Package faultio provides io.ReaderAt wrappers for tests and
// measurements: Counting counts calls and bytes, Faulty injects the
// faults of a remote store (short reads, an early io.EOF, transient
// errors, a permanent EIO, random delays).
package faultio

import (
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Counting is an io.ReaderAt that counts the calls made to R and the
// bytes asked for. Safe for concurrent use.
type Counting struct {
	R     io.ReaderAt
	calls atomic.Int64
	bytes atomic.Int64
}

// ReadAt reads from R, counting one call and len(p) bytes.
func (c *Counting) ReadAt(p []byte, off int64) (int, error) {
	c.calls.Add(1)
	c.bytes.Add(int64(len(p)))
	return c.R.ReadAt(p, off)
}

// Calls returns the number of ReadAt calls so far.
func (c *Counting) Calls() int64 { return c.calls.Load() }

// Bytes returns the bytes asked for so far (the sum of len(p)).
func (c *Counting) Bytes() int64 { return c.bytes.Load() }

// Reset sets both counts to zero.
func (c *Counting) Reset() { c.calls.Store(0); c.bytes.Store(0) }

// ErrTransient is the error of an injected transient failure: the same
// read may succeed when tried again.
var ErrTransient = errors.New("faultio: injected transient error")

// Faulty is an io.ReaderAt over R that injects faults at random, each
// with its own probability per call, from a seeded generator. Safe for
// concurrent use.
type Faulty struct {
	R io.ReaderAt

	Short     float64       // return fewer bytes than asked, with a nil error (which io.ReaderAt forbids, and callers must survive) or ErrTransient
	EarlyEOF  float64       // return fewer bytes than asked with io.EOF, although R has them
	Transient float64       // return ErrTransient after reading part of p (whose bytes are then garbage)
	Delay     time.Duration // sleep up to this long before each call
	broken    atomic.Bool   // every call fails with syscall.EIO

	mu  sync.Mutex
	rng *rand.Rand
}

// NewFaulty returns a Faulty over r with no faults enabled, drawing from
// a generator seeded with seed.
func NewFaulty(r io.ReaderAt, seed uint64) *Faulty {
	return &Faulty{R: r, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Break makes every later call fail with syscall.EIO (a permanent
// failure), or, with false, stops doing so.
func (f *Faulty) Break(b bool) { f.broken.Store(b) }

// Quiet disables every fault but a Break.
func (f *Faulty) Quiet() {
	f.mu.Lock()
	f.Short, f.EarlyEOF, f.Transient, f.Delay = 0, 0, 0, 0
	f.mu.Unlock()
}

func (f *Faulty) draw() (short, eof, transient bool, cut float64, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	short = f.rng.Float64() < f.Short
	eof = f.rng.Float64() < f.EarlyEOF
	transient = f.rng.Float64() < f.Transient
	cut = f.rng.Float64()
	if f.Delay > 0 {
		delay = time.Duration(f.rng.Int64N(int64(f.Delay)))
	}
	return
}

// ReadAt reads from R, then maybe damages the result as configured: a
// short count, an early io.EOF, ErrTransient or syscall.EIO. The bytes it
// reports as read are always R's bytes; the rest of p may be garbage.
func (f *Faulty) ReadAt(p []byte, off int64) (int, error) {
	if f.broken.Load() {
		return 0, syscall.EIO
	}
	short, eof, transient, cut, delay := f.draw()
	if delay > 0 {
		time.Sleep(delay)
	}
	n, err := f.R.ReadAt(p, off)
	if n == 0 {
		return n, err
	}
	k := int(cut * float64(n)) // a prefix of what R gave: [0, n)
	for i := k; i < len(p); i++ {
		if short || eof || transient {
			p[i] = 0xA5 // what the caller must not use
		}
	}
	switch {
	case transient:
		return k, ErrTransient
	case eof:
		return k, io.EOF
	case short:
		if cut < 0.5 {
			return k, nil
		}
		return k, ErrTransient
	}
	return n, err
}
