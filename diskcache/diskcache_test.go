package diskcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// object returns n deterministic random bytes of seed.
func object(seed uint64, n int) []byte {
	b := make([]byte, n)
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	rand.NewChaCha8(s).Read(b)
	return b
}

// source is an io.ReaderAt over b that counts its calls and bytes, and
// fails every read with err while err is set.
type source struct {
	b     []byte
	calls atomic.Int64
	bytes atomic.Int64
	err   atomic.Pointer[error]
	gate  chan struct{} // when set, every read waits for it to be closed
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	s.calls.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	if e := s.err.Load(); e != nil {
		return 0, *e
	}
	n, err := bytes.NewReader(s.b).ReadAt(p, off)
	s.bytes.Add(int64(n))
	return n, err
}

func mustOpen(t testing.TB, dir string, capacity int64) *Cache {
	t.Helper()
	c, err := Open(dir, &Options{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// check reads [off, off+n) through ra and compares with obj, as
// io.ReaderAt over obj would answer.
func check(t testing.TB, ra io.ReaderAt, obj []byte, off int64, n int) {
	t.Helper()
	got := make([]byte, n)
	m, err := ra.ReadAt(got, off)
	want := make([]byte, n)
	wm, werr := bytes.NewReader(obj).ReadAt(want, off)
	if m != wm || !errors.Is(err, werr) && !(err == nil && werr == nil) || !bytes.Equal(got[:m], want[:wm]) {
		t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d, %v (bytes equal: %v)", n, off, m, err, wm, werr, bytes.Equal(got[:m], want[:wm]))
	}
}

// diskBytes returns the bytes the files in dir take, their sizes rounded
// up to 4 KiB, and the number of temporary files.
func diskBytes(t interface {
	Helper()
	Fatal(...any)
}, dir string) (total int64, temps int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		info, err := de.Info()
		if err != nil {
			continue
		}
		total += chargeOf(info.Size())
		if strings.HasPrefix(de.Name(), tmpPref) {
			temps++
		}
	}
	return total, temps
}

func TestReadsMatchSourceAndSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	obj := object(1, 5*ChunkSize+1234)
	src := &source{b: obj}
	c := mustOpen(t, dir, 64<<20)
	ra := c.ReaderAt("bucket/table.sst@v1", int64(len(obj)), src)
	size := int64(len(obj))
	cases := [][2]int64{{0, 10}, {ChunkSize - 5, 10}, {size - 300, 300}, {size - 300, 1000}, {size, 1}, {size + 10, 5}, {0, int64(len(obj))}, {3, 0}, {size, 0}}
	for _, tc := range cases {
		check(t, ra, obj, tc[0], int(tc[1]))
	}
	if _, err := ra.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("ReadAt at a negative offset: no error")
	}
	st := c.Stats()
	if st.Chunks != 6 || st.SourceBytes != size {
		t.Fatalf("after reading everything: %+v; want 6 chunks and %d source bytes", st, size)
	}
	// A read spanning missing chunks makes one source read per run.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	src.calls.Store(0)
	c = mustOpen(t, dir, 64<<20)
	defer c.Close()
	ra = c.ReaderAt("bucket/table.sst@v1", size, src)
	for _, tc := range cases {
		check(t, ra, obj, tc[0], int(tc[1]))
	}
	if n := src.calls.Load(); n != 0 {
		t.Fatalf("after a restart: %d source reads, want 0", n)
	}
	if st := c.Stats(); st.Hits == 0 || st.Misses != 0 {
		t.Fatalf("after a restart: %+v", st)
	}
	// Another object of the same key and another size, or another key,
	// shares nothing.
	other := object(2, len(obj)-1)
	check(t, c.ReaderAt("bucket/table.sst@v1", int64(len(other)), &source{b: other}), other, 0, len(other))
	check(t, c.ReaderAt("bucket/table.sst@v2", int64(len(other)), &source{b: other}), other, 0, len(other))
	check(t, ra, obj, 0, len(obj))
}

func TestRunsMakeOneSourceRead(t *testing.T) {
	obj := object(3, 40*ChunkSize)
	src := &source{b: obj}
	c := mustOpen(t, t.TempDir(), 64<<20)
	defer c.Close()
	ra := c.ReaderAt("k", int64(len(obj)), src)
	check(t, ra, obj, 5*ChunkSize+100, 100)  // chunk 5
	check(t, ra, obj, 8*ChunkSize+100, 100)  // chunk 8
	check(t, ra, obj, 4*ChunkSize-10, 1<<20) // chunks 3-20: runs 3-4, 6-7, 9-20
	if n := src.calls.Load(); n != 5 {
		t.Fatalf("%d source reads, want 5", n)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, nil); err == nil || !strings.HasPrefix(err.Error(), "diskcache: ") {
		t.Fatalf("Open with nil options: %v", err)
	}
	if _, err := Open(dir, &Options{Capacity: MinCapacity - 1}); err == nil {
		t.Fatal("Open below MinCapacity: no error")
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := Open(file, &Options{Capacity: 1 << 20}); err == nil || !strings.HasPrefix(err.Error(), "diskcache: ") {
		t.Fatalf("Open of a file: %v", err)
	}
	if _, err := Open(filepath.Join(file, "sub"), &Options{Capacity: 1 << 20}); err == nil {
		t.Fatal("Open under a file: no error")
	}
	c := mustOpen(t, filepath.Join(dir, "cache"), 1<<20)
	if _, err := Open(filepath.Join(dir, "cache"), &Options{Capacity: 1 << 20}); haveFlock && !errors.Is(err, ErrLocked) {
		t.Fatalf("a second Open of a directory in use: %v, want ErrLocked", err)
	}
	obj := object(12, 3*ChunkSize)
	src := &source{b: obj}
	ra := c.ReaderAt("k", int64(len(obj)), src)
	check(t, ra, obj, 0, len(obj))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// A closed Cache's readers read from their sources.
	calls := src.calls.Load()
	check(t, ra, obj, 0, len(obj))
	if src.calls.Load() != calls+1 {
		t.Fatalf("a read through a closed Cache made %d source reads, want 1", src.calls.Load()-calls)
	}
	c2 := mustOpen(t, filepath.Join(dir, "cache"), 1<<20)
	c2.Close()
}

func TestSourceErrorsAndShortSources(t *testing.T) {
	obj := object(4, 3*ChunkSize)
	src := &source{b: obj}
	c := mustOpen(t, t.TempDir(), 64<<20)
	defer c.Close()
	ra := c.ReaderAt("k", int64(len(obj)), src)
	boom := errors.New("boom")
	src.err.Store(&boom)
	if _, err := ra.ReadAt(make([]byte, 10), 5); err != boom {
		t.Fatalf("read with the source failing: %v, want the source's error", err)
	}
	src.err.Store(nil)
	check(t, ra, obj, 5, 10) // the failure was not remembered
	// A source shorter than the size given.
	short := c.ReaderAt("short", int64(len(obj))+5, &source{b: obj})
	if _, err := short.ReadAt(make([]byte, 10), int64(len(obj))-5); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read past a short source's end: %v", err)
	}
	if st := c.Stats(); st.Chunks != 1 {
		t.Fatalf("%d chunks cached, want 1 (the failed reads cache nothing)", st.Chunks)
	}
}

// TestCapacity reads random ranges of a 120 MB object through a cache of
// 8 MiB: the files in the directory never take more than the capacity
// plus one chunk, and every read is right.
func TestCapacity(t *testing.T) {
	const capacity = 8 << 20
	n := 120_000_000
	reads := 3000
	if testing.Short() || raceEnabled {
		n, reads = 12_000_000, 500
	}
	obj := object(5, n)
	dir := t.TempDir()
	c := mustOpen(t, dir, capacity)
	defer c.Close()
	ra := c.ReaderAt("big", int64(n), &source{b: obj})
	rng := rand.New(rand.NewPCG(5, 5))
	var most int64
	for i := range reads {
		off := rng.Int64N(int64(n))
		l := 1 + rng.IntN(8<<10)
		if i%100 == 0 {
			l = 1 << 20
		}
		check(t, ra, obj, off, l)
		if i%50 == 0 {
			used, _ := diskBytes(t, dir)
			most = max(most, used)
			if used > capacity+ChunkSize {
				t.Fatalf("after %d reads the directory holds %d bytes, more than the capacity %d plus a chunk", i, used, capacity)
			}
			if st := c.Stats(); st.BytesOnDisk > capacity {
				t.Fatalf("charged %d bytes, capacity %d", st.BytesOnDisk, capacity)
			}
		}
	}
	st := c.Stats()
	if st.Evictions == 0 {
		t.Fatalf("no evictions: %+v", st)
	}
	t.Logf("most bytes on disk %d (capacity %d); %+v", most, capacity, st)
}

// TestCapacityShrinks reopens a full directory with a smaller capacity.
func TestCapacityShrinks(t *testing.T) {
	dir := t.TempDir()
	obj := object(6, 40*ChunkSize)
	c := mustOpen(t, dir, 64<<20)
	check(t, c.ReaderAt("k", int64(len(obj)), &source{b: obj}), obj, 0, len(obj))
	c.Close()
	c = mustOpen(t, dir, 10*ChunkSize)
	defer c.Close()
	if used, _ := diskBytes(t, dir); used > 10*ChunkSize {
		t.Fatalf("reopened with a smaller capacity, the directory holds %d bytes", used)
	}
	check(t, c.ReaderAt("k", int64(len(obj)), &source{b: obj}), obj, 0, len(obj))
}

// sharedMissWait bounds TestSharedMiss's wait for its goroutines to reach
// the flight: they take microseconds; a hang fails the test instead.
const sharedMissWait = 20 * time.Second

// TestSharedMiss: goroutines that miss the same chunk at once share one
// source read.
func TestSharedMiss(t *testing.T) {
	obj := object(7, 4*ChunkSize)
	src := &source{b: obj, gate: make(chan struct{})}
	c := mustOpen(t, t.TempDir(), 64<<20)
	defer c.Close()
	ra := c.ReaderAt("k", int64(len(obj)), src)
	const g = 16
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 100)
			off := int64(ChunkSize + 10*i)
			if _, err := ra.ReadAt(p, off); err != nil || !bytes.Equal(p, obj[off:off+100]) {
				errs <- fmt.Errorf("goroutine %d: %v", i, err)
			}
		}()
	}
	// Every goroutine claims or joins the flight within sharedMissWait,
	// or the test fails, opening the gate so that none is left blocked.
	deadline := time.Now().Add(sharedMissWait)
	for c.misses.Load() < g {
		if time.Now().After(deadline) {
			close(src.gate)
			t.Fatalf("after %v, %d of %d goroutines had claimed or joined the flight", sharedMissWait, c.misses.Load(), g)
		}
		runtimeGosched()
	}
	close(src.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("%d goroutines missing one chunk made %d source reads, want 1", g, n)
	}
}

// TestConcurrent reads many objects from many goroutines through a small
// cache that keeps 3 files open, with damage to files between reads.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, &Options{Capacity: 24 * ChunkSize, MaxOpenFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var objs [][]byte
	var ras []io.ReaderAt
	for i := range 6 {
		obj := object(uint64(100+i), 10*ChunkSize+i*999)
		objs = append(objs, obj)
		ras = append(ras, c.ReaderAt(fmt.Sprint("obj", i), int64(len(obj)), &source{b: obj}))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			reads := 300
			if raceEnabled {
				reads = 60
			}
			for j := range reads {
				i := rng.IntN(len(objs))
				off := rng.Int64N(int64(len(objs[i])))
				l := 1 + rng.IntN(3*ChunkSize)
				if g == 0 && j%(reads/15) == 0 {
					if path, err := damageRandomFile(dir, rng); err != nil {
						t.Errorf("damaging %s: %v", path, err)
					}
				}
				got := make([]byte, l)
				m, err := ras[i].ReadAt(got, off)
				if err != nil && err != io.EOF || !bytes.Equal(got[:m], objs[i][off:off+int64(m)]) || m != min(l, len(objs[i])-int(off)) {
					t.Errorf("goroutine %d: object %d, %d bytes at %d: %d, %v", g, i, l, off, m, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if used, _ := diskBytes(t, dir); used > 24*ChunkSize+ChunkSize {
		t.Fatalf("directory holds %d bytes", used)
	}
	if st := c.Stats(); st.Evictions == 0 {
		t.Fatalf("a small cache, yet %+v", st)
	}
}

// damageRandomFile flips a byte of, truncates, extends or removes a
// random chunk file in dir, and returns its path ("" if it found none).
// It runs while the cache works: the cache may evict or drop the file
// at any moment, so a file gone before or during the damage is no error,
// and is not created again (it is opened without O_CREATE); any other
// failure is returned, for the caller to report (it may be on a goroutine
// other than the test's).
func damageRandomFile(dir string, rng *rand.Rand) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), chunkPref) {
			names = append(names, de.Name())
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	path := filepath.Join(dir, names[rng.IntN(len(names))])
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return path, ignoreGone(err)
	}
	switch rng.IntN(4) {
	case 0:
		i := rng.IntN(len(b))
		err = writeExisting(path, os.O_WRONLY, []byte{b[i] ^ byte(1+rng.IntN(255))}, int64(i))
	case 1:
		err = os.Truncate(path, rng.Int64N(int64(len(b))))
	case 2:
		err = writeExisting(path, os.O_WRONLY|os.O_APPEND, []byte{1, 2, 3}, -1)
	case 3:
		err = os.Remove(path)
	}
	return path, ignoreGone(err)
}

// writeExisting writes p to the file at path, opened with flag (never
// O_CREATE: a file that is gone stays gone), at off, or appends it if off
// is negative.
func writeExisting(path string, flag int, p []byte, off int64) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	if off < 0 {
		_, err = f.Write(p)
	} else {
		_, err = f.WriteAt(p, off)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ignoreGone returns err, or nil if err says the file does not exist.
func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// TestWriteFailureDegrades fails every chunk write: reads come from the
// source, right, and Stats counts the failures; then writes work again.
func TestWriteFailureDegrades(t *testing.T) {
	dir := t.TempDir()
	obj := object(8, 6*ChunkSize)
	src := &source{b: obj}
	c := mustOpen(t, dir, 64<<20)
	defer c.Close()
	ra := c.ReaderAt("k", int64(len(obj)), src)
	check(t, ra, obj, 0, ChunkSize) // chunk 0 cached before the disk "fills"
	var fail atomic.Bool
	fail.Store(true)
	c.writeFault = func() error {
		if fail.Load() {
			return errors.New("no space left on device (injected)")
		}
		return nil
	}
	for range 3 {
		check(t, ra, obj, 0, len(obj))
	}
	st := c.Stats()
	if st.WriteErrors != 15 || st.Chunks != 1 || st.BytesOnDisk != chargeOf(int64(len(encodeChunk("k", int64(len(obj)), 0, obj[:ChunkSize])))) {
		t.Fatalf("with writes failing: %+v", st)
	}
	if _, temps := diskBytes(t, dir); temps != 0 {
		t.Fatalf("%d temporary files left", temps)
	}
	fail.Store(false)
	check(t, ra, obj, 0, len(obj))
	if st := c.Stats(); st.Chunks != 6 {
		t.Fatalf("writes working again: %+v", st)
	}
}

// TestDroppedCountsFailedReads pins what Stats.Dropped counts: indexed
// chunk files that fail their check when this Cache reads them, deleted
// or damaged files alike. Files deleted while the Cache was closed were
// never indexed by the next Open (it indexes what it lists, keeping no
// record of a previous Cache's files), so their chunks are plain misses,
// not drops; nor do the temporary files Open removes count, or the
// chunks it evicts to fit a smaller Capacity (those are Evictions).
func TestDroppedCountsFailedReads(t *testing.T) {
	dir := t.TempDir()
	obj := object(11, 6*ChunkSize)
	src := &source{b: obj}
	c := mustOpen(t, dir, 64<<20)
	ra := c.ReaderAt("k", int64(len(obj)), src)
	check(t, ra, obj, 0, len(obj))
	name := ra.(*objReader).name
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// While closed: chunk 0's file deleted, chunk 1's damaged, a
	// temporary file left as by a crash.
	if err := os.Remove(filepath.Join(dir, name(0))); err != nil {
		t.Fatal(err)
	}
	flipDataByte(t, filepath.Join(dir, name(1)))
	if err := os.WriteFile(filepath.Join(dir, tmpPref+"crashed"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, 64<<20)
	defer c.Close()
	if st := c.Stats(); st.Dropped != 0 || st.Chunks != 5 {
		t.Fatalf("after Open: %+v; want 5 chunks indexed, 0 dropped (Open reads no file)", st)
	}
	if _, temps := diskBytes(t, dir); temps != 0 {
		t.Fatalf("Open left %d temporary files", temps)
	}
	ra = c.ReaderAt("k", int64(len(obj)), src)
	// Chunk 0, deleted while closed: a miss, not a drop.
	check(t, ra, obj, 0, 100)
	if st := c.Stats(); st.Dropped != 0 || st.Misses != 1 {
		t.Fatalf("chunk deleted while closed, read: %+v; want 1 miss, 0 dropped", st)
	}
	// Chunk 1, damaged while closed: indexed, fails its check, dropped.
	check(t, ra, obj, ChunkSize, 100)
	if st := c.Stats(); st.Dropped != 1 || st.Misses != 2 {
		t.Fatalf("chunk damaged while closed, read: %+v; want 2 misses, 1 dropped", st)
	}
	// Chunk 2, deleted while open: indexed, missing on its read, dropped.
	if err := os.Remove(filepath.Join(dir, name(2))); err != nil {
		t.Fatal(err)
	}
	check(t, ra, obj, 2*ChunkSize, 100)
	if st := c.Stats(); st.Dropped != 2 || st.Misses != 3 || st.Hits != 0 {
		t.Fatalf("chunk deleted while open, read: %+v; want 3 misses, 2 dropped", st)
	}
	check(t, ra, obj, 0, len(obj))
	if st := c.Stats(); st.Dropped != 2 || st.Hits != 6 {
		t.Fatalf("all read again: %+v; want 6 hits, still 2 dropped", st)
	}
}

// flipDataByte flips the first data byte of the chunk file at path.
func flipDataByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[blockSize] ^= 1 // the data starts on the first 4 KiB boundary
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClockSecondChance: eviction is CLOCK, not FIFO. A full cache of 8
// chunks, the 3 oldest read again from disk (marked), then 3 new chunks
// stored: the hand passes over the marked ones, clearing their marks, and
// evicts the next 3, which were never read again. FIFO, a hand that
// ignores the mark, would evict the 3 oldest, the ones just read.
func TestClockSecondChance(t *testing.T) {
	const n = 8
	fileCharge := chargeOf(dataOffset(headerLen(1, ChunkSize)) + ChunkSize)
	c := mustOpen(t, t.TempDir(), n*fileCharge) // room for n full chunks, no more
	defer c.Close()
	a := object(12, n*ChunkSize)
	srcA := &source{b: a}
	ra := c.ReaderAt("a", int64(len(a)), srcA)
	check(t, ra, a, 0, len(a))
	if st := c.Stats(); st.Chunks != n || st.Evictions != 0 {
		t.Fatalf("filled: %+v; want %d chunks, no evictions", st, n)
	}
	touched := []int64{0, 1, 2} // the oldest: FIFO's first victims
	for _, ci := range touched {
		check(t, ra, a, ci*ChunkSize, 10)
	}
	if st := c.Stats(); st.Hits != int64(len(touched)) {
		t.Fatalf("touching chunks %v: %+v; want %d hits", touched, st, len(touched))
	}
	b := object(13, 3*ChunkSize)
	check(t, c.ReaderAt("b", int64(len(b)), &source{b: b}), b, 0, len(b))
	if st := c.Stats(); st.Evictions != 3 || st.Chunks != n {
		t.Fatalf("3 more chunks stored: %+v; want 3 evictions, %d chunks", st, n)
	}
	name := ra.(*objReader).name
	c.mu.Lock()
	var kept, evicted []int64
	for ci := range int64(n) {
		if c.index[name(ci)] != nil {
			kept = append(kept, ci)
		} else {
			evicted = append(evicted, ci)
		}
	}
	c.mu.Unlock()
	if fmt.Sprint(evicted) != "[3 4 5]" {
		t.Fatalf("chunks of the first object kept %v, evicted %v; want the touched %v kept and [3 4 5] evicted (FIFO evicts [0 1 2])", kept, evicted, touched)
	}
	// The touched chunks are read from disk, not the source.
	calls := srcA.calls.Load()
	for _, ci := range touched {
		check(t, ra, a, ci*ChunkSize, ChunkSize)
	}
	if got := srcA.calls.Load(); got != calls {
		t.Fatalf("reading the touched chunks made %d source reads", got-calls)
	}
}
