package reader_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Benchmark tables: benchEntries entries with 16-byte keys and 100-byte
// values, built once per compression and layout (version 2 has a hash
// index; version 3, partitioned, is forced with or without one) into
// benchDir (removed by TestMain).
const (
	benchKeyLen   = 16
	benchValueLen = 100
)

// benchEntries is 100,000, or SSTABLE_BENCH_ENTRIES if set: larger tables
// show lookups whose index, filter or hash index no longer fit the CPU
// caches.
var benchEntries = func() int {
	if n, err := strconv.Atoi(os.Getenv("SSTABLE_BENCH_ENTRIES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}()

var (
	benchMu     sync.Mutex
	benchDir    string
	benchTables = map[benchKind]string{}
)

// benchKind names a benchmark table: its compression, whether it has a
// hash index, whether it is partitioned (format version 3, forced by a
// PartitionThreshold of 1 with the default PartitionSize), and whether it
// is format version 4 (the builder's default: a compact hash index), else
// an older version asked for.
type benchKind struct {
	c      format.Compression
	hash   bool
	parted bool
	v4     bool
}

// benchKey writes the 16-byte key of entry i: stored keys are even
// numbers, so odd ones are absent keys between them.
func benchKey(dst []byte, n uint64) []byte {
	dst = append(dst[:0], "key:"...)
	return fmt.Appendf(dst, "%012d", n)
}

func benchValue(i int) []byte {
	v := make([]byte, benchValueLen)
	binary.LittleEndian.PutUint64(v, uint64(i)*0x9e3779b97f4a7c15)
	for j := 8; j < len(v); j++ {
		if j < 50 {
			v[j] = byte(uint64(i) * uint64(j) >> 3)
		} else {
			v[j] = 'v'
		}
	}
	return v
}

func benchTable(b *testing.B, kind benchKind) string {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	c, hash := kind.c, kind.hash
	if path, ok := benchTables[kind]; ok {
		return path
	}
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "sstable-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
	}
	name := c.String()
	if hash {
		name += "-hash"
	}
	opts := &builder.Options{Compression: c, HashIndex: hash, FormatVersion: format.Version1}
	if kind.v4 {
		name += "-v4"
		opts.FormatVersion = 0
	}
	if kind.parted {
		name += "-parted"
		opts.PartitionThreshold = 1
	} else {
		// Never partitioned: once its index and filter pass the default
		// threshold (240 KiB, about 120k entries of these sizes) the table
		// would be partitioned, and SSTABLE_BENCH_ENTRIES
		// of 1M would fail the version check in benchReadersV.
		opts.PartitionThreshold = -1
	}
	path := filepath.Join(benchDir, name+".sst")
	bld, err := builder.Create(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	var key []byte
	for i := range benchEntries {
		key = benchKey(key, uint64(2*i))
		if len(key) != benchKeyLen {
			b.Fatalf("key %q is not %d bytes", key, benchKeyLen)
		}
		if err := bld.Add(key, benchValue(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := bld.Finish(); err != nil {
		b.Fatal(err)
	}
	benchTables[kind] = path
	return path
}

// benchKeys returns 4096 keys (benchEntries/16 if more, so that the
// lookups of a large table leave the CPU caches) in random order:
// present (even) or absent (odd) ones.
func benchKeys(present bool) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, max(4096, benchEntries/16))
	for i := range keys {
		n := 2 * uint64(rng.IntN(benchEntries))
		if !present {
			n++
		}
		keys[i] = benchKey(nil, n)
	}
	return keys
}

// benchReaders runs f as a sub-benchmark per compression, on the format
// version 1 tables.
func benchReaders(b *testing.B, f func(b *testing.B, r *reader.Reader)) {
	benchReadersV(b, benchKind{}, f)
}

// benchReadersV is benchReaders on the tables of kind (its compression
// ignored): with a hash index (version 2, or 3 if parted), partitioned.
func benchReadersV(b *testing.B, kind benchKind, f func(b *testing.B, r *reader.Reader)) {
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression} {
		b.Run(c.String(), func(b *testing.B) {
			kind.c = c
			r, err := reader.Open(benchTable(b, kind), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			p := r.Properties()
			parted := p.FormatVersion == format.Version3 || p.Partitioned
			if p.NumEntries != uint64(benchEntries) || (p.HashIndexSize != 0) != (kind.hash || kind.v4) || parted != kind.parted || (p.FormatVersion == format.Version4) != kind.v4 {
				b.Fatalf("table has %d entries, a %d-byte hash index, format version %d", p.NumEntries, p.HashIndexSize, p.FormatVersion)
			}
			f(b, r)
		})
	}
}

// BenchmarkGet looks up present keys (hit, append-hit) and absent ones
// (miss) in random order, in the version 1 tables; under hash/, the
// version 2 tables, whose Get goes through the hash index; under parted/
// and hash-parted/, version 3 tables (partitioned at 100k entries by a
// PartitionThreshold of 1), without and with a hash index; under v4/ and
// v4-parted/, format version 4 tables (the builder's default), one-level
// and partitioned.
func BenchmarkGet(b *testing.B) {
	benchGet(b, benchKind{})
	b.Run("hash", func(b *testing.B) { benchGet(b, benchKind{hash: true}) })
	b.Run("parted", func(b *testing.B) { benchGet(b, benchKind{parted: true}) })
	b.Run("hash-parted", func(b *testing.B) { benchGet(b, benchKind{hash: true, parted: true}) })
	b.Run("v4", func(b *testing.B) { benchGet(b, benchKind{v4: true}) })
	b.Run("v4-parted", func(b *testing.B) { benchGet(b, benchKind{v4: true, parted: true}) })
}

func benchGet(b *testing.B, kind benchKind) {
	benchReadersV(b, kind, func(b *testing.B, r *reader.Reader) {
		b.Run("hit", func(b *testing.B) {
			keys := benchKeys(true)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := r.Get(keys[i%len(keys)])
				if err != nil || len(v) != benchValueLen {
					b.Fatalf("Get: %d bytes, %v", len(v), err)
				}
			}
		})
		b.Run("miss", func(b *testing.B) {
			keys := benchKeys(false)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Get(keys[i%len(keys)]); err == nil {
					b.Fatal("Get of an absent key succeeded")
				}
			}
		})
		b.Run("append-hit", func(b *testing.B) {
			keys := benchKeys(true)
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := r.GetAppend(buf[:0], keys[i%len(keys)])
				if err != nil || len(v) != benchValueLen {
					b.Fatalf("GetAppend: %d bytes, %v", len(v), err)
				}
			}
		})
	})
}

func BenchmarkMayContain(b *testing.B) {
	benchReaders(b, func(b *testing.B, r *reader.Reader) {
		keys := benchKeys(true)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if !r.MayContain(keys[i%len(keys)]) {
				b.Fatal("MayContain = false for a present key")
			}
		}
	})
}

func BenchmarkIteratorSeekGE(b *testing.B) {
	benchReaders(b, func(b *testing.B, r *reader.Reader) {
		keys := benchKeys(false)
		it := r.NewIterator()
		defer it.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if !it.SeekGE(keys[i%len(keys)]) && it.Err() != nil {
				b.Fatal(it.Err())
			}
		}
	})
}

// BenchmarkIteratorNext steps an iterator through the version 1 tables,
// and under v4/ the version 4 ones (the builder's default), wrapping
// round at the end, with the default cache.
func BenchmarkIteratorNext(b *testing.B) {
	benchNext(b, benchKind{})
	b.Run("v4", func(b *testing.B) { benchNext(b, benchKind{v4: true}) })
}

func benchNext(b *testing.B, kind benchKind) {
	benchReadersV(b, kind, func(b *testing.B, r *reader.Reader) {
		it := r.NewIterator()
		defer it.Close()
		if !it.First() {
			b.Fatal(it.Err())
		}
		b.SetBytes(benchKeyLen + benchValueLen)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if !it.Next() {
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
				it.First()
			}
		}
	})
}

// BenchmarkOpen opens and closes a reader of the partitioned format
// version 4 snappy table (the builder's default at this size) with one
// 256 MiB cache for every open, as an engine opens its tables at start-up:
// Open's own cost, memory-mapped and, under ra/, through a ReaderAt
// (Options.NoMmap: a read of the file's 256 KiB tail, whose sections are
// copied into the cache, checked on first use). A new cache's making is
// not in it (cache.New of 256 MiB: 0.6-2.5 ms and 8.9 MiB of Go heap,
// its entry array, which cmd/compare's open figure counts, since it gives
// each open a cache of its own). live-B/reader is the Go
// heap a reader keeps once open, of 64 open at once, uncharged to the
// cache: below the 4 KiB a reader keeps as the cost of being open
// (cache.Stats Held counts the rest). SSTABLE_BENCH_ENTRIES=10000000 is
// cmd/compare -large's size.
func BenchmarkOpen(b *testing.B) {
	for _, noMmap := range []bool{false, true} {
		name := "mmap"
		if noMmap {
			name = "ra"
		}
		b.Run(name, func(b *testing.B) {
			path := benchTable(b, benchKind{c: format.SnappyCompression, v4: true, parted: true})
			opts := cacheOpts(b, 256<<20)
			opts.NoMmap = noMmap
			open := func() *reader.Reader {
				r, err := reader.Open(path, opts)
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			// What 64 open readers keep.
			rs := make([]*reader.Reader, 64)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC() // and the pools the table's build filled
			runtime.ReadMemStats(&before)
			for i := range rs {
				rs[i] = open()
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			live := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(rs))
			for _, r := range rs {
				r.Close()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				open().Close()
			}
			b.ReportMetric(live, "live-B/reader")
		})
	}
}

// BenchmarkNewSmallTable opens and closes a reader over a ReaderAt on a
// table of 10,000 entries (about 800 KB, snappy) with a shared cache:
// New's one read of the 256 KiB tail, its decoding, and the keeping of
// the sections and data blocks the tail holds.
func BenchmarkNewSmallTable(b *testing.B) {
	es := make([]entry, 10000)
	var k []byte
	for i := range es {
		k = benchKey(k, uint64(2*i))
		es[i] = entry{string(k), string(benchValue(i))}
	}
	data, _ := build(b, es, &builder.Options{Compression: format.SnappyCompression})
	opts := cacheOpts(b, 64<<20)
	src := bytes.NewReader(data)
	b.ReportAllocs()
	for b.Loop() {
		r, err := reader.New(src, int64(len(data)), opts)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
