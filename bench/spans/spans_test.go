// Package spans_test benchmarks span (range deletion) lookups and scans
// of this module's tables beside Pebble v2.1.7's range deletion blocks, on
// the same spans: n non-overlapping spans of 16-byte keys (so n
// fragments in both), span i = [k(2i), k(2i+1)), where k(j) is j
// big-endian then 8 bytes of SplitMix64(j). Ours stores an 8-byte value
// (a sequence number) per span and is read memory-mapped (reader.Open);
// Pebble's table is written with Writer.DeleteRange (TableFormatPebblev7,
// columnar keyspan blocks) and read through its provider and a block
// cache, as a DB reads it, with one fragment iterator from
// NewRawRangeDelIter reused for every lookup.
//
//	BenchmarkSpanAt: ours Reader.SpanAt(k); Pebble iter.SeekGE(k) and a
//	  comparison of the span's start with k (SeekGE's span is the first
//	  ending after k). The keys are k(j) for random j < 2n: half covered.
//	BenchmarkSpanScan: every fragment, First then Next, per fragment.
package spans_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	sstable2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func key(dst []byte, j int) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(j))
	return binary.BigEndian.AppendUint64(dst, mix(uint64(j)))
}

var sizes = []int{10_000, 1_000_000}

// tables holds the built tables, per size.
type tables struct {
	ours   *reader.Reader
	pebble *sstable2.Reader
	cache  *implsetup.Pebble2Cache
}

func build(b testing.TB, n int) *tables {
	b.Helper()
	dir := b.TempDir()
	ob, err := builder.Create(filepath.Join(dir, "ours.sst"), nil)
	if err != nil {
		b.Fatal(err)
	}
	pdir := filepath.Join(dir, "pebble")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		b.Fatal(err)
	}
	pw, err := implsetup.CreatePebble2(filepath.Join(pdir, fmt.Sprintf("%06d.sst", implsetup.Pebble2FileNum)), implsetup.Pebble2WriterOptions(implsetup.Snappy, math.MaxInt32))
	if err != nil {
		b.Fatal(err)
	}
	var s, e, v []byte
	for i := range n {
		s, e = key(s, 2*i), key(e, 2*i+1)
		v = binary.BigEndian.AppendUint64(v[:0], uint64(i))
		if err := ob.AddSpan(s, e, v); err != nil {
			b.Fatal(err)
		}
		if err := pw.DeleteRange(s, e); err != nil {
			b.Fatal(err)
		}
		if err := pw.RangeKeySet(s, e, nil, v); err != nil {
			b.Fatal(err)
		}
	}
	if err := ob.Finish(); err != nil {
		b.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		b.Fatal(err)
	}
	prov, err := implsetup.OpenPebble2Provider(pdir) // lists the directory: after the table is written
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { prov.Close() })
	t := &tables{cache: implsetup.NewPebble2Cache(1 << 30)}
	b.Cleanup(t.cache.Close)
	if t.ours, err = reader.Open(filepath.Join(dir, "ours.sst"), nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.ours.Close() })
	if t.pebble, err = implsetup.OpenPebble2(prov, t.cache); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.pebble.Close() })
	if got := t.ours.Properties().NumSpanFragments; got != uint64(n) {
		b.Fatalf("ours: %d fragments, want %d", got, n)
	}
	return t
}

func lookupKeys(n int) [][]byte {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = key(nil, rng.IntN(2*n))
	}
	return keys
}

func BenchmarkSpanAt(b *testing.B) {
	for _, n := range sizes {
		t := build(b, n)
		keys := lookupKeys(n)
		b.Run(fmt.Sprintf("ours/n=%d", n), func(b *testing.B) {
			t.ours.SpanAt(keys[0]) // the span block is checked and decoded on first use
			hits := 0
			for i := 0; b.Loop(); i++ {
				if _, err := t.ours.SpanAt(keys[i&(len(keys)-1)]); err == nil {
					hits++
				}
			}
			if hits == 0 {
				b.Fatal("no key covered")
			}
		})
		for _, kind := range pebbleIters {
			b.Run(fmt.Sprintf("pebble2-%s/n=%d", kind, n), func(b *testing.B) {
				it, err := t.pebble.NewRawRangeDelIter(context.Background(), sstable2.NoFragmentTransforms, sstable2.NoReadEnv)
				if err == nil && kind == "rangekey" {
					it.Close()
					it, err = t.pebble.NewRawRangeKeyIter(context.Background(), sstable2.NoFragmentTransforms, sstable2.NoReadEnv)
				}
				if err != nil || it == nil {
					b.Fatal(err)
				}
				defer it.Close()
				it.SeekGE(keys[0])
				hits := 0
				for i := 0; b.Loop(); i++ {
					k := keys[i&(len(keys)-1)]
					sp, err := it.SeekGE(k)
					if err != nil {
						b.Fatal(err)
					}
					if sp != nil && bytes.Compare(sp.Start, k) <= 0 {
						hits++
					}
				}
				if hits == 0 {
					b.Fatal("no key covered")
				}
			})
		}
	}
}

// pebbleIters names Pebble v2's two raw span iterators over the same
// spans: its range deletions and its range keys (RangeKeySet, no suffix).
var pebbleIters = []string{"rangedel", "rangekey"}

func BenchmarkSpanScan(b *testing.B) {
	for _, n := range sizes {
		t := build(b, n)
		b.Run(fmt.Sprintf("ours/n=%d", n), func(b *testing.B) {
			it := t.ours.NewSpanIterator()
			defer it.Close()
			for b.Loop() {
				c := 0
				for ok := it.First(); ok; ok = it.Next() {
					c += len(it.Span().Values)
				}
				if c != n {
					b.Fatalf("%d fragments", c)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fragment")
		})
		for _, kind := range pebbleIters {
			b.Run(fmt.Sprintf("pebble2-%s/n=%d", kind, n), func(b *testing.B) {
				it, err := t.pebble.NewRawRangeDelIter(context.Background(), sstable2.NoFragmentTransforms, sstable2.NoReadEnv)
				if err == nil && kind == "rangekey" {
					it.Close()
					it, err = t.pebble.NewRawRangeKeyIter(context.Background(), sstable2.NoFragmentTransforms, sstable2.NoReadEnv)
				}
				if err != nil || it == nil {
					b.Fatal(err)
				}
				defer it.Close()
				for b.Loop() {
					c := 0
					sp, err := it.First()
					for ; sp != nil && err == nil; sp, err = it.Next() {
						c += len(sp.Keys)
					}
					if err != nil || c != n {
						b.Fatalf("%d fragments, %v", c, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fragment")
			})
		}
	}
}

// TestSpansAgree checks that both tables hold the same fragments.
func TestSpansAgree(t *testing.T) {
	n := 1000
	tb := build(t, n)
	it := tb.ours.NewSpanIterator()
	defer it.Close()
	pit, err := tb.pebble.NewRawRangeDelIter(context.Background(), sstable2.NoFragmentTransforms, sstable2.NoReadEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer pit.Close()
	sp, err := pit.First()
	c := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err != nil || sp == nil || !bytes.Equal(sp.Start, it.Span().Start) || !bytes.Equal(sp.End, it.Span().End) {
			t.Fatalf("fragment %d: ours [%x, %x), Pebble %v, %v", c, it.Span().Start, it.Span().End, sp, err)
		}
		sp, err = pit.Next()
		c++
	}
	if c != n || sp != nil {
		t.Fatalf("%d fragments, Pebble has more: %v", c, sp)
	}
}
