package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// gappedEntries returns n entries whose keys leave gaps, so that index
// separators are shortened strictly between blocks.
func gappedEntries(n int) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i] = entry{fmt.Sprintf("key%06d", 7*i), fmt.Sprintf("value %d, padded to fill blocks sooner", i)}
	}
	return es
}

// TestBoundsDoNotReadPastThem checks that a scan stops at the upper bound
// without reading the next data block when the index separator is at or
// past the bound, and a backward scan at the lower bound likewise.
func TestBoundsDoNotReadPastThem(t *testing.T) {
	es := gappedEntries(300)
	data, _ := build(t, es, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression})
	blocks := dataBlocks(t, data)
	if len(blocks) < 4 {
		t.Fatalf("%d blocks", len(blocks))
	}
	i := 1 // a block whose separator lies strictly above its last key
	for ; i < len(blocks)-1; i++ {
		if blocks[i].Separator > blocks[i].Keys[len(blocks[i].Keys)-1] {
			break
		}
	}
	if i == len(blocks)-1 {
		t.Fatal("no shortened separator")
	}
	upper := blocks[i].Separator
	r := openMem(t, data, cacheOpts(t, 1<<20))
	defer r.Close()
	it := r.NewIter(&reader.IterOptions{UpperBound: []byte(upper)})
	var n int
	for ok := it.SeekGE([]byte(blocks[i].Keys[0])); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n != len(blocks[i].Keys) {
		t.Fatalf("scan below %q gave %d keys, want the %d of block %d", upper, n, len(blocks[i].Keys), i)
	}
	if reader.CachedBlock(r, i+1) {
		t.Fatalf("block %d was read although its predecessor's separator %q is at the upper bound", i+1, upper)
	}

	lower := blocks[i+1].Keys[0]
	it = r.NewIter(&reader.IterOptions{LowerBound: []byte(lower)})
	n = 0
	for ok := it.SeekLT([]byte(blocks[i+2].Keys[0])); ok; ok = it.Prev() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n != len(blocks[i+1].Keys) {
		t.Fatalf("scan back to %q gave %d keys, want %d", lower, n, len(blocks[i+1].Keys))
	}
	if reader.CachedBlock(r, i-1) {
		t.Fatalf("block %d was read although its separator is below the lower bound", i-1)
	}
}

// TestSeekLTAfterExhaustion is the adapter's case from issue 11: after a
// SeekGE past the end, SeekLT of the same key finds the last key.
func TestSeekLTAfterExhaustion(t *testing.T) {
	es := gappedEntries(100)
	data, _ := build(t, es, &builder.Options{BlockSize: 128})
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		it := r.NewIterator()
		defer it.Close()
		if it.SeekGE([]byte("zzz")) || it.Prev() {
			t.Fatal("SeekGE past the end, or Prev after it, returned true")
		}
		if !it.SeekLT([]byte("zzz")) || string(it.Key()) != es[len(es)-1].Key {
			t.Fatalf("SeekLT past the end at %q, want %q", it.Key(), es[len(es)-1].Key)
		}
		if it.SeekLT([]byte(es[0].Key)) || it.Err() != nil {
			t.Fatalf("SeekLT of the first key: %v %v", it.Valid(), it.Err())
		}
		if !it.SeekLT([]byte(es[50].Key)) || string(it.Key()) != es[49].Key {
			t.Fatalf("SeekLT(%q) at %q", es[50].Key, it.Key())
		}
	})
}

// TestIteratorAfterClose checks the documented choice: an iterator opened
// before Reader.Close goes on working until closed; one opened after
// fails with ErrClosed, as do Get and Has. Partitioned tables (version 3)
// too: the iterator reads partitions after Close, the reader's cache
// slots for them dropped, and goes back across them with Prev and SeekLT.
func TestIteratorAfterClose(t *testing.T) {
	es := gappedEntries(500)
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		for _, parted := range []bool{false, true} {
			opts := &builder.Options{BlockSize: 256, Compression: c}
			if parted {
				opts.PartitionThreshold, opts.PartitionSize = 1, 512
			}
			data, _ := build(t, es, opts)
			sources(t, data, cacheOpts(t, 16<<10), func(t *testing.T, r *reader.Reader) {
				iteratorAfterClose(t, r, es)
			})
		}
	}
}

func iteratorAfterClose(t *testing.T, r *reader.Reader, es []entry) {
	it := r.NewIterator()
	if !it.First() {
		t.Fatal(it.Err())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	n := 1
	for it.Next() {
		if string(it.Key()) != es[n].Key || string(it.Value()) != es[n].Value {
			t.Fatalf("after Close: at %q, want %q", it.Key(), es[n].Key)
		}
		n++
	}
	if err := it.Err(); err != nil || n != len(es) {
		t.Fatalf("after Close: %d entries, %v", n, err)
	}
	n = len(es) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if string(it.Key()) != es[n].Key {
			t.Fatalf("after Close, backwards: at %q, want %q", it.Key(), es[n].Key)
		}
		n--
	}
	if err := it.Err(); err != nil || n != -1 {
		t.Fatalf("after Close, backwards: %d entries left, %v", n+1, err)
	}
	for _, i := range []int{len(es) - 1, 0, len(es) / 2, 1} {
		if !it.SeekLT([]byte(es[i].Key+"\x00")) || string(it.Key()) != es[i].Key {
			t.Fatalf("after Close: SeekLT past %q at %q, %v", es[i].Key, it.Key(), it.Err())
		}
	}
	if err := it.Close(); err != nil {
		t.Fatalf("after Close: %v", err)
	}
	late := r.NewIter(nil)
	if late.First() || !errors.Is(late.Err(), reader.ErrClosed) {
		t.Fatalf("iterator opened after Close: %v", late.Err())
	}
	late.Close()
	if _, err := r.Has([]byte(es[0].Key)); !errors.Is(err, reader.ErrClosed) {
		t.Fatalf("Has after Close: %v", err)
	}
	if !r.MayContainPrefix([]byte("x")) {
		t.Fatal("MayContainPrefix after Close = false")
	}
}

// customSplit is a splitter readers know only through Options.Splitters:
// the prefix is everything up to and including the first '/'.
type customSplit struct{}

func (customSplit) Name() string { return "test.UpToSlash" }
func (customSplit) Split(k []byte) int {
	for i, c := range k {
		if c == '/' {
			return i + 1
		}
	}
	return len(k)
}

// TestUnknownSplitter reads a table whose splitter the reader does not
// know: no filter and no hash index, every lookup still right.
func TestUnknownSplitter(t *testing.T) {
	var es []entry
	for u := range 50 {
		for v := range 3 {
			es = append(es, entry{fmt.Sprintf("u%03d/%d", u, v), fmt.Sprint(u, v)})
		}
	}
	data, _ := build(t, es, &builder.Options{BlockSize: 128, HashIndex: true, Splitter: customSplit{}})
	known := &reader.Options{Splitters: []format.Splitter{customSplit{}}}
	for _, tc := range []struct {
		name string
		opts *reader.Options
	}{{"known", known}, {"unknown", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			sources(t, data, tc.opts, func(t *testing.T, r *reader.Reader) {
				p := r.Properties()
				if p.Splitter != "test.UpToSlash" || p.SplitterUnknown != (tc.opts == nil) {
					t.Fatalf("splitter %q, unknown %v", p.Splitter, p.SplitterUnknown)
				}
				if err := r.Verify(); err != nil {
					t.Fatal(err)
				}
				for _, e := range es {
					if ok, err := r.Has([]byte(e.Key)); !ok || err != nil {
						t.Fatalf("Has(%q) = %v, %v", e.Key, ok, err)
					}
				}
				it := r.NewIterator()
				defer it.Close()
				if !it.SeekPrefixGE([]byte("u007/"), []byte("u007/1")) || string(it.Key()) != "u007/1" {
					t.Fatalf("SeekPrefixGE at %q, %v", it.Key(), it.Err())
				}
				if it.SeekPrefixGE([]byte("u007/"), []byte("u007/3")) {
					t.Fatalf("SeekPrefixGE past the prefix's versions at %q", it.Key())
				}
				absent := 0
				for u := 100; u < 1100; u++ {
					if !r.MayContainPrefix(fmt.Appendf(nil, "u%04d/", u)) {
						absent++
					}
				}
				if tc.opts == nil && absent != 0 {
					t.Fatalf("MayContainPrefix = false %d times with an unknown splitter", absent)
				}
				if tc.opts != nil && absent < 900 {
					t.Fatalf("MayContainPrefix ruled out only %d of 1000 absent prefixes", absent)
				}
			})
		})
	}
}

// TestZeroAllocs checks that Has, MayContainPrefix, SeekPrefixGE,
// SeekPrefixLT, SeekLT and a bounded Next allocate nothing, on mapped and
// unmapped readers of every table kind: version 1, 2 (hash index) and 3
// (partitioned, in partitions of about 1 KiB, so that the moves cross
// partitions).
func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var es []entry
	for u := range 2000 {
		for v := range 1 + u%3 {
			k := binary.BigEndian.AppendUint64(fmt.Appendf(nil, "user%06d", u), ^uint64(3-v)) // newest version first
			es = append(es, entry{string(k), "some value"})
		}
	}
	for _, kind := range []string{"v1", "hash", "partitioned", "v4", "v4 partitioned"} {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
			opts := &builder.Options{HashIndex: kind == "hash", Compression: c, Splitter: format.Suffix(8)}
			if kind == "v1" || kind == "partitioned" {
				opts.FormatVersion = format.Version1 // version 3 when partitioned
			}
			if kind == "partitioned" || kind == "v4 partitioned" {
				opts.PartitionThreshold, opts.PartitionSize = 1, 1024
			}
			data, p := build(t, es, opts)
			if want := wantVersion(opts, len(es)); p.FormatVersion != want || p.Partitioned != (want == format.Version4 && wantPartitioned(opts, len(es))) {
				t.Fatalf("%s: format version %d (partitioned %v), want %d", kind, p.FormatVersion, p.Partitioned, want)
			}
			t.Run(fmt.Sprintf("%s/%v", kind, c), func(t *testing.T) {
				sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
					present := []byte(es[1234].Key)
					prefix := present[:len(present)-8]
					absent := []byte("user999999")
					above := append(bytes.Clone(prefix), "\xff\xff\xff\xff\xff\xff\xff\xff\xff"...) // above the prefix's versions
					absentIn := []byte("user000700\x00")                                            // within the bounds, between present prefixes
					absentAbove := append(bytes.Clone(absentIn), "\xff\xff\xff\xff\xff\xff\xff\xff\xff"...)
					it := r.NewIter(&reader.IterOptions{LowerBound: []byte("user000100"), UpperBound: []byte("user001900")})
					defer it.Close()
					it.First()
					for name, f := range map[string]func(){
						"Has": func() {
							if ok, err := r.Has(present); !ok || err != nil {
								t.Fatal(ok, err)
							}
						},
						"SeekPrefixGE present": func() {
							if !it.SeekPrefixGE(prefix, present) {
								t.Fatal(it.Err())
							}
						},
						"SeekPrefixGE absent": func() { it.SeekPrefixGE(absent, absent) },
						"SeekPrefixLT present": func() {
							if !it.SeekPrefixLT(prefix, above) {
								t.Fatal(it.Err())
							}
						},
						"SeekPrefixLT absent": func() {
							if it.SeekPrefixLT(absentIn, absentAbove) {
								t.Fatalf("SeekPrefixLT found absent %q", absentIn)
							}
						},
						"MayContainPrefix": func() {
							if !r.MayContainPrefix(prefix) {
								t.Fatal("MayContainPrefix = false for a present prefix")
							}
						},
						"SeekLT far": func() {
							if !it.SeekLT([]byte("user001800")) || !it.SeekLT([]byte("user000200")) {
								t.Fatal(it.Err())
							}
						},
						"SeekLT": func() {
							if !it.SeekLT(present) {
								t.Fatal(it.Err())
							}
						},
						"bounded Next": func() {
							if !it.Next() {
								it.First()
							}
						},
					} {
						if n := testing.AllocsPerRun(200, f); n != 0 {
							t.Errorf("%s: %v allocations per call", name, n)
						}
					}
				})
			})
		}
	}
}

// boundsKinds are the table layouts the SetBounds tests read: format
// versions 1, 2 and 4, and partitioned tables (versions 3 and 4) in
// small partitions, all with the versioned keys' splitter.
var boundsKinds = []struct {
	name string
	opts builder.Options
}{
	{"v1", builder.Options{FormatVersion: format.Version1}},
	{"v2", builder.Options{HashIndex: true}},
	{"v4", builder.Options{}},
	{"v3", builder.Options{FormatVersion: format.Version1, PartitionThreshold: 1, PartitionSize: 512}},
	{"v4-partitioned", builder.Options{PartitionThreshold: 1, PartitionSize: 512}},
}

// TestSetBoundsMatchesNewIter runs per-query bounds through one iterator
// with SetBounds and checks each query's scans, both ways, and seeks
// against a new iterator with the same bounds (NewIter), on every table
// layout, mapped and not.
func TestSetBoundsMatchesNewIter(t *testing.T) {
	es := gappedEntries(1500)
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		return fmt.Appendf(nil, "key%06d", rng.IntN(7*len(es)+10)) // present one time in 7
	}
	collect := func(it *reader.Iterator, forward bool) []string {
		var out []string
		ok := it.First()
		if !forward {
			ok = it.Last()
		}
		for ; ok; ok = map[bool]func() bool{true: it.Next, false: it.Prev}[forward]() {
			out = append(out, string(it.Key()))
		}
		return out
	}
	for _, k := range boundsKinds {
		opts := k.opts
		opts.BlockSize, opts.Compression = 256, format.SnappyCompression
		data, _ := build(t, es, &opts)
		t.Run(k.name, func(t *testing.T) {
			sources(t, data, cacheOpts(t, 64<<10), func(t *testing.T, r *reader.Reader) {
				it := r.NewIter(&reader.IterOptions{LowerBound: []byte("key000100")})
				defer it.Close()
				for q := range 300 {
					lower, upper := key(), key()
					if q%3 == 0 && lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
						lower, upper = upper, lower
					}
					it.SetBounds(lower, upper)
					if it.Valid() || it.Next() || it.Prev() {
						t.Fatalf("SetBounds(%q, %q) left the iterator positioned", lower, upper)
					}
					fresh := r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})
					for _, forward := range []bool{true, false} {
						got, want := collect(it, forward), collect(fresh, forward)
						if !slices.Equal(got, want) {
							t.Fatalf("bounds [%q, %q), forward %v: SetBounds gave %d keys %q..., NewIter %d", lower, upper, forward, len(got), got[:min(3, len(got))], len(want))
						}
					}
					seek := key()
					if ok, want := it.SeekGE(seek), fresh.SeekGE(seek); ok != want || !bytes.Equal(it.Key(), fresh.Key()) {
						t.Fatalf("bounds [%q, %q): SeekGE(%q) = %v at %q, NewIter's %v at %q", lower, upper, seek, ok, it.Key(), want, fresh.Key())
					}
					if ok, want := it.SeekLT(seek), fresh.SeekLT(seek); ok != want || !bytes.Equal(it.Key(), fresh.Key()) {
						t.Fatalf("bounds [%q, %q): SeekLT(%q) = %v at %q, NewIter's %v at %q", lower, upper, seek, ok, it.Key(), want, fresh.Key())
					}
					if err := fresh.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestSetBoundsAllocs checks that a per-query cycle of SetBounds, a seek
// and a few steps allocates nothing once the bound buffers have grown, on
// every table layout, mapped and not: the MVCC read that a new iterator
// per query made about twice as slow.
func TestSetBoundsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var es []entry
	for u := range 1000 {
		for v := range 1 + u%3 {
			k := binary.BigEndian.AppendUint64(fmt.Appendf(nil, "user%06d", u), ^uint64(3-v))
			es = append(es, entry{string(k), "some value"})
		}
	}
	for _, k := range boundsKinds {
		opts := k.opts
		opts.Splitter = format.Suffix(8)
		data, _ := build(t, es, &opts)
		t.Run(k.name, func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
				it := r.NewIterator()
				defer it.Close()
				// The bounds are new slices each time, as a caller's
				// per-query bounds are; made up front, as fmt allocates.
				users := make([][]byte, 1001)
				for u := range users {
					users[u] = fmt.Appendf(nil, "user%06d", u)
				}
				u := 0
				cycle := func() {
					u = (u + 337) % 1000
					lower, upper := users[u], users[u+1]
					it.SetBounds(lower, upper)
					n := 0
					for ok := it.SeekGE(lower); ok; ok = it.Next() {
						n++
					}
					if n != 1+u%3 || it.Err() != nil {
						t.Fatalf("user%06d: %d versions, %v", u, n, it.Err())
					}
				}
				cycle()
				if n := testing.AllocsPerRun(200, cycle); n != 0 {
					t.Errorf("SetBounds + SeekGE + Next: %v allocations per query", n)
				}
			})
		})
	}
}

// BenchmarkBoundedQuery measures an MVCC read with per-query bounds, a
// user key's versions in [user, user+1): through one iterator whose
// bounds SetBounds changes, and through a new iterator per query (the
// only way before SetBounds). Compare the two within one run.
func BenchmarkBoundedQuery(b *testing.B) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		b.Run(c.String(), func(b *testing.B) {
			r, err := reader.Open(versionedTable(b, c, false), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			rng := rand.New(rand.NewPCG(5, 6))
			const n = 4096
			lowers, uppers := make([][]byte, n), make([][]byte, n)
			for i := range n {
				u := 2 * uint64(rng.IntN(benchPrefixes))
				lowers[i] = fmt.Appendf(nil, "user:%012d", u)
				uppers[i] = fmt.Appendf(nil, "user:%012d", u+1)
			}
			query := func(b *testing.B, it *reader.Iterator, i int) {
				ok := it.SeekGE(lowers[i%n])
				for ; ok; ok = it.Next() {
				}
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("SetBounds", func(b *testing.B) {
				b.ReportAllocs()
				it := r.NewIterator()
				defer it.Close()
				for i := 0; b.Loop(); i++ {
					it.SetBounds(lowers[i%n], uppers[i%n])
					query(b, it, i)
				}
			})
			b.Run("NewIter", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					it := r.NewIter(&reader.IterOptions{LowerBound: lowers[i%n], UpperBound: uppers[i%n]})
					query(b, it, i)
					it.Close()
				}
			})
		})
	}
}
