package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// cacheTable builds a snappy version 2 table of n entries whose values
// compress (so that every block is stored snappy and the hash index holds
// decoded offsets) and returns it, its entries and the total size of its
// decoded data blocks.
func cacheTable(t testing.TB, n int) ([]byte, []entry, int64) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("abc", 1+i%40)) })
	data, p := build(t, es, &builder.Options{BlockSize: 1024, RestartInterval: 8, Compression: format.SnappyCompression, HashIndex: true})
	if p.FormatVersion != format.Version2 || p.NumDataBlocks < 20 {
		t.Fatalf("cache table: format version %d, %d data blocks", p.FormatVersion, p.NumDataBlocks)
	}
	var decoded int64
	for _, b := range dataBlocks(t, data) {
		if b.Type != format.BlockTypeSnappy {
			t.Fatalf("a data block of the cache table is stored raw")
		}
		decoded += int64(len(b.Contents))
	}
	return data, es, decoded
}

// getAll checks Get and GetAppend of every entry, in a shuffled order, and
// of absent keys next to them.
func getAll(t *testing.T, r *reader.Reader, es []entry, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, i := range rng.Perm(len(es)) {
		e := es[i]
		v, err := r.Get([]byte(e.Key))
		if err != nil || string(v) != e.Value {
			t.Fatalf("Get(%q) = %q, %v; want %q", e.Key, shorten(v), err, shorten([]byte(e.Value)))
		}
		if v, err := r.GetAppend([]byte("dst"), []byte(e.Key)); err != nil || string(v) != "dst"+e.Value {
			t.Fatalf("GetAppend(%q) = %q, %v", e.Key, shorten(v), err)
		}
		if v, err := r.Get([]byte(e.Key + "~")); !errors.Is(err, reader.ErrNotFound) || v != nil {
			t.Fatalf("Get(%q) of an absent key = %q, %v", e.Key+"~", shorten(v), err)
		}
	}
}

// TestCacheBudget reads a compressed table through caches that hold all
// of its decoded blocks, a few of them, or none: every read is right,
// the cache never holds more than its capacity, and a cache that holds
// the table decodes each block once, whether Gets or scans bring it in.
func TestCacheBudget(t *testing.T) {
	data, es, decoded := cacheTable(t, 3000)
	n := int64(len(dataBlocks(t, data)))
	for _, c := range []struct {
		name     string
		capacity int64
	}{
		{"fits", 2*decoded + 64<<10},
		{"small", 8 << 10},
		{"none", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, how := range []string{"New", "Open"} {
				t.Run(how, func(t *testing.T) {
					opts := cacheOpts(t, c.capacity)
					var r *reader.Reader
					if how == "New" {
						r = openMem(t, data, opts)
						defer r.Close()
					} else {
						r = openFile(t, data, opts)
					}
					e := es[len(es)/2]
					before := opts.Cache.Stats().Misses // New caches the sections in its tail
					if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
						t.Fatalf("Get(%q) = %q, %v", e.Key, shorten(v), err)
					}
					st := opts.Cache.Stats()
					// One block read; a probe passing another key's slot with
					// a matching tag may have read another.
					if m := st.Misses - before; m < 1 || m > 3 {
						t.Fatalf("%d misses in one Get", m)
					}
					getAll(t, r, es, 1)
					got, err := scan(r)
					if err != nil || !slices.Equal(got, es) {
						t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
					}
					back, err := scanBack(r)
					if err != nil || !slices.Equal(back, reversed(es)) {
						t.Fatalf("backward scan: %d of %d entries, %v", len(back), len(es), err)
					}
					if err := r.Verify(); err != nil {
						t.Fatalf("Verify: %v", err)
					}
					getAll(t, r, es, 2)
					st = opts.Cache.Stats()
					wantMisses := n // one per data block
					if !r.Mapped() {
						wantMisses += 4 // the index, filter and hash index, and the data blocks in New's tail
					}
					switch {
					case st.Size > st.Capacity:
						t.Fatalf("cache holds %d bytes, capacity %d", st.Size, st.Capacity)
					case c.name == "fits" && (st.Misses != wantMisses || st.Evictions != 0 || st.Size < decoded):
						t.Fatalf("a cache that fits the table: %+v for %d blocks of %d decoded bytes", st, n, decoded)
					case c.name == "small" && (st.Size == 0 || st.Evictions == 0):
						t.Fatalf("a small cache: %+v", st)
					case c.name == "none" && (st.Size != 0 || st.Hits != 0):
						t.Fatalf("an empty cache: %+v", st)
					}
					r.Close()
					if st := opts.Cache.Stats(); st.Size != 0 {
						t.Fatalf("%d bytes still cached after Close", st.Size)
					}
				})
			}
		})
	}
}

// TestCacheOtherTables: raw blocks of a mapped table are read in place and
// never cached; a version 1 snappy table's blocks are.
func TestCacheOtherTables(t *testing.T) {
	es := numbered(1000, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("abc", 1+i%40)) })
	for _, c := range []struct {
		name   string
		opts   builder.Options
		cached bool // when memory-mapped
	}{
		{"v2-raw", builder.Options{BlockSize: 1024, Compression: format.NoCompression, HashIndex: true}, false},
		{"v1-raw", builder.Options{BlockSize: 1024, Compression: format.NoCompression, FormatVersion: format.Version1}, false},
		{"v1-snappy", builder.Options{BlockSize: 1024, Compression: format.SnappyCompression, FormatVersion: format.Version1}, true},
		{"v4-raw", builder.Options{BlockSize: 1024, Compression: format.NoCompression}, false},
		{"v4-snappy", builder.Options{BlockSize: 1024, Compression: format.SnappyCompression}, true},
	} {
		data, _ := build(t, es, &c.opts)
		t.Run(c.name, func(t *testing.T) {
			opts := cacheOpts(t, 1<<20)
			r := openFile(t, data, opts)
			getAll(t, r, es, 3)
			if !r.Mapped() {
				t.Skip("not memory-mapped here")
			}
			// Held is the mapped version 4 reader's filter copy, not blocks.
			if st := opts.Cache.Stats(); (st.Size-st.Held != 0) != c.cached {
				t.Fatalf("blocks cached: %v (%+v), want %v", !c.cached, st, c.cached)
			}
		})
	}
}

// TestCachedGetNoAllocs: a lookup through the cache allocates nothing,
// whether the cache holds the table or thrashes (every Get evicts).
func TestCachedGetNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	data, es, decoded := cacheTable(t, 3000)
	for _, capacity := range []int64{2 * decoded, 4 << 10} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			sources(t, data, cacheOpts(t, capacity), func(t *testing.T, r *reader.Reader) {
				buf := make([]byte, 0, 256)
				for _, e := range es {
					if _, err := r.GetAppend(buf[:0], []byte(e.Key)); err != nil {
						t.Fatal(err)
					}
				}
				keys := make([][]byte, len(es))
				for i, e := range es {
					keys[i] = []byte(e.Key)
				}
				i := 0
				allocs := testing.AllocsPerRun(1000, func() {
					i = (i + 7) % len(es)
					v, err := r.GetAppend(buf[:0], keys[i])
					if err != nil || string(v) != es[i].Value {
						t.Fatalf("GetAppend(%q) = %q, %v", es[i].Key, v, err)
					}
				})
				if allocs != 0 {
					t.Fatalf("GetAppend through a cache of %d bytes allocates %v times per run", capacity, allocs)
				}
			})
		})
	}
}

// TestCachedIteratorsAcrossGets opens iterators, and uses them across Gets
// that thrash a small cache: the blocks the iterators are on stay pinned,
// and they read every entry right, forwards, backwards and after seeks.
func TestCachedIteratorsAcrossGets(t *testing.T) {
	data, es, _ := cacheTable(t, 3000)
	sources(t, data, cacheOpts(t, 16<<10), func(t *testing.T, r *reader.Reader) {
		fwd, bwd := r.NewIterator(), r.NewIterator()
		defer fwd.Close()
		defer bwd.Close()
		half := len(es) / 2
		var got []entry
		for ok := fwd.First(); ok && len(got) < half; ok = fwd.Next() {
			got = append(got, entry{string(fwd.Key()), string(fwd.Value())})
		}
		var gotBack []entry
		for ok := bwd.Last(); ok && len(gotBack) < half; ok = bwd.Prev() {
			gotBack = append(gotBack, entry{string(bwd.Key()), string(bwd.Value())})
		}
		// Keys the iterators are on, and others, then all: the small cache
		// evicts constantly.
		getAll(t, r, es[half-50:half+50], 4)
		getAll(t, r, es, 4)
		// The iterators carry on where they were.
		for ok := fwd.Valid(); ok; ok = fwd.Next() {
			got = append(got, entry{string(fwd.Key()), string(fwd.Value())})
		}
		for ok := bwd.Valid(); ok; ok = bwd.Prev() {
			gotBack = append(gotBack, entry{string(bwd.Key()), string(bwd.Value())})
		}
		if err := fwd.Err(); err != nil || !slices.Equal(got, es) {
			t.Fatalf("forward: %d of %d entries, %v", len(got), len(es), err)
		}
		if err := bwd.Err(); err != nil || !slices.Equal(gotBack, reversed(es)) {
			t.Fatalf("backward: %d of %d entries, %v", len(gotBack), len(es), err)
		}
		// And turn round, and seek.
		if !fwd.Last() || !fwd.Prev() || string(fwd.Key()) != es[len(es)-2].Key {
			t.Fatalf("Last, Prev: %q, %v", fwd.Key(), fwd.Err())
		}
		for _, i := range []int{0, 1, half, len(es) - 1} {
			if !bwd.SeekGE([]byte(es[i].Key)) || string(bwd.Value()) != es[i].Value {
				t.Fatalf("SeekGE(%q): %q, %v", es[i].Key, bwd.Key(), bwd.Err())
			}
			if i > 0 && (!bwd.Prev() || string(bwd.Key()) != es[i-1].Key) {
				t.Fatalf("Prev after SeekGE(%q): %q, %v", es[i].Key, bwd.Key(), bwd.Err())
			}
		}
	})
}

// TestCacheConcurrentFill starts lookups, scans, seeks and Verify from
// many goroutines at once on fresh readers, so that the reading and
// caching of each block race (run with -race), through a cache that holds
// the table and through one that thrashes: every read must be right, and
// a cache that holds the table ends up with every block.
func TestCacheConcurrentFill(t *testing.T) {
	data, es, decoded := cacheTable(t, 3000)
	n := len(dataBlocks(t, data))
	rounds := 4
	if raceEnabled || testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		capacity := 2*decoded + 64<<10
		if round%2 == 1 {
			capacity = 16 << 10
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			sources(t, data, cacheOpts(t, capacity), func(t *testing.T, r *reader.Reader) {
				const workers = 16
				var start, wg sync.WaitGroup
				start.Add(1)
				for g := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start.Wait()
						rng := rand.New(rand.NewPCG(uint64(g), uint64(round)))
						switch g % 4 {
						case 0, 1: // lookups in a random order
							for _, i := range rng.Perm(len(es)) {
								e := es[i]
								if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
									t.Errorf("Get(%q) = %q, %v", e.Key, shorten(v), err)
									return
								}
							}
						case 2: // a full scan, or short scans from random keys
							if g%8 == 2 {
								if got, err := scan(r); err != nil || !slices.Equal(got, es) {
									t.Errorf("scan: %d of %d entries, %v", len(got), len(es), err)
								}
								return
							}
							it := r.NewIterator()
							defer it.Close()
							for range 200 {
								i := rng.IntN(len(es))
								j := i
								for ok := it.SeekGE([]byte(es[i].Key)); ok && j < i+30; ok = it.Next() {
									if string(it.Key()) != es[j].Key || string(it.Value()) != es[j].Value {
										t.Errorf("iterator at %q, want %q", it.Key(), es[j].Key)
										return
									}
									j++
								}
								if err := it.Err(); err != nil {
									t.Errorf("iterator: %v", err)
									return
								}
							}
						case 3:
							if g%8 == 3 {
								if err := r.Verify(); err != nil {
									t.Errorf("Verify: %v", err)
								}
								return
							}
							if got, err := scanBack(r); err != nil || !slices.Equal(got, reversed(es)) {
								t.Errorf("backward scan: %d of %d entries, %v", len(got), len(es), err)
							}
						}
					}()
				}
				start.Done()
				wg.Wait()
				if round%2 == 0 {
					for i := range n {
						if !reader.CachedBlock(r, i) {
							t.Fatalf("block %d of %d is not cached", i, n)
						}
					}
				}
				getAll(t, r, es, 5)
			})
		})
	}
}

// TestCacheReadAtErrors: a read that fails while a block is read for the
// cache fails that lookup only; the block is read on a later try, and
// cached blocks are served without reads.
func TestCacheReadAtErrors(t *testing.T) {
	data, es, _ := cacheTable(t, 1000)
	blocks := dataBlocks(t, data)
	src := &flakyReaderAt{data: data, failBelow: int64(blocks[len(blocks)/2].Handle.Offset)}
	// A tail of the footer alone: no data block comes from New's read.
	r, err := reader.New(src, int64(len(data)), &reader.Options{TailSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	last := es[len(es)-1]
	if v, err := r.Get([]byte(last.Key)); err != nil || string(v) != last.Value {
		t.Fatalf("Get(%q) = %q, %v", last.Key, shorten(v), err)
	}
	src.armed.Store(true)
	first := es[0]
	if _, err := r.Get([]byte(first.Key)); !errors.Is(err, errIO) {
		t.Fatalf("Get(%q) with failing reads: %v, want the read error", first.Key, err)
	}
	if v, err := r.Get([]byte(last.Key)); err != nil || string(v) != last.Value {
		t.Fatalf("Get(%q) of a decoded block with failing reads = %q, %v", last.Key, shorten(v), err)
	}
	src.armed.Store(false)
	getAll(t, r, es, 6)
	if got, err := scan(r); err != nil || !slices.Equal(got, es) {
		t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
	}
}

// TestCacheCloseWhileReading closes a reader while lookups and iterators
// use its cached blocks: calls in flight finish right, later ones report
// ErrClosed, an iterator opened before Close reads on, and once it is
// closed the reader's blocks have left the cache.
func TestCacheCloseWhileReading(t *testing.T) {
	data, es, _ := cacheTable(t, 3000)
	for _, how := range []string{"New", "Open"} {
		t.Run(how, func(t *testing.T) {
			var r *reader.Reader
			var err error
			opts := cacheOpts(t, 64<<10)
			if how == "New" {
				r, err = reader.New(bytes.NewReader(data), int64(len(data)), opts)
			} else {
				r, err = reader.Open(writeFile(t, t.TempDir(), data), opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			e := es[10]
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v", e.Key, shorten(v), err)
			}
			early := r.NewIterator()
			if !early.First() {
				t.Fatal(early.Err())
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 9))
					for {
						select {
						case <-stop:
							return
						default:
						}
						e := es[rng.IntN(len(es))]
						if g%2 == 0 {
							v, err := r.Get([]byte(e.Key))
							if err == nil && string(v) != e.Value || err != nil && !errors.Is(err, reader.ErrClosed) {
								t.Errorf("Get(%q) = %q, %v", e.Key, shorten(v), err)
								return
							}
							continue
						}
						it := r.NewIterator()
						k := 0
						for ok := it.SeekGE([]byte(e.Key)); ok && k < 50; ok = it.Next() {
							k++
						}
						if err := it.Close(); err != nil && !errors.Is(err, reader.ErrClosed) {
							t.Errorf("iterator: %v", err)
							return
						}
					}
				}()
			}
			// Let the goroutines run a little, then close under them.
			for range 200 {
				runtime.Gosched()
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			close(stop)
			wg.Wait()
			got := []entry{{string(early.Key()), string(early.Value())}}
			for early.Next() {
				got = append(got, entry{string(early.Key()), string(early.Value())})
			}
			if err := early.Close(); err != nil || !slices.Equal(got, es) {
				t.Fatalf("iterator opened before Close: %d of %d entries, %v", len(got), len(es), err)
			}
			if _, err := r.Get([]byte(e.Key)); !errors.Is(err, reader.ErrClosed) {
				t.Fatalf("Get after Close: %v", err)
			}
			if st := opts.Cache.Stats(); st.Size != 0 {
				t.Fatalf("%d bytes still cached after Close", st.Size)
			}
		})
	}
}

// TestCacheMaxBlockSize: a table whose properties understate its largest
// decoded data block (tag 16, which bounds what a reader decompresses a
// block to) is corrupt whatever the cache: Verify reports it, and no read
// of the block succeeds.
func TestCacheMaxBlockSize(t *testing.T) {
	orig, es, _ := cacheTable(t, 3000)
	blocks := dataBlocks(t, orig)
	var largest int
	for i, b := range blocks {
		if len(b.Contents) > len(blocks[largest].Contents) {
			largest = i
		}
	}
	r := openMem(t, orig, nil)
	p := r.Properties()
	r.Close()
	if p.MaxBlockSize != uint64(len(blocks[largest].Contents)) {
		t.Fatalf("MaxBlockSize %d, largest block %d bytes", p.MaxBlockSize, len(blocks[largest].Contents))
	}
	f, err := footerOf(orig)
	if err != nil {
		t.Fatal(err)
	}
	// The unchanged properties lay out the same table.
	if control := relayout(orig, orig[f.Filter.Offset:f.Filter.Offset+f.Filter.Length], orig[f.Index.Offset:f.Index.Offset+f.Index.Length], p); !bytes.Equal(control, orig) {
		t.Fatal("relayout of the unchanged parts differs from the table")
	}
	p.MaxBlockSize--
	data := relayout(orig, orig[f.Filter.Offset:f.Filter.Offset+f.Filter.Length], orig[f.Index.Offset:f.Index.Offset+f.Index.Length], p)
	for _, capacity := range []int64{1 << 20, 0, 4096} {
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			sources(t, data, cacheOpts(t, capacity), func(t *testing.T, r *reader.Reader) {
				for _, k := range blocks[largest].Keys {
					if v, err := r.Get([]byte(k)); !errors.Is(err, format.ErrCorrupt) {
						t.Fatalf("Get(%q) of a key in the oversized block = %q, %v; want ErrCorrupt", k, shorten(v), err)
					}
				}
				getAll(t, r, es[:len(blocks[0].Keys)], 7) // other blocks read fine
				wantCorrupt(t, r.Verify(), len(data), "snappy block claims")
			})
		})
	}
}

// footerOf decodes the footer of a table.
func footerOf(data []byte) (footer.Footer, error) {
	return footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
}

// TestManyReadersOneCache runs 16 goroutines of Gets and short scans over
// 200 readers sharing a 1 MiB cache, so that blocks are evicted
// constantly (run it with -race, and with -tags sstable_poison, where a
// block read after it was freed shows up as a wrong value): every value
// must be right, the cache must stay within its capacity, it cannot be
// closed while the readers are open, and it holds nothing once they are
// closed.
func TestManyReadersOneCache(t *testing.T) {
	tables, perTable, ops := 200, 400, 4000
	if testing.Short() || raceEnabled {
		ops = 1500
	}
	c := newCache(t, 1<<20)
	type tbl struct {
		r  *reader.Reader
		es []entry
	}
	ts := make([]tbl, tables)
	dir := t.TempDir()
	for i := range ts {
		es := numbered(perTable, func(j int) string { return fmt.Sprintf("table %d value %d %s", i, j, strings.Repeat("xyz", 1+j%30)) })
		opts := &builder.Options{BlockSize: 1024, Compression: format.SnappyCompression, HashIndex: i%2 == 0}
		if i%4 == 3 {
			opts.Compression = format.NoCompression
		}
		data, _ := build(t, es, opts)
		var r *reader.Reader
		var err error
		if i%3 == 0 {
			r, err = reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Cache: c})
		} else {
			r, err = reader.Open(writeFile(t, dir, data), &reader.Options{Cache: c, NoMmap: i%3 == 2})
		}
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = tbl{r, es}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 16))
			buf := make([]byte, 0, 256)
			for n := range ops {
				tb := &ts[rng.IntN(len(ts))]
				j := rng.IntN(len(tb.es))
				e := tb.es[j]
				if n%16 == 15 { // a short scan, which pins a block across moves
					it := tb.r.NewIterator()
					k := j
					for ok := it.SeekGE([]byte(e.Key)); ok && k < j+20; ok = it.Next() {
						if string(it.Key()) != tb.es[k].Key || string(it.Value()) != tb.es[k].Value {
							t.Errorf("iterator at %q = %q, want %q", it.Key(), shorten(it.Value()), tb.es[k].Key)
							break
						}
						k++
					}
					if err := it.Close(); err != nil {
						t.Error(err)
					}
					continue
				}
				v, err := tb.r.GetAppend(buf[:0], []byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Errorf("Get(%q) = %q, %v; want %q", e.Key, shorten(v), err, shorten([]byte(e.Value)))
					return
				}
				if _, err := tb.r.GetAppend(buf[:0], []byte(e.Key+"~")); !errors.Is(err, reader.ErrNotFound) {
					t.Errorf("Get of an absent key: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := c.Stats()
	if st.Size > st.Capacity || st.Evictions == 0 || st.Hits == 0 {
		t.Errorf("cache stats %+v: want evictions and hits within capacity", st)
	}
	if err := c.Close(); !errors.Is(err, cache.ErrInUse) {
		t.Errorf("Close of a cache with open readers: %v, want ErrInUse", err)
	}
	for _, tb := range ts {
		if err := tb.r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.Size != 0 {
		t.Errorf("%d bytes cached after every reader closed", st.Size)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after the readers: %v", err)
	}
}

// TestNoMmap: Open with NoMmap reads the file with pread, never maps it,
// and keeps everything it holds, raw blocks and sections included, in its
// cache, which empties on Close.
func TestNoMmap(t *testing.T) {
	es := numbered(2000, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("abc", 1+i%40)) })
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		for _, hash := range []bool{false, true} {
			data, _ := build(t, es, &builder.Options{BlockSize: 1024, Compression: c, HashIndex: hash})
			t.Run(fmt.Sprintf("%v/hash=%v", c, hash), func(t *testing.T) {
				opts := cacheOpts(t, 1<<20)
				opts.NoMmap = true
				r, err := reader.Open(writeFile(t, t.TempDir(), data), opts)
				if err != nil {
					t.Fatal(err)
				}
				if r.Mapped() {
					t.Fatal("Open with NoMmap mapped the file")
				}
				getAll(t, r, es, 8)
				if got, err := scan(r); err != nil || !slices.Equal(got, es) {
					t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
				}
				if err := r.Verify(); err != nil {
					t.Fatal(err)
				}
				st := opts.Cache.Stats()
				if st.Size == 0 || st.Size > st.Capacity || st.Hits == 0 {
					t.Fatalf("cache %+v after reads of an unmapped reader", st)
				}
				if !reader.CachedBlock(r, 0) {
					t.Fatal("block 0 is not cached")
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if st := opts.Cache.Stats(); st.Size != 0 {
					t.Fatalf("%d bytes cached after Close", st.Size)
				}
			})
		}
	}
}

// TestBlockLargerThanCache reads a table whose blocks are larger than the
// whole cache: they are served uncached, every read is right, and the
// cache never holds more than its capacity.
func TestBlockLargerThanCache(t *testing.T) {
	es := numbered(40, func(i int) string { return fmt.Sprintf("%d %s", i, strings.Repeat("large value ", 1000+i)) })
	data, p := build(t, es, &builder.Options{BlockSize: 32 << 10, Compression: format.SnappyCompression})
	if p.MaxBlockSize <= 16<<10 {
		t.Fatalf("largest block %d bytes", p.MaxBlockSize)
	}
	opts := cacheOpts(t, 16<<10)
	sources(t, data, opts, func(t *testing.T, r *reader.Reader) {
		getAll(t, r, es, 9)
		if got, err := scan(r); err != nil || !slices.Equal(got, es) {
			t.Fatalf("scan: %d of %d entries, %v", len(got), len(es), err)
		}
		if st := opts.Cache.Stats(); st.Size > st.Capacity || reader.CachedBlock(r, 0) {
			t.Fatalf("cache %+v, block 0 cached: %v", st, reader.CachedBlock(r, 0))
		}
	})
}
