package blockcache

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ChunkSize is the allocation unit, in bytes: a block of n bytes holds
// ceil(n / ChunkSize) contiguous chunks, and Stats.Size counts chunks.
const ChunkSize = 64

// MaxShards is the most shards a Cache splits its budget into. A cache of
// capacity C has min(MaxShards, C / 4 MiB) shards, at least one, so that
// a shard holds at least 4 MiB (about 900 blocks of 4 KiB).
const MaxShards = 16

const minShardBytes = 4 << 20

// shardRun is how many neighbouring blocks of a table map to one shard.
const shardRun = 32

// entryBytes is the budget per preallocated entry: a cache holds at most
// capacity / entryBytes blocks.
const entryBytes = 2048

// ErrInUse is wrapped by the error Close returns while tables are open or
// blocks are pinned.
var ErrInUse = errors.New("cache: in use")

// ErrClosed is returned by NewTable on a closed Cache.
var ErrClosed = errors.New("cache: closed")

// Stats are a Cache's counters. All are cumulative since New except
// Capacity and Size.
type Stats struct {
	Capacity  int64 // the budget given to New, in bytes
	Size      int64 // bytes of chunks held by cached blocks, pinned or not; never above Capacity
	Hits      int64 // Table.Get calls that found their block
	Misses    int64 // Table.Reserve calls: blocks that had to be read
	Evictions int64 // blocks evicted to make room
	Refused   int64 // misses ReserveAdmitted did not admit: blocks missed once, when admitting them would evict
	Held      int64 // bytes of Size (whole chunks, as Size counts them) set aside by Table.Hold (readers' filter copies) and Table.Charge (their state on the Go heap), until released
}

// Cache is a byte-budgeted cache of blocks shared by many Tables. It is
// safe for concurrent use.
type Cache struct {
	capacity int64
	mem      []byte      // the budget's memory; shard s owns mem[s*shardBytes:][:shardBytes]
	region   []byte      // the mapping: mem, the entries (see newEntries), then meta
	meta     []byte      // the shards' bitmaps and run trees, zero in a new mapping
	offHeap  bool        // region came from mmapAnon and is released by Close (munmap)
	prefault *prefaulter // faults mem in 2 MiB at a time, on huge pages while they come cheap; nil for a budget on the Go heap or under 4 MiB
	shards   []shard
	shift    uint // shard index = mixed key >> shift
	entries  []entry
	num      uint32 // the Cache's number in caches

	mu     sync.Mutex // guards tables, users' counts and closed
	tables int        // users with a Table open (see Table.NewSibling)
	closed bool
	nextID atomic.Uint64

	held     atomic.Int64 // bytes set aside by Hold and not yet released
	unmapped atomic.Bool  // Close gave mem back (munmap); for tests
}

// MaxCapacity is the largest budget a Cache takes, in bytes (256 GiB):
// blocks are addressed by 32-bit chunk numbers.
const MaxCapacity = 1 << 32 * ChunkSize

// New returns a Cache holding at most capacity bytes of blocks. Its memory
// is reserved at once, as an anonymous mapping that takes pages only as
// blocks fill it. A capacity below one chunk gives a cache that holds
// nothing; one above MaxCapacity is taken as MaxCapacity. It returns an
// error when the mapping cannot be made (an address-space limit, say),
// never falling back to the Go heap; only where the platform has no
// anonymous mappings (not unix) is the budget taken from the heap.
func New(capacity int64) (*Cache, error) {
	capacity = min(max(capacity, 0), MaxCapacity)
	n := 1
	for n < MaxShards && capacity/int64(2*n) >= minShardBytes {
		n *= 2
	}
	shardChunks := int(capacity / int64(n) / ChunkSize)
	c := &Cache{capacity: capacity, shards: make([]shard, n), shift: uint(64 - bits.Len(uint(n-1)))}
	if n == 1 {
		c.shift = 64
	}
	// Entry state: one entry per 2 KiB of budget. When blocks are smaller
	// on average, a shard evicts to free an entry.
	perShard := max(shardChunks*ChunkSize/entryBytes, 16)
	if shardChunks == 0 {
		perShard = 0
	}
	// The mapping holds the budget's memory, the entries, and from a page
	// boundary the shards' bitmaps and run trees (meta), which read as
	// free where zero: New writes none of it but over each shard's end,
	// and pages are taken as blocks come.
	total := n * shardChunks * ChunkSize
	var meta *arena
	if total > 0 {
		at := total + entriesBytes(n*perShard)
		at = (at + pageSize - 1) / pageSize * pageSize
		region, offHeap, err := mmapAnon(at + n*shardMetaBytes(shardChunks))
		if err != nil {
			return nil, fmt.Errorf("cache: reserving %d bytes of address space: %w", total, err)
		}
		c.region, c.offHeap = region, offHeap
		c.mem = region[:total:total]
		c.entries = newEntries(region[total:], n*perShard)
		c.meta = region[at:]
		meta = &arena{b: c.meta}
		if offHeap {
			c.prefault = newPrefaulter(c.mem)
		}
	}
	register(c)
	for s := range c.shards {
		c.shards[s].init(c, s, s*shardChunks, shardChunks, int32(s*perShard), perShard, meta)
	}
	return c, nil
}

// entriesBytes is the room n entries take in the mapping, after the
// budget's memory.
func entriesBytes(n int) int { return n * int(unsafe.Sizeof(entry{})) }

// newEntries returns the n entries in b, the entriesBytes(n) bytes of the
// mapping after the budget's memory. New touches none of them: a shard
// hands its entries out in order as first needed (shard.take), so that a
// new cache costs the same whatever its capacity (a 256 MiB cache's 8 MiB
// of entries, zeroed and linked up on the Go heap, cost New 1-3 ms), and
// takes pages for them only as blocks come; newEntry sets each entry up
// as it hands it out for the first time. The entries follow whole chunks,
// so start on a 64-byte line. The race detector neither checks accesses
// to them nor orders by their atomics (memory outside the Go heap); the
// fields are written under the shard's lock, as its owners are, which it
// does check.
func newEntries(b []byte, n int) []entry {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*entry)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Capacity returns the budget given to New, in bytes.
func (c *Cache) Capacity() int64 { return c.capacity }

// Shards returns the number of shards; a block larger than
// Capacity / Shards bytes is never cached.
func (c *Cache) Shards() int { return len(c.shards) }

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	st := Stats{Capacity: c.capacity}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Size += int64(s.used) * ChunkSize
		st.Evictions += s.evictions
		st.Refused += s.refused
		s.mu.Unlock()
		st.Hits += s.hits.Load()
		st.Misses += s.misses.Load()
	}
	st.Held = c.held.Load()
	return st
}

// Close gives the cache's memory back at once: the budget's mapping and
// the shards' metadata are unmapped, and the entries (3% of the
// capacity) lose their pages, their address range unmapped once the
// Cache is garbage, since a Get racing its Table's Close may still read
// one. Nothing is kept for a later New: a closed cache leaves neither
// resident memory nor, once collected, address space. Hold's memory lies
// in mappings of its own, which last as long as their Tables (see Hold).
// It returns an error wrapping ErrInUse while Tables are open (readers
// still using the cache) or Handles still pin blocks; the cache then
// stays usable. Closing twice returns nil.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables > 0 {
		users := "users"
		if c.tables == 1 {
			users = "user"
		}
		return &inUseError{fmt.Sprintf("%d %s (table readers) still open", c.tables, users)}
	}
	if c.closed {
		return nil
	}
	// A closed Table leaves its pinned blocks to their Handles: unmapping
	// under them would make their bytes fault, or worse, alias whatever
	// is mapped there next.
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		used := s.used
		s.mu.Unlock()
		if used > 0 {
			return &inUseError{"blocks still pinned"}
		}
	}
	c.closed = true
	if c.offHeap {
		// Nothing reads here any more: no block is pinned, and Hold's
		// memory, which readers may probe after its Release, lies in
		// mappings of its own.
		// The entries stay readable until c is garbage: a Get that read
		// its slot before its Table's Close may read one still (and find
		// it free: every block was released).
		if tail := releaseRegion(c.region, len(c.mem), len(c.region)-len(c.meta)); len(tail) > 0 {
			runtime.AddCleanup(c, unmapTail, tail)
		}
		c.unmapped.Store(true)
	}
	c.mem, c.region, c.meta = nil, nil, nil
	return nil
}

// inUseError is Close's error while the cache is in use: "cache: close:
// in use: " and why. It names the package once, where wrapping ErrInUse
// with %w repeated its "cache: "; errors.Is finds ErrInUse.
type inUseError struct{ why string }

func (e *inUseError) Error() string { return "cache: close: in use: " + e.why }

func (e *inUseError) Unwrap() error { return ErrInUse }

// NewTable registers a user of the cache, such as a table reader, with n
// numbered block slots (0 to n-1). It fails with ErrClosed once Close has
// succeeded. Close the Table when done with it. A user that needs more
// than one array of slots takes the others from the first with
// NewSibling, so that Close counts it once. The slot array, 8 bytes a
// slot on the Go heap, is charged to the budget (Charge) from MinCharge
// bytes up, until the Table is closed.
func (c *Cache) NewTable(n int) (*Table, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.tables++
	t := c.newTable(n, &tableUser{})
	c.mu.Unlock()
	t.chargeSlots()
	return t, nil
}

// newTable returns a Table of n slots for user u; c.mu is held.
func (c *Cache) newTable(n int, u *tableUser) *Table {
	if n < 0 {
		n = 0
	}
	u.open++
	return &Table{c: c, id: c.nextID.Add(1), slots: make([]atomic.Uint64, n), user: u}
}

// NewSibling registers another Table of n slots for the user of t, as a
// reader keeps its data blocks apart from its sections: the siblings are
// one user, counted once by the error Cache.Close returns while tables
// are open, until the last of them is closed. Each sibling is closed on
// its own. It fails with ErrClosed once the Cache is closed.
func (t *Table) NewSibling(n int) (*Table, error) {
	t.c.mu.Lock()
	if t.c.closed {
		t.c.mu.Unlock()
		return nil, ErrClosed
	}
	if t.user.open == 0 {
		t.c.tables++ // every sibling was closed: the user is back
	}
	sib := t.c.newTable(n, t.user)
	t.c.mu.Unlock()
	sib.chargeSlots()
	return sib, nil
}

// tableUser counts the open Tables of one user: a Table and its siblings.
type tableUser struct {
	open int // guarded by Cache.mu
}

// shardOf maps block i of table id to a shard. A block always maps to the
// same shard, so its ghost timestamp is comparable with that shard's clock.
// Runs of shardRun neighbouring blocks share a shard: a scan that fills
// the cache then lays them out one after another in that shard's memory,
// where the next scan reads them as a stream, as it reads the file.
func (c *Cache) shardOf(id uint64, i int) *shard {
	h := (id<<32 ^ uint64(i/shardRun)) * 0x9e3779b97f4a7c15
	return &c.shards[h>>c.shift&uint64(len(c.shards)-1)]
}

// PoisonByte fills freed chunks in builds with the sstable_poison tag.
const PoisonByte = 0xDB

// Poisoned reports whether this build poisons freed chunks (the
// sstable_poison build tag).
const Poisoned = poison

// FromPublic returns the Cache behind a *cache.Cache. Package cache sets it
// at init, so that readers reach the implementation while users of package
// cache see only its configuration and counters.
var FromPublic func(pub any) *Cache
