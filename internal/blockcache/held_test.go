//go:build unix

package blockcache

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// heldUser does with its Table and held memory what a reader does with
// its filter copy: Hold, fill, probe (even racing its own Close), Release
// and close the Table at its Close.
type heldUser struct {
	tb *Table
	h  Handle
	b  []byte // h.Bytes(), kept past the Release as a reader keeps its copy
}

func newHeldUser(t testing.TB, c *Cache, n int) *heldUser {
	t.Helper()
	tb, err := c.NewTable(16)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := tb.Hold(n)
	if !ok {
		t.Fatalf("Hold(%d) failed", n)
	}
	b := h.Bytes()
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return &heldUser{tb: tb, h: h, b: b}
}

// probe reads the held byte at i, as a reader's Get probes its filter
// before it pins itself: u, and so its Table, is reachable meanwhile.
func (u *heldUser) probe(i uint64) byte {
	v := u.b[i%uint64(len(u.b))]
	runtime.KeepAlive(u)
	return v
}

// close is the reader's Close: the Handle released, the Table closed.
func (u *heldUser) close() {
	u.h.Release()
	u.tb.Close()
}

// TestHeldMemoryOutlivesClose: Hold's memory lies outside the cache's
// mapping, so Close unmaps the cache's whole address range at once; the
// held memory stays readable after its Release and the Close, reading as
// zeros, for as long as its Table is reachable, and is unmapped once the
// Table is garbage.
func TestHeldMemoryOutlivesClose(t *testing.T) {
	c := newCache(8 << 20)
	if !c.offHeap {
		t.Skip("no anonymous mapping here")
	}
	u := newHeldUser(t, c, 10000)
	if p, lo := uintptr(unsafe.Pointer(&u.b[0])), uintptr(unsafe.Pointer(&c.mem[0])); p >= lo && p < lo+uintptr(len(c.mem)) {
		t.Fatal("held memory lies in the cache's mapping")
	}
	for i := range uint64(20) {
		if v := u.probe(i); v != byte(i*7+1) {
			t.Fatalf("held byte %d is %d", i, v)
		}
	}
	if st := c.Stats(); st.Held != 10048 || st.Size != 10048 {
		t.Fatalf("after Hold(10000): %+v; want Held and Size 10048 (whole chunks)", st)
	}
	u.close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !c.unmapped.Load() {
		t.Fatal("Close kept the cache's mapping after a Hold")
	}
	// Garbage collections, and the cleanups they run, leave the memory of
	// a Table still reachable mapped.
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for i := range uint64(len(u.b)) {
		if v := u.probe(i); v != 0 {
			t.Fatalf("held byte %d after Release and Close is %d, want 0", i, v)
		}
	}
	// Once the Table is garbage, the held mapping goes.
	before := heldUnmaps.Load()
	u = nil
	deadline := time.Now().Add(10 * time.Second)
	for heldUnmaps.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("the held mapping was not unmapped once its Table was garbage")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestHeldProbesRaceClose: goroutines probe held memory, as a reader's
// Gets do before they pin it, while the holder releases it, closes its
// Table and the Cache closes; every munmap really unmaps, so a probe of
// unmapped memory faults (and fails the test). Repeated, to catch the
// interleavings.
func TestHeldProbesRaceClose(t *testing.T) {
	rounds := 100
	if testing.Short() || raceEnabled {
		rounds = 30
	}
	for r := range rounds {
		c := newCache(4 << 20)
		if !c.offHeap {
			t.Skip("no anonymous mapping here")
		}
		u := newHeldUser(t, c, 64<<10)
		var (
			wg     sync.WaitGroup
			faults atomic.Int64
			stop   atomic.Bool
		)
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
				defer func() {
					if recover() != nil {
						faults.Add(1)
					}
				}()
				for i := uint64(g); !stop.Load(); i += 2 {
					u.probe(i * 1_000_003) // its value may be 0 once released
				}
			}()
		}
		runtime.Gosched()
		u.close()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if !c.unmapped.Load() {
			t.Fatalf("round %d: Close kept the mapping", r)
		}
		if r%10 == 0 {
			// The Table is reachable from the probers: a GC, and the
			// cleanups it queues, must not unmap the memory under them.
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		stop.Store(true)
		wg.Wait()
		if n := faults.Load(); n != 0 {
			t.Fatalf("round %d: %d probes faulted", r, n)
		}
	}
}

// TestReserveRacesClose: Reserves in flight on a Table while it and then
// its Cache close, as a reader's calls in flight race its Close and its
// user's Close of the cache. Reserve (and Hold) check closed again under
// the shard's lock, so that either Close finds the block (and fails until
// it is released) or the Reserve finds the Table closed: never a block
// set aside in a cache closed, and unmapped, under it. Without that
// check, 1 round in about 50 faulted.
func TestReserveRacesClose(t *testing.T) {
	rounds := 300
	if testing.Short() || raceEnabled {
		rounds = 50
	}
	for r := range rounds {
		c := newCache(1 << 20)
		tb := newTable(t, c, 64)
		var (
			wg     sync.WaitGroup
			faults atomic.Int64
		)
		start := make(chan struct{})
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
				defer func() {
					if recover() != nil {
						faults.Add(1)
					}
				}()
				<-start
				for i := 0; ; i++ {
					h, ok := tb.Reserve((i*2+g)%64, 4096)
					if !ok {
						if tb.closed.Load() {
							return
						}
						continue
					}
					fill(h.Bytes(), tb.id, i, 1)
					h.Release()
				}
			}()
		}
		close(start)
		runtime.Gosched()
		tb.Close()
		for c.Close() != nil {
			runtime.Gosched()
		}
		wg.Wait()
		if n := faults.Load(); n != 0 {
			t.Fatalf("round %d: %d fills of blocks set aside in a closed cache faulted", r, n)
		}
	}
}

// vmSize returns the process's virtual size, VmSize in /proc/self/status.
func vmSize(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmSize in /proc/self/status")
	return 0
}

// cycleHeld makes a 1 GiB cache, has a reader-like holder fill a 100 KiB
// filter copy there and probe it, closes both, and reports whether Close
// gave the cache's mapping back.
func cycleHeld(t testing.TB) bool {
	c, err := New(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	u := newHeldUser(t, c, 100<<10)
	for i := range uint64(64) {
		u.probe(i * 4099)
	}
	u.close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(8) { // a Get racing the closes, too late
		u.probe(i)
	}
	return c.unmapped.Load()
}

// TestClosedCachesReturnAddressSpace: 1,000 cycles of a new 1 GiB cache, a
// reader-like holder probing its filter copy (Hold) there, and Close of
// both leave the virtual size flat. Each Close unmaps the cache's range
// (its entries once the Cache is garbage), and each copy's mapping goes
// once its holder is garbage. When a Hold made Close keep the
// cache's range for ever, readable, each cycle added 1 GiB (50 cycles:
// VmSize +50 GiB). The Go heap (which held each cache's 34 MiB of
// entries and bitmaps before they moved into its mapping) grows to its
// peak over the first cycles (and its arenas' reservations with it), so
// the bounds are loose on VmSize (512 MiB) and tighter on VmSize less the
// runtime's own Sys (64 MiB): one cache's range kept would be 1024 MiB. Measured: VmSize flat at 2515
// MiB from cycle 250 to 1000, with every copy's mapping unmapped.
func TestClosedCachesReturnAddressSpace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmSize is Linux's /proc/self/status")
	}
	cycles, warm := 1000, 50
	if testing.Short() || raceEnabled { // under -race a cycle takes 120 ms, not 9
		cycles, warm = 100, 20
	}
	for range warm { // the heap grows to its peak
		cycleHeld(t)
	}
	var ms runtime.MemStats
	collect := func() (vm, sys int64) {
		for range 3 { // cleanups run after the GC that finds their Tables garbage
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		runtime.ReadMemStats(&ms)
		return vmSize(t), int64(ms.Sys)
	}
	before, sysBefore := collect()
	for i := range cycles {
		if !cycleHeld(t) {
			t.Fatalf("cycle %d: the closed cache kept its mapping", i)
		}
	}
	after, sysAfter := collect()
	grew, heap := after-before, sysAfter-sysBefore
	t.Logf("%d cycles of a 1 GiB cache with a held filter copy: VmSize %d -> %d MiB, of which the Go runtime's Sys %d -> %d MiB",
		cycles, before>>20, after>>20, sysBefore>>20, sysAfter>>20)
	if grew-heap > 64<<20 || grew > 512<<20 { // one cycle's range kept would be 1024 MiB
		t.Fatalf("%d cycles of a 1 GiB cache grew the virtual size by %d MiB (%d MiB of it the Go runtime's)", cycles, grew>>20, heap>>20)
	}
}
