package reader_test

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// gatedReaderAt holds the first read at offset 0 (data block 0) until
// open is closed, and counts the reads at offset 0.
type gatedReaderAt struct {
	r       *bytes.Reader
	started chan struct{} // closed when the first read at 0 begins
	open    chan struct{} // closed to let it finish
	once    sync.Once
	reads   atomic.Int64 // reads at offset 0
}

func (g *gatedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off == 0 {
		g.reads.Add(1)
		g.once.Do(func() { close(g.started) })
		<-g.open
	}
	return g.r.ReadAt(p, off)
}

// TestConcurrentMissesShareOneRead: 16 goroutines that miss the same data
// block at once, over an io.ReaderAt, make one read of it and one decode:
// the first reads while the other 15 wait (counted, not timed), then all
// get their values from the cache.
func TestConcurrentMissesShareOneRead(t *testing.T) {
	var es []entry
	for i := range 20000 {
		es = append(es, entry{fmt.Sprintf("key%08d", i), fmt.Sprintf("value %d of the table", i)})
	}
	data, _ := build(t, es, nil)
	for _, compressed := range []bool{true, false} {
		t.Run(fmt.Sprintf("compressed=%v", compressed), func(t *testing.T) {
			data := data
			if !compressed {
				data, _ = build(t, es, &builder.Options{Compression: format.NoCompression})
			}
			g := &gatedReaderAt{r: bytes.NewReader(data), started: make(chan struct{}), open: make(chan struct{})}
			opts := cacheOpts(t, 8<<20)
			opts.TailSize = 64 // the data blocks are read, not found in the tail
			r, err := reader.New(g, int64(len(data)), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const goroutines = 16
			errs := make(chan error, goroutines)
			for j := range goroutines {
				go func() {
					e := es[j] // all in data block 0
					v, err := r.Get([]byte(e.Key))
					if err == nil && string(v) != e.Value {
						err = fmt.Errorf("Get(%q) = %q, want %q", e.Key, v, e.Value)
					}
					errs <- err
				}()
			}
			<-g.started
			deadline := time.Now().Add(30 * time.Second) // a guard against a hang, not the assertion
			for reader.FillWaiters(r, 0) != goroutines-1 {
				if time.Now().After(deadline) {
					close(g.open)
					t.Fatalf("%d goroutines wait for the first one's read of block 0, want %d", reader.FillWaiters(r, 0), goroutines-1)
				}
				runtime.Gosched()
			}
			close(g.open)
			for range goroutines {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if n := g.reads.Load(); n != 1 {
				t.Errorf("%d reads of data block 0, want 1", n)
			}
		})
	}
}

// TestConcurrentMissesShareOneDecodeMapped: 16 goroutines that miss the
// same data block of a mapped, compressed table at once decode it once:
// the first decodes (held in reader.OnDecode until the others wait) while
// the other 15 wait for it (counted, not timed), then all get their
// values from the cache. A mapped reader has no read to share, but each
// decode is a decompression and a cache reservation; without the shared
// fill (flight.go) each of the 16 makes its own, which the test sees as
// a second decode beginning while the first is held.
func TestConcurrentMissesShareOneDecodeMapped(t *testing.T) {
	if !mmapSupported {
		t.Skip("no memory mapping on this platform")
	}
	var es []entry
	for i := range 20000 {
		es = append(es, entry{fmt.Sprintf("key%08d", i), fmt.Sprintf("value %d of the table", i)})
	}
	for _, c := range []format.Compression{format.SnappyCompression, format.ZstdCompression, format.MinLZCompression} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			data, _ := build(t, es, &builder.Options{Compression: c})
			if b := dataBlocks(t, data)[0]; b.Type == format.BlockTypeRaw {
				t.Fatalf("data block 0 stored raw")
			}
			opts := cacheOpts(t, 8<<20)
			r := openFile(t, data, opts)
			started, open := make(chan struct{}), make(chan struct{})
			var decodes atomic.Int64
			var once sync.Once
			reader.OnDecode(r, func(i int) {
				if i != 0 {
					return
				}
				decodes.Add(1)
				once.Do(func() { close(started) })
				<-open
			})
			missesBefore := opts.Cache.Stats().Misses
			const goroutines = 16
			errs := make(chan error, goroutines)
			for j := range goroutines {
				go func() {
					e := es[j] // all in data block 0
					v, err := r.Get([]byte(e.Key))
					if err == nil && string(v) != e.Value {
						err = fmt.Errorf("Get(%q) = %q, want %q", e.Key, v, e.Value)
					}
					errs <- err
				}()
			}
			<-started
			deadline := time.Now().Add(30 * time.Second) // a guard against a hang, not the assertion
			for reader.FillWaiters(r, 0) != goroutines-1 && decodes.Load() == 1 {
				if time.Now().After(deadline) {
					break
				}
				runtime.Gosched()
			}
			waiting, n := reader.FillWaiters(r, 0), decodes.Load()
			close(open)
			for range goroutines {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if waiting != goroutines-1 || n != 1 {
				t.Errorf("while the first decode of block 0 was held, %d goroutines waited for it and %d decodes began; want %d and 1", waiting, n, goroutines-1)
			}
			if n := decodes.Load(); n != 1 {
				t.Errorf("%d decodes of data block 0, want 1", n)
			}
			if n := opts.Cache.Stats().Misses - missesBefore; n != 1 {
				t.Errorf("%d cache reservations, want 1", n)
			}
			if !reader.CachedBlock(r, 0) {
				t.Error("data block 0 not in the cache")
			}
		})
	}
}
