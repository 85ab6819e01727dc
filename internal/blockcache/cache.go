package blockcache

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/internal/prefetch"
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
	offHeap  bool        // mem came from mmapAnon and is released by Close (munmap)
	prefault *prefaulter // faults mem in 2 MiB at a time, on huge pages while they come cheap; nil for a budget on the Go heap or under 4 MiB
	shards   []shard
	shift    uint // shard index = mixed key >> shift
	entries  []entry

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
	total := n * shardChunks * ChunkSize
	if total > 0 {
		mem, offHeap, err := mmapAnon(total)
		if err != nil {
			return nil, fmt.Errorf("cache: reserving %d bytes of address space: %w", total, err)
		}
		c.mem, c.offHeap = mem, offHeap
		if offHeap {
			c.prefault = newPrefaulter(c.mem)
		}
	}
	// Entry state: one entry per 2 KiB of budget. When blocks are smaller
	// on average, a shard evicts to free an entry.
	perShard := max(shardChunks*ChunkSize/entryBytes, 16)
	if shardChunks == 0 {
		perShard = 0
	}
	c.entries = make([]entry, n*perShard)
	for s := range c.shards {
		c.shards[s].init(c, s, s*shardChunks, shardChunks, int32(s*perShard), perShard)
	}
	return c, nil
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

// Close releases the cache's memory. Off-heap memory goes back to the
// kernel lazily (on Linux MADV_FREE: reclaimed under memory pressure), and
// up to 1 GiB of closed caches' mappings are kept for the next New of
// the same capacity, which then fills them without a page fault per 4 KiB
// where the kernel has not taken the pages back, as a malloc reuses freed
// memory (a first scan of a 1M-entry snappy table through a new 256 MiB
// cache: 99 to 69-75 ns per entry, bench/cmd/compare). Close gives the
// whole mapping up at once, whatever Hold set aside in the cache: held
// memory lies in mappings of its own, which last as long as their Tables
// (see Hold). It returns an error wrapping ErrInUse
// while Tables are open (readers still using the cache) or Handles still
// pin blocks; the cache then stays usable. Closing twice returns nil.
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
		munmap(c.mem)
		c.unmapped.Store(true)
	}
	c.mem = nil
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

// entry is the state of one cached block. refs is 0 while the entry is
// free; a listed entry holds 1 for the cache plus 1 per pin. The other
// fields are written under the shard's lock while refs is 0 (or by the
// pinning filler before publication), and read by lock-free lookups only
// after a successful pin, which orders them after the writes. An entry
// is 64 bytes, a cache line (the array of a cache over 1 MiB starts on a
// page): at 56, most entries straddled two lines, and in a cache whose
// entries outgrow the CPU's caches a lookup or an eviction paid two misses.
type entry struct {
	refs  atomic.Int32
	freq  atomic.Uint32 // S3-FIFO access count, 0 to 3
	chunk uint32        // first chunk, an index into Cache.mem in chunks
	n     uint32        // bytes of block
	aux   uint32        // the caller's word, set by Publish
	table *Table
	slot  int32 // the block's slot in table
	idx   int32 // this entry's index in Cache.entries
	prev  int32 // queue links, entry indices; -1 at the ends
	next  int32
	queue uint8
	shard uint8
	_     [6]byte
	held  *heldMem // Hold's memory, outside mem; nil for any other entry
}

// queue values.
const (
	qNone     = iota // free, or reserved and not yet published
	qSmall           // S3-FIFO's small queue
	qMain            // S3-FIFO's main queue
	qDetached        // dropped by the cache while pinned: freed on the last Release
	qHeld            // set aside by Hold: never listed, freed on its Release
)

// Slot words of Table.slots: 0 when empty; for a cached block, the entry
// index + 1 in bits 32-62 and its first chunk in bits 0-31; for a ghost
// (a block the small queue evicted without a second use), ghostBit and the
// shard's eviction clock at the time.
const ghostBit = 1 << 63

func liveWord(e int32, chunk uint32) uint64 { return uint64(e+1)<<32 | uint64(chunk) }

// Handle pins a cached block, or holds a block the cache could not take.
// The zero Handle holds nothing. Handles are values: copying one does not
// add a pin, and each pin must be released exactly once.
type Handle struct {
	e *entry
	b []byte
}

// Bytes returns the block: n bytes as given to Reserve. They stay valid
// until Release.
func (h Handle) Bytes() []byte { return h.b }

// Aux returns the word given to Publish.
func (h Handle) Aux() uint32 {
	if h.e == nil {
		return 0
	}
	return h.e.aux
}

// Cached reports whether h pins a block in the cache.
func (h Handle) Cached() bool { return h.e != nil }

// Release drops the pin. The block's bytes must not be used afterwards.
// Releasing the zero Handle, or releasing twice through the same *Handle,
// does nothing.
func (h *Handle) Release() {
	e := h.e
	if e == nil {
		return
	}
	h.e, h.b = nil, nil
	if e.refs.Add(-1) == 0 {
		e.table.c.shards[e.shard].freeUnlisted(e)
	}
}

// Table is one user's view of a Cache: a fixed array of numbered block
// slots. Lookups go through the slots, so a hit costs an array load and a
// compare-and-swap, with no hashing and no lock. Safe for concurrent use.
type Table struct {
	c      *Cache
	id     uint64
	slots  []atomic.Uint64
	closed atomic.Bool
	user   *tableUser

	chargeMu sync.Mutex
	charges  []Handle // set aside by Charge, released by Close
}

// Cache returns the Cache t belongs to.
func (t *Table) Cache() *Cache { return t.c }

// Len returns the number of slots.
func (t *Table) Len() int { return len(t.slots) }

// GetAt is Get for a caller about to read the block's bytes from offset
// off: it starts loading their first cache lines before it pins the
// block, so that the two memory accesses overlap rather than follow one
// another. off is only a hint; an offset past the block prefetches
// nothing useful but does no harm.
func (t *Table) GetAt(i, off int) (Handle, bool) {
	if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 && off >= 0 {
		if p := int(uint32(w))*ChunkSize + off; p < len(t.c.mem) {
			prefetch.Bytes(t.c.mem[p:], 192)
		}
	}
	return t.Get(i)
}

// GetAtStart is GetAt for a caller that will also read the block's first
// bytes (a version 4 table's entry shares its key with the block's first
// entry): it asks for their cache line too.
func (t *Table) GetAtStart(i, off int) (Handle, bool) {
	if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 && off >= 0 {
		base := int(uint32(w)) * ChunkSize
		if p := base + off; p < len(t.c.mem) {
			prefetch.Bytes(t.c.mem[p:], 192)
			prefetch.Bytes(t.c.mem[base:], 64)
		}
	}
	return t.Get(i)
}

// Window returns the cache memory where block i lies, its first n bytes,
// if it is cached; nil if not. The block is not pinned: it may be evicted
// and its memory reused at any time, so the bytes must never be read,
// only handed to package prefetch, which never faults. A forward scan
// asks for the next block's lines a few at a time while it reads the
// current one, as it cannot know a cached block's address otherwise:
// blocks decoded by point lookups lie scattered in the cache's memory,
// where the CPU's own prefetcher does not follow. It also starts loading
// the block's entry, which the Get that pins the block reads.
func (t *Table) Window(i, n int) []byte {
	if i < 0 || i >= len(t.slots) {
		return nil
	}
	w := t.slots[i].Load()
	if w == 0 || w&ghostBit != 0 {
		return nil
	}
	if e := int(w>>32) - 1; e < len(t.c.entries) {
		prefetch.Line(unsafe.Pointer(&t.c.entries[e]))
	}
	p := int(uint32(w)) * ChunkSize
	if p >= len(t.c.mem) {
		return nil
	}
	return t.c.mem[p:min(p+n, len(t.c.mem))]
}

// Get returns block i pinned, if cached. Release the Handle when done.
// i must be in [0, Len()).
func (t *Table) Get(i int) (Handle, bool) {
	w := t.slots[i].Load()
	if w == 0 || w&ghostBit != 0 {
		return Handle{}, false
	}
	c := t.c
	e := &c.entries[int32(w>>32)-1]
	for {
		r := e.refs.Load()
		if r <= 0 {
			return Handle{}, false
		}
		if e.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	// The slot was read before the pin: the entry may since have been
	// evicted and reused, even for block i of t again, in the same chunks,
	// by a Reserve whose caller is still filling it. Once pinned, the
	// entry cannot be freed, so if the slot still holds w, the entry is
	// the block published there.
	if t.slots[i].Load() != w {
		h := Handle{e: e}
		h.Release()
		return Handle{}, false
	}
	if f := e.freq.Load(); f < 3 {
		e.freq.CompareAndSwap(f, f+1) // a lost race loses one count, never exceeds 3
	}
	c.shards[e.shard].hits.Add(1)
	off := uintptr(e.chunk) * ChunkSize
	return Handle{e: e, b: c.mem[off : off+uintptr(e.n) : off+uintptr(e.n)]}, true
}

// Reserve counts a miss of block i and sets aside n bytes for it, pinned
// and not yet visible to Get. Fill Bytes, then Publish the Handle, or
// Release it to give the bytes back. It reports false, and the caller
// should use memory of its own, when n is 0 or larger than a shard, when
// t is closed, or when every block that could make room is pinned.
func (t *Table) Reserve(i, n int) (Handle, bool) { return t.reserve(i, n, false) }

// ReserveAdmitted is Reserve for a caller that can as well use memory of
// its own, at the cost of the same work again on the block's next miss
// (a decompression of a mapped block, not a read): when the block would
// take the place of others, it admits the block only if it missed
// recently before. A block missed for the first time is then not
// admitted: its slot remembers it as a ghost, as if it had passed through
// the small queue, and a miss within the ghost window (as many misses
// and small-queue evictions as the main queue holds blocks) is admitted,
// straight to the main queue. One-off lookups of a table many times the
// cache thus neither pay for an insertion and an eviction nor churn the
// blocks lookups keep using: TinyLFU's doorkeeper (Gil Einziger, Roy
// Friedman, Ben Manes: "TinyLFU: A Highly Efficient Cache Admission
// Policy", ACM TOS 2017) on S3-FIFO's ghosts. While the shard has room,
// a free entry and a run of free chunks for the block, every block is
// admitted; when either is missing, as the entries are in a shard of
// blocks smaller than 2 KiB on average however many chunks are free,
// admitting the block would evict.
func (t *Table) ReserveAdmitted(i, n int) (Handle, bool) { return t.reserve(i, n, true) }

func (t *Table) reserve(i, n int, doorkeeper bool) (Handle, bool) {
	s := t.c.shardOf(t.id, i)
	s.misses.Add(1)
	if n <= 0 || n > s.nchunks*ChunkSize || t.closed.Load() {
		return Handle{}, false
	}
	k := (n + ChunkSize - 1) / ChunkSize
	s.mu.Lock()
	if t.closed.Load() { // again under the lock: see hold
		s.mu.Unlock()
		return Handle{}, false
	}
	if doorkeeper && !s.hasRoom(k) {
		w := t.slots[i].Load()
		if w&ghostBit == 0 || s.clock-uint32(w) > uint32(s.main.n) {
			if w == 0 || w&ghostBit != 0 {
				s.clock++
				t.slots[i].Store(ghostBit | uint64(s.clock))
			}
			s.refused++
			s.mu.Unlock()
			return Handle{}, false
		}
	}
	e, ok := s.alloc(k)
	if !ok {
		s.mu.Unlock()
		return Handle{}, false
	}
	e.table, e.slot, e.n, e.aux, e.queue = t, int32(i), uint32(n), 0, qNone
	e.freq.Store(0)
	e.refs.Store(1) // the caller's pin
	s.mu.Unlock()
	off := uintptr(e.chunk) * ChunkSize
	if pf := t.c.prefault; pf != nil {
		pf.reserved(int(off), n)
	}
	return Handle{e: e, b: t.c.mem[off : off+uintptr(n) : off+uintptr(n)]}, true
}

// Hold sets aside n bytes of the budget for a user's own long-lived data
// (a reader's copy of its table's filter), pinned until the Handle's
// Release: counted in Stats.Size and Stats.Held, never evicted, never seen
// by Get. It evicts blocks to make room, and reports false when it cannot
// (n is larger than a shard, or the blocks there are pinned), or when
// the memory cannot be mapped.
//
// The bytes themselves lie outside the budget's mapping, in a private
// mapping of their own (n rounded up to whole pages), faulted in at once;
// the chunks of the budget set aside for them are never written, as
// Charge's are not. Such memory outlives its Release and even the
// Cache's Close: from the Release it reads as zeros (its pages go back to
// the kernel then), and it stays mapped for as long as t is reachable,
// unmapped only once t is garbage. A holder that reads it while it can
// reach t, as a reader racing its own Close probes its filter copy while
// its source keeps its Table, thus never faults; and Close gives the
// cache's own address range back at once, whatever was held in it.
func (t *Table) Hold(n int) (Handle, bool) { return t.hold(-1, n, true) }

// hold is Hold in the shard of key (negative: never a block's); readable
// says the holder reads and writes the memory (Charge's never does), which
// is then mapped apart.
func (t *Table) hold(key, n int, readable bool) (Handle, bool) {
	s := t.c.shardOf(t.id, key)
	if n <= 0 || n > s.nchunks*ChunkSize || t.closed.Load() {
		return Handle{}, false
	}
	var hm *heldMem
	if readable {
		mem, ok := mapHeld(n)
		if !ok {
			return Handle{}, false
		}
		hm = &heldMem{mem: mem}
	}
	k := (n + ChunkSize - 1) / ChunkSize
	s.mu.Lock()
	// Checked again under the lock, which Cache.Close takes to see that
	// the shard holds nothing: the Table's Close, and so the Cache's, may
	// have come since the check above. Either Close finds this block
	// held (and fails), or this finds t closed.
	if t.closed.Load() {
		s.mu.Unlock()
		hm.unmap()
		return Handle{}, false
	}
	e, ok := s.alloc(k)
	if !ok {
		s.mu.Unlock()
		hm.unmap()
		return Handle{}, false
	}
	e.table, e.slot, e.n, e.aux, e.queue = t, -1, uint32(n), 0, qHeld
	e.freq.Store(0)
	e.refs.Store(1) // the holder's pin, its only reference
	e.held = hm
	s.mu.Unlock()
	t.c.held.Add(int64(k * ChunkSize))
	if hm != nil {
		// Unmapped when t is garbage: a reader probing the memory
		// after its Release can reach t (its source keeps it).
		runtime.AddCleanup(t, unmapHeld, hm.mem)
		return Handle{e: e, b: hm.mem[:n:n]}, true
	}
	off := uintptr(e.chunk) * ChunkSize
	return Handle{e: e, b: t.c.mem[off : off+uintptr(n) : off+uintptr(n)]}, true
}

// heldMem is the mapping of Hold's memory, whole pages.
type heldMem struct{ mem []byte }

// unmap unmaps memory never handed out; nil does nothing.
func (hm *heldMem) unmap() {
	if hm != nil {
		unmapHeld(hm.mem)
	}
}

// Charge sets aside n bytes of the budget for memory the user keeps
// outside the cache, on the Go heap (a reader's per-block state, its
// partitions' keys), as RocksDB's cache reservations charge the block
// cache for memory it does not hold: counted in Stats.Size and Stats.Held,
// never evicted, until t is closed. The chunks set aside are never
// written, so they cost no resident memory unless blocks used them
// before. A charge is taken in pieces of at most an eighth of a shard,
// each from the shard its piece number maps to, evicting blocks to make
// room. It reports false, leaving what it took charged, when a piece
// finds no room (the blocks there are pinned) or t is closed: the memory
// is then in use all the same, uncounted.
func (t *Table) Charge(n int) bool {
	piece := max(ChunkSize, t.c.shards[0].nchunks*ChunkSize/8)
	for j := 0; n > 0; j++ {
		k := min(n, piece)
		h, ok := t.hold(-(j+1)*shardRun, k, false) // a shard per piece
		if !ok {
			return false
		}
		t.chargeMu.Lock()
		if t.closed.Load() {
			t.chargeMu.Unlock()
			h.Release()
			return false
		}
		t.charges = append(t.charges, h)
		t.chargeMu.Unlock()
		n -= k
	}
	return true
}

// MinCharge is the smallest slot array, in bytes, a Table charges to the
// budget: a reader keeps a few KiB of its own uncounted, as the cost of
// being open, rather than charge for every table however small.
const MinCharge = 4 << 10

// chargeSlots charges t's slot array, 8 bytes a slot, from MinCharge
// bytes up.
func (t *Table) chargeSlots() {
	if b := len(t.slots) * 8; b >= MinCharge {
		t.Charge(b)
	}
}

// Publish makes the block of h, a Handle from Reserve(i, ...) filled by the
// caller, visible to Get as block i, with aux as its Aux word. The Handle
// stays pinned. If another caller published block i first, or t is
// closed, the block stays private to h and is freed on its Release.
func (t *Table) Publish(i int, h Handle, aux uint32) {
	e := h.e
	if e == nil {
		return
	}
	s := &t.c.shards[e.shard]
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.table != t || e.slot != int32(i) || e.queue != qNone {
		return // not a Handle from t.Reserve(i, ...), or published already
	}
	e.aux = aux
	old := t.slots[i].Load()
	if t.closed.Load() || (old != 0 && old&ghostBit == 0) {
		e.queue = qDetached
		return
	}
	q := &s.small
	if old&ghostBit != 0 && s.clock-uint32(old) <= uint32(s.main.n) {
		q = &s.main // S3-FIFO: a ghost comes back to the main queue
	}
	s.push(q, e)
	e.refs.Add(1) // the cache's reference
	t.slots[i].Store(liveWord(e.idx, e.chunk))
	// Close does not take the lock for a slot it finds empty or a ghost:
	// if it set closed after the check above, it may have passed slot i
	// before the Store. Closed, seen after the Store, means it did; drop
	// the block as Close would have.
	if t.closed.Load() {
		s.unlink(e)
		t.slots[i].Store(0)
		e.queue = qDetached
		e.refs.Add(-1) // never the last: h's pin remains
	}
}

// Close drops every block of t from the cache. Pinned blocks are freed
// when their last Handle is released. Later Reserves report false. Close
// is idempotent; it does not wait for Handles to be released.
func (t *Table) Close() {
	if t.closed.Swap(true) {
		return
	}
	for i := range t.slots {
		w := t.slots[i].Load()
		if w&ghostBit != 0 {
			t.slots[i].Store(0)
			continue
		}
		if w == 0 {
			continue
		}
		s := t.c.shardOf(t.id, i)
		s.mu.Lock()
		if w := t.slots[i].Load(); w != 0 && w&ghostBit == 0 {
			e := &t.c.entries[int32(w>>32)-1]
			s.unlink(e)
			t.slots[i].Store(0)
			e.queue = qDetached
			if e.refs.Add(-1) == 0 {
				s.release(e)
			}
		}
		s.mu.Unlock()
	}
	t.chargeMu.Lock()
	for i := range t.charges {
		t.charges[i].Release()
	}
	t.charges = nil
	t.chargeMu.Unlock()
	t.c.mu.Lock()
	if t.user.open--; t.user.open == 0 {
		t.c.tables--
	}
	t.c.mu.Unlock()
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
