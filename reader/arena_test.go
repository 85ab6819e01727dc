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
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// arenaSupported reports whether a reader can keep decoded blocks in an
// arena (an anonymous memory mapping: unix only).
var arenaSupported = slices.Contains([]string{"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "linux", "netbsd", "openbsd", "solaris"}, runtime.GOOS)

// arenaTable builds a snappy version 2 table of n entries whose values
// compress (so that every block is stored snappy and the hash index holds
// decoded offsets) and returns it, its entries and the total size of its
// decoded data blocks.
func arenaTable(t testing.TB, n int) ([]byte, []entry, int64) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("abc", 1+i%40)) })
	data, p := build(t, es, &builder.Options{BlockSize: 1024, RestartInterval: 8, Compression: format.SnappyCompression, HashIndex: true})
	if p.FormatVersion != format.Version2 || p.NumDataBlocks < 20 {
		t.Fatalf("arena table: format version %d, %d data blocks", p.FormatVersion, p.NumDataBlocks)
	}
	var decoded int64
	for _, b := range dataBlocks(t, data) {
		if b.Type != format.BlockTypeSnappy {
			t.Fatalf("a data block of the arena table is stored raw")
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

// TestArenaBudget checks when a reader of a version 2 table keeps its
// decoded blocks in an arena: only for compressed blocks (decoded offsets
// in the hash index), only once the hash index loads, and only when
// BlockCacheSize holds every decoded block (the default, or a budget of
// exactly their size; not one byte less, and not with the cache
// disabled). With an arena, every block is decoded into it at most once
// and the block cache stays empty, for lookups and scans; without, the
// block cache is used. Every way, every read is right.
func TestArenaBudget(t *testing.T) {
	data, es, decoded := arenaTable(t, 3000)
	n := len(dataBlocks(t, data))
	for _, c := range []struct {
		name   string
		budget int64
		arena  bool
	}{
		{"default", 0, true},
		{"exact", decoded, true},
		{"one byte short", decoded - 1, false},
		{"small", 4096, false},
		{"disabled", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantArena := c.arena && arenaSupported
			sources(t, data, &reader.Options{BlockCacheSize: c.budget}, func(t *testing.T, r *reader.Reader) {
				if reader.ArenaInUse(r) {
					t.Fatal("an arena before the hash index is loaded")
				}
				e := es[len(es)/2]
				if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %q, %v", e.Key, shorten(v), err)
				}
				if reader.ArenaInUse(r) != wantArena {
					t.Fatalf("after a Get, ArenaInUse() = %v, want %v", reader.ArenaInUse(r), wantArena)
				}
				if wantArena {
					if got := reader.ArenaLen(r); int64(got) != decoded {
						t.Fatalf("arena of %d bytes, the decoded blocks take %d", got, decoded)
					}
					// One block decoded; a probe passing another key's
					// slot with a matching tag may have decoded another.
					if got := reader.ArenaFilled(r); got < 1 || got > 3 {
						t.Fatalf("%d blocks in the arena after one Get", got)
					}
				}
				getAll(t, r, es, 1)
				if wantArena {
					if got := reader.ArenaFilled(r); got != n {
						t.Fatalf("%d of %d blocks in the arena after a Get of every key", got, n)
					}
				}
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
				cached := reader.CachedBytes(r)
				switch {
				case wantArena && cached != 0:
					t.Fatalf("%d bytes in the block cache beside the arena", cached)
				case !wantArena && c.budget > 0 && cached == 0:
					t.Fatal("the block cache holds nothing without an arena")
				case c.budget > 0 && cached > c.budget:
					t.Fatalf("%d bytes in a block cache of %d", cached, c.budget)
				}
				getAll(t, r, es, 2)
			})
		})
	}
}

// TestArenaOtherTables: tables whose hash index holds file offsets (every
// block raw) or that have none (version 1) never get an arena, whatever
// the budget.
func TestArenaOtherTables(t *testing.T) {
	es := numbered(1000, func(i int) string { return fmt.Sprintf("value %d %s", i, strings.Repeat("abc", 1+i%40)) })
	for _, c := range []struct {
		name string
		opts builder.Options
	}{
		{"v2-raw", builder.Options{BlockSize: 1024, Compression: format.NoCompression, HashIndex: true}},
		{"v1-snappy", builder.Options{BlockSize: 1024, Compression: format.SnappyCompression}},
	} {
		data, _ := build(t, es, &c.opts)
		t.Run(c.name, func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
				getAll(t, r, es, 3)
				if reader.ArenaInUse(r) {
					t.Fatal("an arena for a table without decoded offsets")
				}
			})
		})
	}
}

// TestArenaNoAllocs: once warm, a lookup through the arena allocates
// nothing.
func TestArenaNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	if !arenaSupported {
		t.Skip("no arena on " + runtime.GOOS)
	}
	data, es, _ := arenaTable(t, 3000)
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		buf := make([]byte, 0, 256)
		for _, e := range es {
			if _, err := r.GetAppend(buf[:0], []byte(e.Key)); err != nil {
				t.Fatal(err)
			}
		}
		if !reader.ArenaInUse(r) {
			t.Fatal("no arena")
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
			t.Fatalf("GetAppend through the arena allocates %v times per run", allocs)
		}
	})
}

// TestArenaIteratorAcrossSetup opens iterators before the first Get (the
// first NewIterator sets the arena up, so their scans fill it) and uses
// them across Gets: they must still read every entry right, forwards,
// backwards and after seeks.
func TestArenaIteratorAcrossSetup(t *testing.T) {
	data, es, _ := arenaTable(t, 3000)
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
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
		// NewIterator sets the arena up, so that scans fill it for Gets.
		if reader.ArenaInUse(r) != arenaSupported {
			t.Fatalf("ArenaInUse() = %v after NewIterator", reader.ArenaInUse(r))
		}
		if arenaSupported && reader.CachedBytes(r) != 0 {
			t.Fatalf("the scans cached %d bytes beside the arena", reader.CachedBytes(r))
		}
		// Keys the iterators are on, and others.
		getAll(t, r, es[half-50:half+50], 4)
		if reader.ArenaInUse(r) != arenaSupported {
			t.Fatalf("ArenaInUse() = %v after Get", reader.ArenaInUse(r))
		}
		if arenaSupported && reader.CachedBytes(r) != 0 {
			t.Fatalf("%d bytes still cached beside the arena", reader.CachedBytes(r))
		}
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
		if reader.CachedBytes(r) != 0 && arenaSupported {
			t.Fatalf("iterators cached %d bytes beside the arena", reader.CachedBytes(r))
		}
	})
}

// TestArenaConcurrentFill starts lookups, scans, seeks and Verify from
// many goroutines at once on fresh readers, so that the arena's setup and
// the decoding of each block race (run with -race): every read must be
// right, and every block end up in the arena.
func TestArenaConcurrentFill(t *testing.T) {
	data, es, _ := arenaTable(t, 3000)
	n := len(dataBlocks(t, data))
	rounds := 4
	if raceEnabled || testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
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
				if arenaSupported {
					if !reader.ArenaInUse(r) || reader.ArenaFilled(r) != n {
						t.Fatalf("ArenaInUse() = %v, %d of %d blocks filled", reader.ArenaInUse(r), reader.ArenaFilled(r), n)
					}
					if c := reader.CachedBytes(r); c != 0 {
						// Blocks put in the cache by scans that fetched
						// them just before the arena was set up are
						// allowed; the arena must have taken over since.
						t.Logf("%d bytes left in the block cache", c)
					}
				}
				getAll(t, r, es, 5)
			})
		})
	}
}

// TestArenaReadAtErrors: a read that fails while a block is decoded into
// the arena fails that lookup only; the block is decoded on a later try.
func TestArenaReadAtErrors(t *testing.T) {
	data, es, _ := arenaTable(t, 1000)
	blocks := dataBlocks(t, data)
	src := &flakyReaderAt{data: data, failBelow: int64(blocks[len(blocks)/2].Handle.Offset)}
	r, err := reader.New(src, int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	last := es[len(es)-1]
	if v, err := r.Get([]byte(last.Key)); err != nil || string(v) != last.Value {
		t.Fatalf("Get(%q) = %q, %v", last.Key, shorten(v), err)
	}
	if reader.ArenaInUse(r) != arenaSupported {
		t.Fatalf("ArenaInUse() = %v", reader.ArenaInUse(r))
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

// TestArenaCloseWhileReading closes a reader with an arena while lookups
// and iterators use it: calls in flight finish right, later ones report
// ErrClosed, and an iterator opened before Close reads on.
func TestArenaCloseWhileReading(t *testing.T) {
	data, es, _ := arenaTable(t, 3000)
	for _, how := range []string{"New", "Open"} {
		t.Run(how, func(t *testing.T) {
			var r *reader.Reader
			var err error
			if how == "New" {
				r, err = reader.New(bytes.NewReader(data), int64(len(data)), nil)
			} else {
				r, err = reader.Open(writeFile(t, t.TempDir(), data), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			e := es[10]
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v", e.Key, shorten(v), err)
			}
			if reader.ArenaInUse(r) != arenaSupported {
				t.Fatalf("ArenaInUse() = %v", reader.ArenaInUse(r))
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
		})
	}
}

// TestArenaMaxBlockSize: a table whose properties understate its largest
// decoded data block (tag 16, which bounds what a reader decompresses a
// block to) is corrupt whether or not the reader keeps an arena: Verify
// reports it, and no read of the block succeeds, with the arena as through
// the block cache.
func TestArenaMaxBlockSize(t *testing.T) {
	orig, es, _ := arenaTable(t, 3000)
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
	for _, budget := range []int64{0, -1, 4096} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			sources(t, data, &reader.Options{BlockCacheSize: budget}, func(t *testing.T, r *reader.Reader) {
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
