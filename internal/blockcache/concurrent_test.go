package blockcache

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// blockSize is the size of block i of any table in the concurrent tests:
// mostly a few KiB, sometimes up to 64 KiB, always the same for a slot so
// that a block re-read after its eviction lands where the old one was.
func blockSize(i int) int {
	h := uint64(i+1) * 0x9e3779b97f4a7c15
	if h>>60 == 0 {
		return 1 + int(h>>20%(64<<10))
	}
	return 1 + int(h>>20%(6<<10))
}

// TestConcurrent runs goroutines over many Tables of one small cache, so
// that blocks are evicted and their chunks and entries reused all the
// time. Every block any goroutine sees must hold the bytes published for
// it, version by version, from Get to Release. Tables are closed and
// replaced under the others' feet.
func TestConcurrent(t *testing.T) {
	const (
		goroutines = 16
		tables     = 200
		slots      = 32
	)
	ops := 10000
	if testing.Short() {
		ops = 1000
	}
	c := newCache(1 << 20)
	var (
		tabs     [tables]atomic.Pointer[Table]
		versions [tables][slots]atomic.Uint32
		failed   atomic.Bool
		wg       sync.WaitGroup
	)
	for i := range tabs {
		tabs[i].Store(newTable(t, c, slots))
	}
	fail := func(format string, args ...any) {
		if failed.CompareAndSwap(false, true) {
			t.Errorf(format, args...)
		}
	}
	type held struct {
		h  Handle
		tb *Table
		i  int
		v  uint32
	}
	check := func(p held, when string) {
		b := p.h.Bytes()
		if len(b) != blockSize(p.i) || !matches(b, p.tb.id, p.i, p.v) {
			fail("%s: block %d of table %d, version %d: wrong bytes", when, p.i, p.tb.id, p.v)
		}
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			var pins []held
			release := func(j int) {
				check(pins[j], "at Release")
				pins[j].h.Release()
				pins[j] = pins[len(pins)-1]
				pins = pins[:len(pins)-1]
			}
			for op := 0; op < ops && !failed.Load(); op++ {
				// Half the operations go to 4 tables, whose blocks fit.
				ti := r.IntN(tables)
				if r.IntN(2) == 0 {
					ti = r.IntN(4)
				}
				tb := tabs[ti].Load()
				i := r.IntN(slots)
				switch k := r.IntN(100); {
				case k < 1: // replace the table
					nt, err := c.NewTable(slots)
					if err != nil {
						fail("NewTable: %v", err)
						return
					}
					if tabs[ti].CompareAndSwap(tb, nt) {
						tb.Close()
					} else {
						nt.Close()
					}
				case k < 60:
					if h, ok := tb.Get(i); ok {
						p := held{h, tb, i, h.Aux()}
						check(p, "at Get")
						pins = append(pins, p)
						break
					}
					fallthrough
				default:
					h, ok := tb.Reserve(i, blockSize(i))
					if !ok {
						break
					}
					v := versions[ti][i].Add(1)
					fill(h.Bytes(), tb.id, i, v)
					p := held{h, tb, i, v}
					if r.IntN(8) == 0 {
						pins = append(pins, p)
						release(len(pins) - 1) // give it back unpublished
						break
					}
					tb.Publish(i, h, v)
					if h.Aux() != v {
						fail("Aux %d after Publish(%d)", h.Aux(), v)
					}
					pins = append(pins, p)
				}
				for len(pins) > 3 || len(pins) > 0 && r.IntN(2) == 0 {
					release(r.IntN(len(pins)))
				}
				if op%64 == 0 {
					runtime.Gosched()
				}
			}
			for len(pins) > 0 {
				release(0)
			}
		}()
	}
	wg.Wait()
	st := c.Stats()
	t.Logf("%+v", st)
	if st.Size > st.Capacity {
		t.Errorf("Size %d above capacity", st.Size)
	}
	if st.Evictions < int64(goroutines*ops/10) || st.Hits == 0 {
		t.Errorf("too few evictions or hits to test anything: %+v", st)
	}
	for i := range tabs {
		tabs[i].Load().Close()
	}
	if st := c.Stats(); st.Size != 0 {
		t.Errorf("Size %d with every Table closed and nothing pinned", st.Size)
	}
	if err := c.Close(); err != nil && !errors.Is(err, ErrInUse) {
		t.Errorf("Close: %v", err)
	} else if err != nil {
		t.Errorf("Close after everything was released: %v", err)
	}
}

// TestGetStaleSlot races lookups of one block against its eviction and
// refilling in a cache of one chunk, where the refill always gets the
// evicted block's entry and chunk back. A Get that read the slot before
// the eviction and pinned the entry after the new Reserve must not hand
// out the block being filled: the reader checks that what it got is a
// whole published version (Aux and bytes agree) and stays so until
// Release.
func TestGetStaleSlot(t *testing.T) {
	rounds := 1000000
	if testing.Short() || raceEnabled {
		rounds = 100000
	}
	c := newCache(ChunkSize)
	tb := newTable(t, c, 1)
	if !put(tb, 0, ChunkSize, 1) {
		t.Fatal("Reserve failed")
	}
	var (
		done   atomic.Bool
		wg     sync.WaitGroup
		hits   atomic.Int64
		errors atomic.Int64
	)
	for range 1 {
		wg.Add(1)
		go func() { // the reader
			defer wg.Done()
			for !done.Load() {
				h, ok := tb.Get(0)
				if !ok {
					continue
				}
				hits.Add(1)
				v := h.Aux()
				if !matches(h.Bytes(), tb.id, 0, v) {
					errors.Add(1)
				}
				runtime.Gosched()
				if !matches(h.Bytes(), tb.id, 0, v) {
					errors.Add(1)
				}
				h.Release()
			}
		}()
	}
	for v := uint32(2); v < uint32(rounds); v++ { // the writer
		h, ok := tb.Reserve(0, ChunkSize)
		if !ok {
			continue // the reader has it pinned
		}
		fill(h.Bytes(), tb.id, 0, v)
		tb.Publish(0, h, v)
		h.Release()
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d hits, %+v", hits.Load(), c.Stats())
	if errors.Load() > 0 {
		t.Errorf("%d of %d Gets saw a block that was not a published version", errors.Load(), hits.Load())
	}
	closeAll(t, c, tb)
}

// TestPublishCloseRace races Publish against Table.Close. Whichever comes
// first, the closed Table must end up empty: a block listed behind
// Close's back would hold its chunks with no Table to drop it (and keep
// Cache.Close refusing).
func TestPublishCloseRace(t *testing.T) {
	rounds := 100000
	if testing.Short() || raceEnabled {
		rounds = 5000
	}
	c := newCache(64 << 10)
	for round := range rounds {
		tb := newTable(t, c, 1)
		h, ok := tb.Reserve(0, 100)
		if !ok {
			t.Fatal("Reserve failed")
		}
		fill(h.Bytes(), tb.id, 0, uint32(round))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb.Publish(0, h, uint32(round))
		}()
		if round%2 == 0 {
			runtime.Gosched()
		}
		tb.Close()
		wg.Wait()
		if !matches(h.Bytes(), tb.id, 0, uint32(round)) {
			t.Fatal("block changed while pinned")
		}
		h.Release()
		if w := tb.slots[0].Load(); w != 0 {
			t.Fatalf("round %d: slot of a closed Table holds %#x", round, w)
		}
		if st := c.Stats(); st.Size != 0 {
			t.Fatalf("round %d: Size %d with the only Table closed", round, st.Size)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
