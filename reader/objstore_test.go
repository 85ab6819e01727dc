package reader_test

// Object storage at every table size: the read caps of a cold lookup over
// an io.ReaderAt, on tables of 10k to 5M entries in the builder's default
// layouts, with and without a hash index; reads in flight under latency;
// faults on large tables.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/faultio"
	"github.com/sstkit/sstable/reader"
)

// longTests reports whether the 1M- and 5M-entry tables run
// (SSTABLE_LONG_TESTS=1, as CI sets).
func longTests() bool { return os.Getenv("SSTABLE_LONG_TESTS") != "" }

// mix64 is SplitMix64's finaliser: distinct inputs give distinct outputs.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// sizedKey returns key i of a table of n: 16 bytes, sorted in i, the high
// half i's share of 2^64 plus a random offset in it, the low half random
// and even. sizedAbsent(j) has an odd low half: never present.
func sizedKey(dst []byte, i, n int) []byte {
	step := math.MaxUint64 / uint64(n)
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(i)*step+mix64(uint64(i))%step)
	return binary.BigEndian.AppendUint64(dst, mix64(uint64(i)^0x5bd1e995)&^1)
}

func sizedAbsent(dst []byte, j, n int) []byte {
	dst = sizedKey(dst, int(mix64(uint64(j)+77)%uint64(n)), n)
	binary.BigEndian.PutUint64(dst[8:], mix64(uint64(j)+991)|1)
	return dst
}

const sizedText = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, "

// sizedValue returns value i: 48 random bytes and 52 of text, so that
// snappy compresses a block by about a third.
func sizedValue(dst []byte, i int) []byte {
	dst = dst[:0]
	for j := 0; j < 48; j += 8 {
		dst = binary.LittleEndian.AppendUint64(dst, mix64(uint64(i)*7+uint64(j)))
	}
	off := i % (len(sizedText) - 52)
	return append(dst, sizedText[off:off+52]...)
}

// sizedTable writes a table of n entries (sizedKey, sizedValue) with opts
// (default 4 KiB blocks, snappy, Bloom 10 bits per key) to a file in
// dir and returns it open, with its size and properties.
func sizedTable(t testing.TB, dir string, n int, opts *builder.Options) (*os.File, int64, format.Properties) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("sized-%d-%p.sst", n, opts))
	b, err := builder.Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var k, v []byte
	for i := range n {
		k, v = sizedKey(k, i, n), sizedValue(v, i)
		if err := b.Add(k, v); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	p := b.Properties()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, st.Size(), p
}

// rangeRecorder is an io.ReaderAt over R that records every call's range.
type rangeRecorder struct {
	R     io.ReaderAt
	mu    sync.Mutex
	reads [][2]int64 // offset, length
}

func (r *rangeRecorder) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.reads = append(r.reads, [2]int64{off, int64(len(p))})
	r.mu.Unlock()
	return r.R.ReadAt(p, off)
}

func (r *rangeRecorder) take() [][2]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reads
	r.reads = nil
	return out
}

// capSizes are the table sizes the read caps are measured at: 10k and
// 200k entries always, 1M and 5M (the tables of an LSM's lower levels)
// with SSTABLE_LONG_TESTS=1.
func capSizes() []int {
	if longTests() && !testing.Short() {
		return []int{10_000, 200_000, 1_000_000, 5_000_000}
	}
	return []int{10_000, 200_000}
}

// TestColdReadCapsAtSizes checks, as a new user would meet them (default
// options but for the cache, a counting ReaderAt), the read caps of a
// cold lookup over object storage at every table size, in the default
// layout (version 4), with a hash index (versions 2 and 3) and in the
// layout of version 1 (3 when partitioned), on 5 random present keys and 5 random
// absent ones, each on a new reader: a present key costs at most 3
// ReadAt calls counting New's, an absent one at most 2; from 1M entries
// up a present key reads at most the tail, 64 KiB and the data block, an
// absent one at most the tail and 64 KiB. (An absent key the filter
// passes, a false positive, costs what a present one does; it is counted
// as such and logged.)
func TestColdReadCapsAtSizes(t *testing.T) {
	dir := t.TempDir()
	const keys = 5
	for _, n := range capSizes() {
		for _, l := range []struct {
			name string
			opts builder.Options
		}{
			{"default", builder.Options{}}, // version 4
			{"hash", builder.Options{HashIndex: true}},
			{"v1", builder.Options{FormatVersion: format.Version1}}, // version 3 when partitioned
		} {
			t.Run(fmt.Sprintf("%d/%s", n, l.name), func(t *testing.T) {
				start := time.Now()
				f, size, p := sizedTable(t, dir, n, &l.opts)
				defer os.Remove(f.Name())
				src := &rangeRecorder{R: f}
				rng := rand.New(rand.NewPCG(uint64(n), 7))
				var k []byte
				maxBeyond := map[bool]int64{}
				for j := range 2 * keys {
					present := j < keys
					if present {
						k = sizedKey(k, rng.IntN(n), n)
					} else {
						k = sizedAbsent(k, rng.IntN(1<<30), n)
					}
					r, err := reader.New(src, size, cacheOpts(t, 64<<20))
					if err != nil {
						t.Fatal(err)
					}
					v, err := r.Get(k)
					reads := src.take()
					// A false positive of the filter reads a data
					// block as a present key does.
					falsePositive := !present && r.MayContain(k)
					src.take()
					r.Close()
					if present && err != nil {
						t.Fatalf("Get(%x): %v", k, err)
					}
					if !present && !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("Get(%x) of an absent key = %q, %v; want ErrNotFound", k, v, err)
					}
					wantReads := 2
					if present || falsePositive {
						wantReads = 3
					}
					if len(reads) > wantReads {
						t.Errorf("cold Get(%x), present %v, false positive %v: %d reads counting New, want at most %d: %v", k, present, falsePositive, len(reads), wantReads, reads)
						continue
					}
					if reads[0][1] != reader.DefaultTailSize && reads[0][1] != size {
						t.Errorf("New's read is %v, want the %d-byte tail", reads[0], reader.DefaultTailSize)
					}
					// Bytes beyond the tail and, for a present key,
					// the data block (the last read).
					rest := reads[1:]
					if (present || falsePositive) && len(rest) > 0 {
						if last := rest[len(rest)-1]; last[1] > 2*builder.DefaultBlockSize {
							t.Errorf("cold Get(%x): last read %v, larger than a data block", k, last)
						}
						rest = rest[:len(rest)-1]
					}
					var beyond int64
					for _, rd := range rest {
						beyond += rd[1]
					}
					maxBeyond[present] = max(maxBeyond[present], beyond)
					if n >= 1_000_000 && beyond > 64<<10 {
						t.Errorf("cold Get(%x), present %v: %d bytes read beyond the tail and the data block, want at most 64 KiB: %v", k, present, beyond, reads)
					}
					if falsePositive {
						t.Logf("absent key %x is a filter false positive", k)
					}
				}
				t.Logf("%d entries, %.1f MB, format version %d: beyond the tail and data block, at most %d bytes (present) and %d (absent); %v",
					n, float64(size)/1e6, p.FormatVersion, maxBeyond[true], maxBeyond[false], time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// barrierSource is an io.ReaderAt over R whose reads, while the barrier
// is armed, wait until want of them are waiting together; the barrier
// then opens and lets every read through. A test thus learns that want
// reads were in flight at once, whatever the scheduling: a reader that
// serialised its reads would never get there. A read that has waited
// guard opens the barrier too, without setting tripped: the guard only
// keeps a failing test from hanging, and decides nothing.
type barrierSource struct {
	R     io.ReaderAt
	guard time.Duration

	mu      sync.Mutex
	want    int
	waiting int           // reads waiting at the barrier
	open    chan struct{} // closed once the barrier opens
	tripped bool          // want reads waited together
	calls   int
}

// newBarrierSource returns an open barrier over r.
func newBarrierSource(r io.ReaderAt, guard time.Duration) *barrierSource {
	s := &barrierSource{R: r, guard: guard, open: make(chan struct{})}
	close(s.open)
	return s
}

// arm closes the barrier until want reads wait at it.
func (s *barrierSource) arm(want int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want, s.waiting, s.tripped, s.calls = want, 0, false, 0
	s.open = make(chan struct{})
}

// result reports whether the barrier tripped since it was armed, and
// the reads made.
func (s *barrierSource) result() (tripped bool, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tripped, s.calls
}

func (s *barrierSource) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	s.calls++
	open := s.open
	select {
	case <-open:
		s.mu.Unlock()
		return s.R.ReadAt(p, off)
	default:
	}
	if s.waiting++; s.waiting >= s.want {
		s.tripped = true
		close(open)
	}
	s.mu.Unlock()
	guard := time.NewTimer(s.guard)
	select {
	case <-open:
	case <-guard.C:
		s.mu.Lock()
		select {
		case <-open:
		default:
			close(open)
		}
		s.mu.Unlock()
	}
	guard.Stop()
	s.mu.Lock()
	s.waiting--
	s.mu.Unlock()
	return s.R.ReadAt(p, off)
}

// TestConcurrentColdReadsInFlight checks that nothing serialises the
// reads of one reader over a source with latency, as object storage: 16
// goroutines doing cold Gets of keys spread over the table get at least
// 8 reads in flight at once, and so do 16 goroutines scanning with
// iterators of their own, each with its own read-ahead. The source is a
// barrier that holds every read until 8 wait together (barrierSource),
// so the check does not depend on timing: with a reader that serialised
// its reads, the barrier would hold the first read until the guard gave
// up. Before the Gets, one Get loads what every lookup shares (a
// one-level table's index block and filter lie outside the tail), so
// that the first reads of the goroutines are their own: data blocks and
// partitions no two of them share. Run on the default layout of a
// 200k-entry table (version 4, partitioned), with a hash index, and
// one-level (threshold -1, the index and filter outside the tail), and on
// versions 3 and 1 asked for explicitly.
func TestConcurrentColdReadsInFlight(t *testing.T) {
	const (
		n       = 200_000
		workers = 16
		gets    = 4
		want    = workers / 2
		guard   = 2 * time.Minute // a failing test's bound, not a measurement
	)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		opts builder.Options
	}{
		{"default", builder.Options{}}, // version 4, partitioned
		{"hash", builder.Options{HashIndex: true}},
		{"one-level", builder.Options{PartitionThreshold: -1}}, // version 4
		{"v3", builder.Options{FormatVersion: format.Version1}},
		{"v1 one-level", builder.Options{PartitionThreshold: -1, FormatVersion: format.Version1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, size, _ := sizedTable(t, dir, n, &c.opts)
			defer os.Remove(f.Name())

			src := newBarrierSource(f, guard)
			r, err := reader.New(src, size, cacheOpts(t, 64<<20))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The last key's Get loads the shared sections; its data
			// block and partition are none of the goroutines' first.
			if v, err := r.Get(sizedKey(nil, n-1, n)); err != nil || string(v) != string(sizedValue(nil, n-1)) {
				t.Fatalf("Get(key %d) = %q, %v", n-1, v, err)
			}

			src.arm(want)
			var wg sync.WaitGroup
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var k []byte
					for j := range gets {
						// Keys spread so that no two goroutines
						// share a data block or a partition.
						i := (g*gets + j) * (n / (workers * gets))
						k = sizedKey(k, i, n)
						v, err := r.Get(k)
						if err != nil || string(v) != string(sizedValue(nil, i)) {
							t.Errorf("Get(key %d) = %q, %v", i, v, err)
						}
					}
				}()
			}
			wg.Wait()
			getTripped, getCalls := src.result()
			if !getTripped {
				t.Errorf("%d goroutines of cold Gets, %d reads: never %d in flight at once", workers, getCalls, want)
			}

			// Iterators: each scans 3000 entries from its own place,
			// several read-ahead windows.
			src.arm(want)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					from := g*(n/workers) + 10_000 // past the keys of its Gets
					it := r.NewIterator()
					defer it.Close()
					i := from
					for ok := it.SeekGE(sizedKey(nil, from, n)); ok && i < from+3000; ok = it.Next() {
						if string(it.Key()) != string(sizedKey(nil, i, n)) {
							t.Errorf("iterator from %d: entry %d is %x", from, i, it.Key())
							return
						}
						i++
					}
					if err := it.Err(); err != nil {
						t.Errorf("iterator from %d: %v", from, err)
					}
				}()
			}
			wg.Wait()
			scanTripped, scanCalls := src.result()
			if !scanTripped {
				t.Errorf("%d goroutines of scans, %d reads: never %d in flight at once", workers, scanCalls, want)
			}
			if getTripped && scanTripped {
				t.Logf("Gets: %d reads, scans: %d reads; %d in flight at once in both", getCalls, scanCalls, want)
			}
		})
	}
}

// TestReadFaultsLargeTables runs lookups and scans under random read
// faults on 1M-entry tables of every layout (SSTABLE_LONG_TESTS=1): one
// level (threshold -1), one level with a hash index, partitioned (the
// default threshold) and partitioned with a hash index, and version 4
// (the default format) one-level and partitioned, with the default 256 KiB
// tail (which holds none of the one-level tables' index and filter), a
// cache too small for anything and one that evicts: index, filter,
// partitions and read-ahead windows are all read under faults. Every
// call gives the right answer or an injected error, never corruption or a
// wrong entry; once the faults stop, every call succeeds.
func TestReadFaultsLargeTables(t *testing.T) {
	n := 50_000
	if longTests() && !testing.Short() {
		n = 1_000_000
	}
	dir := t.TempDir()
	for _, l := range []struct {
		name   string
		opts   builder.Options
		parted bool
	}{
		{"v1", builder.Options{PartitionThreshold: -1, FormatVersion: format.Version1}, false},
		{"v2-hash", builder.Options{PartitionThreshold: -1, HashIndex: true}, false},
		{"v3", builder.Options{FormatVersion: format.Version1}, true},
		{"v3-hash", builder.Options{HashIndex: true}, true},
		{"v4", builder.Options{PartitionThreshold: -1}, false},
		{"v4 partitioned", builder.Options{}, true},
	} {
		if n < 200_000 && l.parted {
			l.opts.PartitionThreshold = 1
		}
		f, size, p := sizedTable(t, dir, n, &l.opts)
		if want := l.name[:2]; fmt.Sprintf("v%d", p.FormatVersion) != want || p.Partitioned != (l.parted && p.FormatVersion == format.Version4) {
			t.Fatalf("%s: format version %d, partitioned %v", l.name, p.FormatVersion, p.Partitioned)
		}
		for _, o := range []struct {
			name string
			opts func() *reader.Options
		}{
			{"tail-default", func() *reader.Options { return cacheOpts(t, 64<<20) }},
			{"cache0", func() *reader.Options { return cacheOpts(t, 0) }},
			{"cache1MiB", func() *reader.Options { return cacheOpts(t, 1<<20) }},
		} {
			t.Run(fmt.Sprintf("%d/%s/%s", n, l.name, o.name), func(t *testing.T) {
				testSizedFaults(t, f, size, n, o.opts)
			})
		}
		f.Close()
		os.Remove(f.Name())
	}
}

func testSizedFaults(t *testing.T, f io.ReaderAt, size int64, n int, opts func() *reader.Options) {
	src := faultio.NewFaulty(f, uint64(size))
	src.Short, src.EarlyEOF, src.Transient = 0.05, 0.05, 0.05
	var r *reader.Reader
	for try := 0; r == nil; try++ {
		var err error
		if r, err = reader.New(src, size, opts()); err != nil {
			checkFaultErr(t, "New", err)
		}
		if try > 200 {
			t.Fatal("New failed 200 times in a row")
		}
	}
	defer r.Close()

	failed := 0
	check := func(faults bool) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var k []byte
				fail := func(what string, err error) {
					if faults {
						checkFaultErr(t, what, err)
						mu.Lock()
						failed++
						mu.Unlock()
					} else {
						t.Errorf("%s with faults off: %v", what, err)
					}
				}
				for j := range 200 {
					i := int(mix64(uint64(g*1000+j)) % uint64(n))
					k = sizedKey(k, i, n)
					v, err := r.Get(k)
					switch {
					case err == nil && string(v) != string(sizedValue(nil, i)):
						t.Errorf("Get(key %d) = %q, want its value", i, v)
					case err != nil:
						fail("Get", err)
					}
					k = sizedAbsent(k, g*1000+j, n)
					if v, err := r.Get(k); err == nil {
						t.Errorf("Get(%x) of an absent key = %q", k, v)
					} else if !errors.Is(err, reader.ErrNotFound) {
						fail("Get of an absent key", err)
					}
				}
				// A scan of 20000 entries (several read-ahead windows
				// and, in a partitioned table, partitions read ahead)
				// from a place of the goroutine's own.
				from := int(mix64(uint64(g)) % uint64(n-20000))
				it := r.NewIterator()
				i := from
				for ok := it.SeekGE(sizedKey(nil, from, n)); ok && i < from+20000; ok = it.Next() {
					if string(it.Key()) != string(sizedKey(nil, i, n)) || string(it.Value()) != string(sizedValue(nil, i)) {
						t.Errorf("scan from %d: entry %d is %x=%q, want key %d", from, i-from, it.Key(), it.Value(), i)
						break
					}
					i++
				}
				if err := it.Err(); err != nil {
					fail("scan", err)
				} else if i != from+20000 {
					t.Errorf("scan from %d ended after %d entries without an error", from, i-from)
				}
				it.Close()
			}()
		}
		wg.Wait()
	}
	for range 2 {
		check(true)
	}
	if failed == 0 {
		t.Fatal("no call failed under faults: the test injects none")
	}
	src.Quiet()
	check(false)
	t.Logf("%d calls failed under faults, all with injected errors", failed)
}
