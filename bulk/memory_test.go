package bulk_test

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sstkit/sstable/bulk"
)

// TestHeapBound adds ten times the memory budget of entries in random order
// and checks, from a goroutine that collects garbage and reads the live heap
// every few milliseconds through Add and Finish, that the writer never
// holds more than 2 x MemoryBudget + 16 MiB of Go heap.
func TestHeapBound(t *testing.T) {
	// Ten runs of 4 MiB, and 32 of 2 MiB, merged in passes (each run's
	// iterator reads ahead in the merge).
	t.Run("4MiB", func(t *testing.T) { testHeapBound(t, 4<<20, 40<<20) })
	t.Run("2MiB", func(t *testing.T) { testHeapBound(t, 2<<20, 64<<20) })
}

func testHeapBound(t *testing.T, budget, input int64) {
	const entry = 16 + 100
	limit := 2*budget + 16<<20
	dir := t.TempDir()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc

	var peak atomic.Uint64
	var peakPhase atomic.Int32
	var w *bulk.Writer
	var wmu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
				wmu.Lock()
				if w != nil {
					peakPhase.Store(int32(w.Stats().Phase))
				}
				wmu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})

	wmu.Lock()
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: budget, TargetTableSize: 8 << 20})
	wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	key := make([]byte, 16)
	value := make([]byte, 100)
	n := int(input / entry)
	for range n {
		binary.BigEndian.PutUint64(key, rng.Uint64())
		binary.BigEndian.PutUint64(key[8:], rng.Uint64())
		binary.LittleEndian.PutUint64(value, rng.Uint64())
		if err := w.Add(key, value); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := w.Finish()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var entries int64
	for _, ti := range tables {
		entries += ti.Entries
	}
	if entries != int64(n) {
		t.Fatalf("%d entries in tables, want %d", entries, n)
	}
	if s := w.Stats(); s.Runs < 9 {
		t.Fatalf("only %d runs spilled", s.Runs)
	}
	held := int64(peak.Load()) - int64(base)
	t.Logf("%d entries (%d MiB), budget %d MiB: peak live heap %.1f MiB above the start (while %s), limit %d MiB",
		n, input>>20, budget>>20, float64(held)/(1<<20), bulk.Phase(peakPhase.Load()), limit>>20)
	if held > limit {
		t.Fatalf("writer held %d bytes of heap, limit %d", held, limit)
	}
}
