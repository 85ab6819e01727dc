package reader_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestAll ranges over Reader.All and over Iterator.All with bounds (set by
// NewIter, then by SetBounds) on every table layout, mapped and not, and
// checks that they see what First and Next see, and that a second range
// over the same iterator starts again.
func TestAll(t *testing.T) {
	es := gappedEntries(800)
	for _, k := range boundsKinds {
		opts := k.opts
		opts.BlockSize = 256
		data, _ := build(t, es, &opts)
		t.Run(k.name, func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
				var got []entry
				var err error
				for k, v := range r.All(&err) {
					got = append(got, entry{string(k), string(v)})
				}
				if err != nil || !slices.Equal(got, es) {
					t.Fatalf("Reader.All: %d entries, %v; want %d", len(got), err, len(es))
				}

				lo, hi := es[100].Key, es[700].Key
				it := r.NewIter(&reader.IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)})
				defer it.Close()
				for round, want := range [][]entry{es[100:700], es[100:700], es[5:6]} {
					if round == 2 {
						it.SetBounds([]byte(es[5].Key), []byte(es[5].Key+"\x00"))
					}
					got = got[:0]
					for k, v := range it.All() {
						got = append(got, entry{string(k), string(v)})
					}
					if !slices.Equal(got, want) || it.Err() != nil {
						t.Fatalf("Iterator.All, round %d: %d entries from %q, %v; want %d", round, len(got), got[:min(1, len(got))], it.Err(), len(want))
					}
				}
			})
		})
	}
}

// TestAllBreakReleases checks that breaking out of Reader.All's loop
// closes its iterator: once the Reader is closed, its cache can be closed
// too, which fails with cache.ErrInUse while an iterator holds the
// table (checked first, so that the test can fail). A break leaves *errp
// nil.
func TestAllBreakReleases(t *testing.T) {
	es := gappedEntries(500)
	data, _ := build(t, es, &builder.Options{BlockSize: 256, Compression: format.SnappyCompression})
	for _, how := range []string{"open iterator", "break", "panic"} {
		t.Run(how, func(t *testing.T) {
			c := newCache(t, 1<<20)
			r := openMem(t, data, &reader.Options{Cache: c})
			var it *reader.Iterator
			switch how {
			case "open iterator":
				it = r.NewIterator()
				it.First()
			case "break":
				err := errors.New("not set")
				n := 0
				for range r.All(&err) {
					if n++; n == 300 {
						break
					}
				}
				if err != nil || n != 300 {
					t.Fatalf("after a break at entry %d: err = %v", n, err)
				}
			case "panic":
				func() {
					defer func() { recover() }()
					var err error
					for range r.All(&err) {
						panic("in the loop")
					}
				}()
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			err := c.Close()
			if it != nil {
				if !errors.Is(err, cache.ErrInUse) {
					t.Fatalf("cache.Close with an iterator open = %v, want ErrInUse", err)
				}
				it.Close()
				err = c.Close()
			}
			if err != nil {
				t.Fatalf("cache.Close after the loop: %v", err)
			}
		})
	}
}

// TestAllReportsErrors damages a data block and checks that both forms of
// All end early and report the corruption, naming the table: through
// errp for Reader.All, and through Err and Close for Iterator.All. A
// closed reader's All yields nothing and reports ErrClosed; All(nil)
// yields nothing.
func TestAllReportsErrors(t *testing.T) {
	es := gappedEntries(800)
	data, _ := build(t, es, &builder.Options{BlockSize: 256})
	blocks := dataBlocks(t, data)
	b := blocks[len(blocks)/2]
	damaged := bytes.Clone(data)
	damaged[b.Handle.Offset+b.Handle.Length/2] ^= 0x55
	const name = "damaged.sst"
	r, err := reader.New(bytes.NewReader(damaged), int64(len(damaged)), &reader.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range r.All(&err) {
		if string(k) >= b.Keys[0] {
			t.Fatalf("Reader.All yielded %q, in or past the damaged block", k)
		}
		n++
	}
	ce := wantCorrupt(t, err, len(data), name+": ")
	if ce.File != name || n == 0 {
		t.Fatalf("Reader.All: %d entries, File %q", n, ce.File)
	}

	it := r.NewIterator()
	n = 0
	for range it.All() {
		n++
	}
	wantCorrupt(t, it.Err(), len(data), name+": ")
	if err := it.Close(); !errors.Is(err, format.ErrCorrupt) || n == 0 || n >= len(es) {
		t.Fatalf("Iterator.All: %d entries, Close = %v", n, err)
	}

	for range r.All(nil) {
		t.Fatal("All(nil) yielded an entry")
	}
	r.Close()
	for range r.All(&err) {
		t.Fatal("All on a closed reader yielded an entry")
	}
	if !errors.Is(err, reader.ErrClosed) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("All on a closed reader: %v", err)
	}
}

// TestAllAllocs checks that ranging over Iterator.All allocates nothing
// per entry: a scan of 1,000 entries, mapped and not, allocates no more
// than the loop's closures.
func TestAllAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	es := gappedEntries(1000)
	data, _ := build(t, es, &builder.Options{BlockSize: 1024})
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		it := r.NewIterator()
		defer it.Close()
		scan := func() {
			n := 0
			for range it.All() {
				n++
			}
			if n != len(es) {
				t.Fatalf("%d entries", n)
			}
		}
		scan()
		if n := testing.AllocsPerRun(20, scan); n != 0 {
			t.Errorf("a range over Iterator.All: %v allocations", n)
		}
	})
}
