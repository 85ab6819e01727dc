package diskcache

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ChunkSize is the bytes of an object each chunk file holds (the last
// chunk of an object holds the rest, 1 to ChunkSize bytes).
const ChunkSize = 64 << 10

// MinCapacity is the smallest Options.Capacity Open accepts, in bytes:
// room for two full chunks.
const MinCapacity = 2 * (ChunkSize + blockSize)

const (
	pageSize  = 1 << 10 // the data bytes each page CRC covers
	blockSize = 4 << 10 // files are charged their size rounded up to this
	lockName  = "LOCK"
	chunkPref = "c-"
	tmpPref   = "tmp-"
)

// ErrLocked is the error (wrapped, naming the directory) Open returns
// when another Cache, in this process or another, holds the directory.
var ErrLocked = errors.New("diskcache: directory in use by another Cache")

// Options configure a Cache.
type Options struct {
	// Capacity bounds the bytes the cache's directory holds, in bytes:
	// every file in it is charged its size rounded up to 4 KiB, chunks
	// being written included. At least MinCapacity.
	Capacity int64

	// MaxOpenFiles bounds the chunk files the cache keeps open, with their
	// checked headers, so that a read from disk is one pread; beyond it
	// the file opened longest ago is closed, and a read of a chunk whose
	// file is not open costs an open, a read of the header and a close
	// more (on this project's machine, a Get through reader.New then
	// takes about 2.5x as long). The process needs that many file
	// descriptors to spare (Go raises the soft RLIMIT_NOFILE to the hard
	// limit at start on Linux). 0 means 4096: 256 MiB of chunks.
	MaxOpenFiles int
}

// Stats are a Cache's counters since Open, and its state now.
type Stats struct {
	Hits        int64 // chunk reads served from disk
	Misses      int64 // chunk reads that needed the chunk from a source (shared misses count once per reader)
	SourceReads int64 // ReadAt calls made to sources
	SourceBytes int64 // bytes read from sources
	Dropped     int64 // indexed chunk files found failing their check when read (torn, damaged, truncated, replaced, or deleted since Open) and dropped; files gone before Open are never indexed and count as misses, and the temporary files Open removes count nowhere
	WriteErrors int64 // chunks fetched but not cached because writing their file failed
	Evictions   int64 // chunks removed to make room
	Chunks      int64 // chunk files indexed now
	BytesOnDisk int64 // bytes charged now, in bytes: files (sizes rounded up to 4 KiB) and chunks being written
	Capacity    int64 // Options.Capacity, in bytes
}

// Cache is a directory of cached object chunks. Its methods and the
// ReaderAt values it returns are safe for concurrent use.
type Cache struct {
	dir      string
	capacity int64
	maxOpen  int
	lock     *os.File

	mu      sync.Mutex
	index   map[string]*entry // chunk files by name
	clock   *list.List        // of *entry, in CLOCK order
	hand    *list.Element     // the next entry the eviction hand looks at
	used    int64             // bytes charged: files and reservations
	flights map[string]*flight
	open    *list.List // entries with an open file, the longest open first
	closed  bool
	writers sync.WaitGroup // stores in progress

	hits, misses, sourceReads, sourceBytes atomic.Int64
	dropped, writeErrors, evictions        atomic.Int64

	// writeFault, when set (by tests), is called before a chunk file is
	// written; an error it returns fails the write.
	writeFault func() error
}

// entry is a chunk file in the index.
type entry struct {
	name   string
	charge int64
	ref    atomic.Bool // read since the eviction hand last passed
	elem   *list.Element

	// Set while the file is kept open (under Cache.mu): the file, its
	// data's offset in it and checked page CRCs, and e's element in
	// Cache.open.
	f        *os.File
	dataOff  int64
	crcs     []byte
	openElem *list.Element
}

// flight is a chunk being read from a source; done is closed once data
// or err is set.
type flight struct {
	done chan struct{}
	data []byte
	err  error
}

// Open opens the cache in dir, creating the directory if need be, and
// indexes the chunk files an earlier Cache left there (one directory
// listing and one lstat per file; no file is read). It removes
// temporary files a crashed process left. Errors: opts nil or Capacity
// below MinCapacity; a directory that cannot be created, listed or
// locked; ErrLocked (wrapped) while another Cache holds dir.
func Open(dir string, opts *Options) (*Cache, error) {
	if opts == nil || opts.Capacity < MinCapacity {
		var capacity int64
		if opts != nil {
			capacity = opts.Capacity
		}
		return nil, fmt.Errorf("diskcache: Capacity %d bytes is below the minimum, %d bytes (two chunks)", capacity, MinCapacity)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("diskcache: create directory: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("diskcache: open lock file: %w", err)
	}
	if err := lockFile(lf); err != nil {
		lf.Close()
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("diskcache: lock %s: %w", dir, err)
	}
	c := &Cache{
		dir:      dir,
		capacity: opts.Capacity,
		lock:     lf,
		index:    map[string]*entry{},
		clock:    list.New(),
		flights:  map[string]*flight{},
		open:     list.New(),
		maxOpen:  opts.MaxOpenFiles,
	}
	if c.maxOpen <= 0 {
		c.maxOpen = 4096
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("diskcache: list directory: %w", err)
	}
	for _, de := range ents {
		name := de.Name()
		switch {
		case name == lockName:
			continue
		case strings.HasPrefix(name, tmpPref):
			if os.Remove(filepath.Join(dir, name)) == nil {
				continue
			}
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since the listing
		}
		charge := chargeOf(info.Size())
		if info.IsDir() {
			charge = blockSize
		}
		c.used += charge
		if strings.HasPrefix(name, chunkPref) && info.Mode().IsRegular() {
			e := &entry{name: name, charge: charge}
			e.elem = c.clock.PushBack(e)
			c.index[name] = e
		}
	}
	c.mu.Lock()
	for c.used > c.capacity && c.evictOne() {
	}
	c.mu.Unlock()
	return c, nil
}

// chargeOf is the bytes a file of n bytes is charged: n rounded up to
// the 4 KiB block.
func chargeOf(n int64) int64 {
	return (n + blockSize - 1) / blockSize * blockSize
}

// Stats returns the cache's counters and state.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	chunks, used := int64(len(c.index)), c.used
	c.mu.Unlock()
	return Stats{
		Hits:        c.hits.Load(),
		Misses:      c.misses.Load(),
		SourceReads: c.sourceReads.Load(),
		SourceBytes: c.sourceBytes.Load(),
		Dropped:     c.dropped.Load(),
		WriteErrors: c.writeErrors.Load(),
		Evictions:   c.evictions.Load(),
		Chunks:      chunks,
		BytesOnDisk: used,
		Capacity:    c.capacity,
	}
}

// Close waits for chunk files being written, and releases the
// directory's lock, so that another Cache may open it. The files stay for
// the next Open. ReaderAt values of a closed Cache read from their
// sources. Close returns the error of releasing the lock, if any; a
// second Close returns nil.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for c.open.Len() > 0 {
		c.closeFile(c.open.Front().Value.(*entry))
	}
	c.mu.Unlock()
	c.writers.Wait()
	err := unlockFile(c.lock)
	if cerr := c.lock.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("diskcache: release lock: %w", err)
	}
	return nil
}

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

// readDisk copies chunk ci's bytes [lo, hi) into dst from its file, and
// reports whether it could: the file must exist and pass its checks. A
// file that fails them is dropped.
func (c *Cache) readDisk(r *objReader, ci, dataLen, lo, hi int64, dst []byte) bool {
	name := r.name(ci)
	for range 3 {
		c.mu.Lock()
		e := c.index[name]
		if e == nil || c.closed {
			c.mu.Unlock()
			return false
		}
		f, dataOff, crcs := e.f, e.dataOff, e.crcs
		c.mu.Unlock()
		kept := true
		if f == nil {
			var err error
			if f, err = os.Open(filepath.Join(c.dir, name)); err != nil {
				c.drop(e)
				return false
			}
			var ok bool
			if dataOff, crcs, ok = readHeader(f, r.key, r.size, ci, dataLen); !ok {
				f.Close()
				c.drop(e)
				return false
			}
			kept = c.keepOpen(e, f, dataOff, crcs)
		}
		ok, closed := readPages(f, dataOff, crcs, dataLen, lo, hi, dst)
		if !kept {
			f.Close()
		}
		if closed {
			continue // closed by an eviction or for MaxOpenFiles: look again
		}
		if !ok {
			c.drop(e)
			return false
		}
		e.ref.Store(true)
		return true
	}
	return false
}

// keepOpen keeps f, e's file with its checked header, open for later
// reads, closing the file kept open longest when MaxOpenFiles are, and
// reports whether it did: not if e's file is open already, or e is gone.
// A read in progress on a file closed here fails with os.ErrClosed
// (*os.File makes the close wait for it) and its reader looks again.
func (c *Cache) keepOpen(e *entry, f *os.File, dataOff int64, crcs []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || e.f != nil || c.index[e.name] != e {
		return false
	}
	e.f, e.dataOff, e.crcs = f, dataOff, crcs
	e.openElem = c.open.PushBack(e)
	for c.open.Len() > c.maxOpen {
		c.closeFile(c.open.Front().Value.(*entry))
	}
	return true
}

// closeFile closes e's kept file. c.mu is held.
func (c *Cache) closeFile(e *entry) {
	if e.f == nil {
		return
	}
	e.f.Close()
	c.open.Remove(e.openElem)
	e.f, e.crcs, e.openElem = nil, nil, nil
}

// drop removes e, whose file failed its check, from the index and the
// directory.
func (c *Cache) drop(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index[e.name] != e {
		return // dropped or evicted already
	}
	c.dropped.Add(1)
	c.remove(e)
}

// remove takes e out of the index and its file out of the directory; its
// charge is released unless the file could not be removed. c.mu is held.
func (c *Cache) remove(e *entry) {
	if c.hand == e.elem {
		c.hand = e.elem.Next()
	}
	c.clock.Remove(e.elem)
	delete(c.index, e.name)
	c.closeFile(e)
	if err := os.Remove(filepath.Join(c.dir, e.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
		c.used -= e.charge
	}
}

// evictOne removes one chunk by CLOCK and reports whether there was one.
// c.mu is held.
func (c *Cache) evictOne() bool {
	for range 2*c.clock.Len() + 1 {
		if c.clock.Len() == 0 {
			return false
		}
		if c.hand == nil {
			c.hand = c.clock.Front()
		}
		e := c.hand.Value.(*entry)
		if e.ref.Swap(false) {
			c.hand = c.hand.Next()
			continue
		}
		c.evictions.Add(1)
		c.remove(e)
		return true
	}
	return false
}

// store writes chunk ci of r, data, to a temporary file and renames it
// into place, after reserving its charge (evicting as need be). A chunk
// that does not fit or fails to be written is not cached.
func (c *Cache) store(r *objReader, ci int64, name string, data []byte) {
	file := encodeChunk(r.key, r.size, ci, data)
	charge := chargeOf(int64(len(file)))
	c.mu.Lock()
	ok := !c.closed && c.index[name] == nil
	for ok && c.used+charge > c.capacity {
		ok = c.evictOne()
	}
	if ok {
		c.used += charge
		c.writers.Add(1)
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	defer c.writers.Done()
	tmp, err := c.writeTemp(file)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		err = os.Rename(tmp, filepath.Join(c.dir, name))
	}
	if err != nil {
		if tmp != "" {
			os.Remove(tmp)
		}
		c.used -= charge
		c.writeErrors.Add(1)
		return
	}
	e := &entry{name: name, charge: charge}
	if c.hand != nil {
		e.elem = c.clock.InsertBefore(e, c.hand)
	} else {
		e.elem = c.clock.PushBack(e)
	}
	c.index[name] = e
}

// writeTemp writes file to a new temporary file in the directory and
// returns its path ("" if none was created).
func (c *Cache) writeTemp(file []byte) (string, error) {
	if c.writeFault != nil {
		if err := c.writeFault(); err != nil {
			return "", err
		}
	}
	f, err := os.CreateTemp(c.dir, tmpPref+"*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(file)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}
