package merge_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// benchStack writes levels tables of n entries each (16-byte keys drawn
// from a key space of 4n, so that tables overlap; 100-byte values;
// snappy), each with range deletions over about 1% of its key range,
// and returns them as a stack, newest first.
func benchStack(b *testing.B, levels, n int) []merge.Level {
	dir := b.TempDir()
	var opts *reader.Options
	if n > benchN {
		// Room for every table's blocks, as bench/cmd/merge gives them;
		// DefaultCache holds about two such tables.
		c, err := cache.New(512 << 20)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		opts = &reader.Options{Cache: c}
	}
	var stack []merge.Level
	for l := range levels {
		rng := rand.New(rand.NewPCG(uint64(l), 1))
		seen := map[uint64]bool{}
		keys := make([]uint64, 0, n)
		for len(keys) < n {
			k := rng.Uint64N(uint64(4 * n))
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		path := filepath.Join(dir, fmt.Sprintf("%d.sst", l))
		bl, err := builder.Create(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		val := make([]byte, 100)
		for _, k := range keys {
			if err := bl.Add(benchKey(k), val); err != nil {
				b.Fatal(err)
			}
		}
		starts := make([]uint64, 10)
		for d := range starts {
			starts[d] = rng.Uint64N(uint64(4 * n))
		}
		slices.Sort(starts)
		for _, start := range starts {
			if err := bl.AddSpan(benchKey(start), benchKey(start+uint64(4*n)/1000), nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := bl.Finish(); err != nil {
			b.Fatal(err)
		}
		r, err := reader.Open(path, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		stack = append([]merge.Level{merge.Tables(r)}, stack...)
	}
	return stack
}

func benchKey(k uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("userkey-"), k)
}

const benchN = 20_000

func BenchmarkScan(b *testing.B) {
	stack := benchStack(b, 8, benchN)
	it := merge.NewIterator(stack, nil)
	defer it.Close()
	b.ReportAllocs()
	for b.Loop() {
		if !it.Next() {
			it.First()
		}
	}
}

func BenchmarkScanReverse(b *testing.B) {
	stack := benchStack(b, 8, benchN)
	it := merge.NewIterator(stack, nil)
	defer it.Close()
	b.ReportAllocs()
	for b.Loop() {
		if !it.Prev() {
			it.Last()
		}
	}
}

func BenchmarkSeekGENext10(b *testing.B) { benchSeekGENext10(b, benchN) }

// BenchmarkSeekGENext10Large is BenchmarkSeekGENext10 at the size of
// bench/cmd/merge's tables: 250k entries each, whose index is
// partitioned, and seeks at 64k keys, so that most of what a seek reads
// is out of the CPU's caches.
func BenchmarkSeekGENext10Large(b *testing.B) { benchSeekGENext10(b, 250_000) }

func benchSeekGENext10(b *testing.B, n int) {
	stack := benchStack(b, 8, n)
	it := merge.NewIterator(stack, nil)
	defer it.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = benchKey(rng.Uint64N(uint64(4 * n)))
	}
	for _, k := range keys { // warm: every table's blocks in the cache
		it.SeekGE(k)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		ok := it.SeekGE(keys[i&(len(keys)-1)])
		for j := 0; ok && j < 10; j++ {
			ok = it.Next()
		}
		i++
	}
}

func BenchmarkGetAbsent(b *testing.B) {
	stack := benchStack(b, 8, benchN)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = benchKey(uint64(8*benchN + i))
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		merge.Get(stack, keys[i&1023], nil)
		i++
	}
}
