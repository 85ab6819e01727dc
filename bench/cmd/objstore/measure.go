package main

// The measurements: the counting io.ReaderAt every reader reads
// through, and the rows measured on each implementation's table.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// source is the io.ReaderAt every reader reads through: it sleeps
// latency in every call (as a request to object storage takes), records
// each call's length, and counts the calls in flight.
type source struct {
	r       io.ReaderAt
	latency time.Duration

	mu       sync.Mutex
	reads    []int64 // lengths, since the last take
	inFlight int
	peak     int // most calls in flight since the last take
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	s.reads = append(s.reads, int64(len(p)))
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	if s.latency > 0 {
		time.Sleep(s.latency)
	}
	n, err := s.r.ReadAt(p, off)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return n, err
}

// take returns the lengths read since the last take, and the most calls
// in flight at once.
func (s *source) take() ([]int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, p := s.reads, s.peak
	s.reads, s.peak = nil, 0
	return r, p
}

// count is one cell's figures.
type count struct {
	calls, bytes int64
	wall         time.Duration
}

func counted(reads []int64, wall time.Duration) count {
	c := count{calls: int64(len(reads)), wall: wall}
	for _, n := range reads {
		c.bytes += n
	}
	return c
}

var rows = []string{"format version", "open", "first Get, present", "first Get, absent", "1000 Gets, present", "1000 Gets, absent", "full scan", "full scan, reads per MiB", concurrentRow}

var concurrentRow = fmt.Sprintf("%d goroutines x %d Gets", goroutines, goroutineGets)

const (
	coldKeys      = 5  // keys of the first-Get rows, each on a new reader
	goroutines    = 16 // the concurrent row's goroutines
	goroutineGets = 20 // and each one's Gets
)

// result is one implementation's figures on one table.
type result struct {
	cells map[string]string
	// Reads of the first-Get rows, the most over the keys, counting
	// open's; and the most bytes read beyond open's and the data block
	// (a present key's last read).
	presentReads, absentReads   int64
	presentBeyond, absentBeyond int64
	// Reads of the other rows, for the comparison with Pebble v2.
	reads map[string]int64
}

// measure returns im's figures for a table of n entries at path.
func measure(im impl, path string, n int) (*result, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	src := &source{r: f, latency: latency}
	res := &result{cells: map[string]string{}, reads: map[string]int64{}}
	var k []byte
	rng := rand.New(rand.NewPCG(uint64(n), 1))

	// open
	start := time.Now()
	t, err := im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	reads, _ := src.take()
	c := counted(reads, time.Since(start))
	res.cells["open"] = c.String()
	res.reads["open"] = c.calls
	res.cells["format version"] = "-"
	if ot, ok := t.(oursTable); ok {
		p := ot.r.Properties()
		res.cells["format version"] = fmt.Sprint(p.FormatVersion)
		if p.Partitioned {
			res.cells["format version"] += " partitioned"
		}
		if p.HashIndexSize != 0 {
			res.cells["format version"] += " + hash index"
		}
	}
	if err := t.close(); err != nil {
		return nil, 0, err
	}

	// Cold lookups, each on a new reader: open, then one Get. The cell
	// shows the most reads (counting open's), bytes after open's and
	// wall time (counting open's) over the keys.
	for _, present := range []bool{true, false} {
		row := "first Get, present"
		if !present {
			row = "first Get, absent"
		}
		var most count
		var mostWith, beyond int64
		for j := range coldKeys {
			if present {
				k = key(k, rng.IntN(n), n)
			} else {
				k = absentKey(k, rng.IntN(1<<30), n)
			}
			start := time.Now()
			t, err := im.open(src, st.Size())
			if err != nil {
				return nil, 0, err
			}
			open, _ := src.take()
			get, done := t.getter()
			found, err := get(k)
			done()
			w := time.Since(start)
			g, _ := src.take()
			if cerr := t.close(); err == nil {
				err = cerr
			}
			if err != nil || found != present {
				return nil, 0, fmt.Errorf("%s, key %d: found %v, %v", row, j, found, err)
			}
			gc := counted(g, w)
			most.calls, most.bytes, most.wall = max(most.calls, gc.calls), max(most.bytes, gc.bytes), max(most.wall, gc.wall)
			mostWith = max(mostWith, gc.calls+int64(len(open)))
			// Bytes beyond open's and, for a present key (or a false
			// positive of the filter), the data block, its last read.
			var b int64
			for i, r := range g {
				if i == len(g)-1 && len(g) > 0 && (present || len(g) > 1) && r <= 2*implsetup.BlockSize {
					break
				}
				b += r
			}
			beyond = max(beyond, b)
		}
		res.cells[row] = fmt.Sprintf("%s (%d with open)", most, mostWith)
		res.reads[row] = mostWith
		if present {
			res.presentReads, res.presentBeyond = mostWith, beyond
		} else {
			res.absentReads, res.absentBeyond = mostWith, beyond
		}
	}

	// 1000 present lookups, then 1000 absent ones, on one reader.
	t, err = im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	src.take()
	get, done := t.getter()
	start = time.Now()
	for j := range lookups {
		k = key(k, int(mix(uint64(j))%uint64(n)), n)
		if found, err := get(k); err != nil || !found {
			done()
			t.close()
			return nil, 0, fmt.Errorf("lookup %d: found %v, %v", j, found, err)
		}
	}
	reads, _ = src.take()
	c = counted(reads, time.Since(start))
	res.cells["1000 Gets, present"], res.reads["1000 Gets, present"] = c.String(), c.calls
	start = time.Now()
	for j := range lookups {
		k = absentKey(k, j+1, n)
		if found, err := get(k); err != nil || found {
			done()
			t.close()
			return nil, 0, fmt.Errorf("absent lookup %d: found %v, %v", j, found, err)
		}
	}
	reads, _ = src.take()
	c = counted(reads, time.Since(start))
	res.cells["1000 Gets, absent"], res.reads["1000 Gets, absent"] = c.String(), c.calls
	done()
	if err := t.close(); err != nil {
		return nil, 0, err
	}

	// A full scan on a new reader.
	t, err = im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	src.take()
	start = time.Now()
	got, err := t.scan()
	if err != nil || got != n {
		t.close()
		return nil, 0, fmt.Errorf("scan: %d of %d entries, %v", got, n, err)
	}
	reads, _ = src.take()
	c = counted(reads, time.Since(start))
	res.cells["full scan"], res.reads["full scan"] = c.String(), c.calls
	res.cells["full scan, reads per MiB"] = fmt.Sprintf("%.2f", float64(c.calls)/(float64(st.Size())/(1<<20)))
	if err := t.close(); err != nil {
		return nil, 0, err
	}

	// Concurrent cold lookups: a new reader, goroutines of random
	// present keys, each goroutine with its own getter.
	t, err = im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	src.take()
	start = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get, done := t.getter()
			defer done()
			var k []byte
			for j := range goroutineGets {
				i := int(mix(uint64(g*goroutineGets+j)^0xc0ffee) % uint64(n))
				k = key(k, i, n)
				if found, err := get(k); err != nil || !found {
					errs <- fmt.Errorf("concurrent lookup of key %d: found %v, %v", i, found, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.close()
		return nil, 0, err
	}
	reads, peak := src.take()
	c = counted(reads, time.Since(start))
	res.cells[concurrentRow] = fmt.Sprintf("%d / %s, %s, %d in flight", c.calls, size(c.bytes), wall(c.wall), peak)
	res.reads[concurrentRow] = c.calls
	return res, st.Size(), t.close()
}
