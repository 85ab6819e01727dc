package diskcache

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
