package builder

import (
	"fmt"
	"io"
	"sync"
)

// outChunk is the size in bytes of the chunks the builder writes its
// output in: a write system call per 256 KiB.
const outChunk = 256 << 10

// outChunksInFlight bounds the full chunks handed to writing goroutines
// and not yet written (1 MiB), and so the memory an asynchronous output
// holds besides the chunk being filled.
const outChunksInFlight = 4

// output buffers a table's bytes and writes them to w in chunks of
// outChunk bytes, in order. An asynchronous output (the default; not with
// Options.Serial) writes each full chunk from a goroutine of its own,
// started once the previous chunk's is done with w: the write system
// call, and the kernel's copy of the bytes into the page cache (about a
// sixth of an uncompressed build), run beside Add, as Pebble v2's writer
// writes data blocks from a goroutine. Each goroutine exits once its chunk
// is written, so none outlives the work. A write error is kept and
// returned by every later Write and by Flush: asynchronously, up to
// outChunksInFlight chunks after the bytes that failed were buffered.
type output struct {
	w     io.Writer
	async bool
	buf   []byte // the chunk being filled
	off   uint64 // the output offset of buf[0]

	// Asynchronous only.
	free      chan []byte   // written chunks' buffers, for reuse
	allocated int           // chunk buffers made
	prev      chan struct{} // closed once the last chunk handed off is written; nil before any
	mu        sync.Mutex    // guards err
	err       error
}

func newOutput(w io.Writer, async bool) *output {
	o := &output{w: w, async: async, buf: make([]byte, 0, outChunk)}
	if async {
		o.free = make(chan []byte, outChunksInFlight)
	}
	return o
}

func (o *output) error() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

func (o *output) setError(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

// Write buffers p. It returns len(p) and nil unless a write has failed,
// in which case it returns that error, saying at which output offset.
func (o *output) Write(p []byte) (int, error) {
	if err := o.error(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		k := copy(o.buf[len(o.buf):cap(o.buf)], p)
		o.buf, p, n = o.buf[:len(o.buf)+k], p[k:], n+k
		if len(o.buf) == cap(o.buf) {
			if err := o.spill(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// spill writes the buffered bytes, or hands them to a goroutine.
func (o *output) spill() error {
	chunk, off := o.buf, o.off
	o.off += uint64(len(chunk))
	if !o.async {
		o.buf = o.buf[:0]
		o.writeChunk(chunk, off)
		return o.error()
	}
	prev, done := o.prev, make(chan struct{})
	go func() {
		if prev != nil {
			<-prev
		}
		if o.error() == nil {
			o.writeChunk(chunk, off)
		}
		o.free <- chunk[:0] // never blocks: at most outChunksInFlight are made
		close(done)
	}()
	o.prev = done
	if o.allocated < outChunksInFlight-1 {
		o.allocated++
		o.buf = make([]byte, 0, outChunk)
	} else {
		o.buf = <-o.free
	}
	return o.error()
}

func (o *output) writeChunk(chunk []byte, off uint64) {
	n, err := o.w.Write(chunk)
	if err == nil && n < len(chunk) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.setError(fmt.Errorf("write at offset %d: %w", off+uint64(n), err))
	}
}

// Flush writes every buffered byte and waits until w has them all,
// returning the first write error.
func (o *output) Flush() error {
	if len(o.buf) > 0 && o.error() == nil {
		o.spill()
	}
	o.wait()
	return o.error()
}

// wait waits until no goroutine writes to w.
func (o *output) wait() {
	if o.prev != nil {
		<-o.prev
	}
}
