package diskcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// ReaderAt returns an io.ReaderAt of the immutable object named key, of
// size bytes, which serves its bytes from the cache's chunk files and
// reads the chunks it lacks from src, storing them. The caller chooses
// key (for example bucket, name and version): two objects must not share
// a key and size. ReadAt returns the source's bytes or the source's
// error (unwrapped); a read at or past size returns io.EOF as an
// io.ReaderAt over a size-byte object does, and a source that ends
// before size an error wrapping io.ErrUnexpectedEOF. A negative size is
// taken as 0.
func (c *Cache) ReaderAt(key string, size int64, src io.ReaderAt) io.ReaderAt {
	sum := sha256.Sum256([]byte(key))
	return &objReader{
		c:    c,
		key:  key,
		size: max(size, 0),
		src:  src,
		pref: chunkPref + hex.EncodeToString(sum[:16]) + "-" + strconv.FormatInt(max(size, 0), 16) + "-",
	}
}

// objReader reads one object through the cache.
type objReader struct {
	c    *Cache
	key  string
	size int64
	src  io.ReaderAt
	pref string // chunk file names: pref + the chunk index in hex
}

func (r *objReader) name(ci int64) string { return r.pref + strconv.FormatInt(ci, 16) }

// span returns chunk ci's data length and the part of the object read
// [off, off+n) it holds: chunk bytes [lo, hi), the read's bytes
// [at, at+hi-lo).
func (r *objReader) span(ci, off int64, n int) (dataLen, lo, hi, at int64) {
	start := ci * ChunkSize
	dataLen = min(int64(ChunkSize), r.size-start)
	lo = max(off, start) - start
	hi = min(off+int64(n), start+dataLen) - start
	return dataLen, lo, hi, start + lo - off
}

// ReadAt implements io.ReaderAt.
func (r *objReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("diskcache: read of %q at negative offset %d", r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := len(p)
	var eof error
	if int64(n) > r.size-off {
		n, eof = int(r.size-off), io.EOF
	}
	if n == 0 {
		return 0, nil
	}
	c0, c1 := off/ChunkSize, (off+int64(n)-1)/ChunkSize
	var missing []int64
	for ci := c0; ci <= c1; ci++ {
		dataLen, lo, hi, at := r.span(ci, off, n)
		if r.c.readDisk(r, ci, dataLen, lo, hi, p[at:at+hi-lo]) {
			r.c.hits.Add(1)
		} else {
			missing = append(missing, ci)
		}
	}
	if len(missing) > 0 {
		if err := r.fill(missing, p[:n], off, true); err != nil {
			return 0, err
		}
	}
	return n, eof
}

// fill copies the missing chunks' parts of the read [off, off+len(p))
// into p: from flights of other readers, or from source reads of its own,
// one per run of consecutive chunks, which it then stores. A chunk
// another reader stored since the caller looked is read from disk, when
// retry is set.
func (r *objReader) fill(missing []int64, p []byte, off int64, retry bool) error {
	c := r.c
	type wait struct {
		ci int64
		f  *flight
	}
	var waits []wait
	var mine []int64 // chunks this read fetches, ascending
	var flights []*flight
	var stored []int64
	c.mu.Lock()
	for _, ci := range missing {
		name := r.name(ci)
		if retry && c.index[name] != nil {
			stored = append(stored, ci)
			continue
		}
		if f, ok := c.flights[name]; ok {
			waits = append(waits, wait{ci, f})
			continue
		}
		f := &flight{done: make(chan struct{})}
		c.flights[name] = f
		mine = append(mine, ci)
		flights = append(flights, f)
	}
	c.mu.Unlock()
	c.misses.Add(int64(len(mine) + len(waits)))

	var firstErr error
	if len(stored) > 0 {
		var still []int64
		for _, ci := range stored {
			dataLen, lo, hi, at := r.span(ci, off, len(p))
			if c.readDisk(r, ci, dataLen, lo, hi, p[at:at+hi-lo]) {
				c.hits.Add(1)
			} else {
				still = append(still, ci)
			}
		}
		if len(still) > 0 {
			firstErr = r.fill(still, p, off, false)
		}
	}
	for i := 0; i < len(mine); {
		j := i + 1
		for j < len(mine) && mine[j] == mine[j-1]+1 {
			j++
		}
		err := r.fetch(mine[i:j], flights[i:j], p, off)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		i = j
	}
	for _, w := range waits {
		<-w.f.done
		if w.f.err != nil {
			if firstErr == nil {
				firstErr = w.f.err
			}
			continue
		}
		_, lo, hi, at := r.span(w.ci, off, len(p))
		copy(p[at:at+hi-lo], w.f.data[lo:hi])
	}
	return firstErr
}

// fetch reads chunks run (consecutive) from the source in one ReadAt,
// completes their flights, copies their parts of the read into p, and
// stores them.
func (r *objReader) fetch(run []int64, flights []*flight, p []byte, off int64) error {
	c := r.c
	start := run[0] * ChunkSize
	end := min((run[len(run)-1]+1)*ChunkSize, r.size)
	buf := make([]byte, end-start)
	err := r.readSource(buf, start)
	for k, ci := range run {
		f := flights[k]
		if err != nil {
			f.err = err
		} else {
			s := ci*ChunkSize - start
			f.data = buf[s : s+min(int64(ChunkSize), r.size-ci*ChunkSize)]
			_, lo, hi, at := r.span(ci, off, len(p))
			copy(p[at:at+hi-lo], f.data[lo:hi])
		}
		close(f.done)
	}
	for k, ci := range run {
		name := r.name(ci)
		if err == nil {
			c.store(r, ci, name, flights[k].data)
		}
		c.mu.Lock()
		delete(c.flights, name)
		c.mu.Unlock()
	}
	return err
}

// readSource fills buf with the object's bytes at off, asking again
// after short reads. A source that ends early gives an error wrapping
// io.ErrUnexpectedEOF; other errors are the source's own.
func (r *objReader) readSource(buf []byte, off int64) error {
	got := 0
	for got < len(buf) {
		r.c.sourceReads.Add(1)
		m, err := r.src.ReadAt(buf[got:], off+int64(got))
		if m < 0 || m > len(buf)-got {
			return fmt.Errorf("diskcache: read of %q at offset %d: source returned %d for a %d-byte read", r.key, off+int64(got), m, len(buf)-got)
		}
		got += m
		r.c.sourceBytes.Add(int64(m))
		if got == len(buf) {
			return nil
		}
		switch {
		case err == io.EOF:
			return fmt.Errorf("diskcache: read of %q at offset %d: source ends before the size given (%d bytes): %w", r.key, off+int64(got), r.size, io.ErrUnexpectedEOF)
		case err != nil:
			return err
		case m == 0:
			return fmt.Errorf("diskcache: read of %q at offset %d: %w", r.key, off+int64(got), io.ErrNoProgress)
		}
	}
	return nil
}
