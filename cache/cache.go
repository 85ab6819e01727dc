package cache

import (
	"errors"
	"fmt"

	"github.com/sstkit/sstable/internal/blockcache"
)

// MaxCapacity is the largest budget a Cache takes, in bytes (256 GiB).
const MaxCapacity = 256 << 30

// MinCapacity is the smallest budget New takes, in bytes (64): one
// 64-byte chunk, the least memory a cached block takes. A smaller cache
// would hold nothing, every lookup a miss, so New refuses it rather than
// turn caching off without a word for a mistyped size (0, a negative
// number). Tiny caches from MinCapacity up are allowed, for tests that
// want constant eviction; a real one wants megabytes
// (reader.DefaultCacheSize is 64 MiB).
const MinCapacity = blockcache.ChunkSize

// ErrTooSmall is wrapped by the error New returns for a capacity below
// MinCapacity.
var ErrTooSmall = errors.New("cache: capacity below MinCapacity")

// ErrInUse is wrapped by the error Close returns while readers opened with
// the cache are still open.
var ErrInUse = blockcache.ErrInUse

// ErrClosed is wrapped by the error a reader's open returns when its
// Options.Cache is already closed.
var ErrClosed = blockcache.ErrClosed

// Cache is a byte-budgeted cache of decoded blocks shared by many table
// readers (reader.Options.Cache). It is safe for concurrent use.
type Cache struct {
	c *blockcache.Cache
}

// Stats are a Cache's counters. All are cumulative since New except
// Capacity and Size.
type Stats struct {
	Capacity  int64 // the budget given to New, in bytes
	Size      int64 // bytes held by cached blocks, pinned or not, each rounded up to a multiple of 64; never above Capacity
	Hits      int64 // block lookups that found their block
	Misses    int64 // block lookups that had to read the block
	Evictions int64 // blocks evicted to make room
	Refused   int64 // misses of blocks not admitted: a memory-mapped table's block missed for the first time while its shard is full, of bytes or of entries (one per 2 KiB), is decoded outside it (see the reader's Memory section)
	Held      int64 // bytes of Size that readers hold for the tables they have open, released at their Close: their copies of version 4 filters, and charges for what they keep on the Go heap (per-block slots and flags, partitions' keys)
}

// The public limit is the implementation's: blocks are addressed by 32-bit
// numbers of 64-byte chunks.
var _ [MaxCapacity - blockcache.MaxCapacity]struct{}
var _ [blockcache.MaxCapacity - MaxCapacity]struct{}

func init() {
	blockcache.FromPublic = func(pub any) *blockcache.Cache { return pub.(*Cache).c }
}

// New returns a Cache holding at most capacity bytes of blocks. The budget
// is reserved at once as address space and takes memory only as blocks
// fill it. A capacity above MaxCapacity is taken as MaxCapacity. New
// returns an error wrapping ErrTooSmall, and no Cache, for a capacity
// below MinCapacity (64 bytes), 0 and negative ones included, and an
// error if the address space cannot be reserved (under ulimit -v, say);
// it never falls back to the Go heap.
func New(capacity int64) (*Cache, error) {
	if capacity < MinCapacity {
		return nil, &tooSmallError{capacity: capacity}
	}
	c, err := blockcache.New(capacity)
	if err != nil {
		return nil, err
	}
	return &Cache{c: c}, nil
}

// Capacity returns the budget given to New, in bytes.
func (c *Cache) Capacity() int64 { return c.c.Capacity() }

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	s := c.c.Stats()
	return Stats{Capacity: s.Capacity, Size: s.Size, Hits: s.Hits, Misses: s.Misses, Evictions: s.Evictions, Refused: s.Refused, Held: s.Held}
}

// Close gives the cache's memory back at once (its pages and its address
// range, but for its entries' range, 3% of the capacity, which goes once
// the Cache is garbage; see the package doc). It returns an error wrapping ErrInUse
// while readers opened with the cache are open (or their blocks pinned);
// the cache then stays usable. Closing twice returns nil.
func (c *Cache) Close() error { return c.c.Close() }

// tooSmallError is New's error for a capacity below MinCapacity: its
// message says "cache: " once, and errors.Is finds ErrTooSmall.
type tooSmallError struct{ capacity int64 }

func (e *tooSmallError) Error() string {
	return fmt.Sprintf("cache: capacity %d bytes is below the minimum, MinCapacity (%d bytes): a cache that small holds nothing", e.capacity, MinCapacity)
}

func (e *tooSmallError) Unwrap() error { return ErrTooSmall }
