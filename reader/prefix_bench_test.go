package reader_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Versioned benchmark tables: benchPrefixes user keys "user:%012d" of
// even numbers (odd ones are absent), each with 1 to 4 versions as an
// 8-byte inverted version suffix (format.Suffix(8)), 100-byte values.
const benchPrefixes = 100_000

// versionedKey appends user key n with version v, inverted so that newer
// versions sort first.
func versionedKey(dst []byte, n, v uint64) []byte {
	dst = fmt.Appendf(dst[:0], "user:%012d", n)
	return binary.BigEndian.AppendUint64(dst, ^v)
}

func versionedTable(b *testing.B, c format.Compression, hash bool) string {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	kind := benchKind{c: c, hash: hash}
	name := fmt.Sprintf("versioned-%v-%v", c, hash)
	if path, ok := versionedTables[kind]; ok {
		return path
	}
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "sstable-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
	}
	path := filepath.Join(benchDir, name+".sst")
	bld, err := builder.Create(path, &builder.Options{Compression: c, HashIndex: hash, Splitter: format.Suffix(8)})
	if err != nil {
		b.Fatal(err)
	}
	var key []byte
	for i := range benchPrefixes {
		versions := 1 + uint64(i*7919%4)
		for v := versions; v >= 1; v-- {
			key = versionedKey(key, 2*uint64(i), v)
			if err := bld.Add(key, benchValue(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bld.Finish(); err != nil {
		b.Fatal(err)
	}
	versionedTables[kind] = path
	return path
}

var versionedTables = map[benchKind]string{}

// BenchmarkPrefix measures, on one versioned table per compression and
// with and without a hash index, SeekPrefixGE against the calls issue 11
// compares it with: on an absent prefix against MayContain of the same
// key, on a present prefix against Get of the same key (each prefix's
// newest version). Run all of them in one go test -bench run and compare
// ratios within a table.
func BenchmarkPrefix(b *testing.B) {
	for _, hash := range []bool{false, true} {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			b.Run(fmt.Sprintf("hash=%v/%v", hash, c), func(b *testing.B) {
				r, err := reader.Open(versionedTable(b, c, hash), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				benchPrefix(b, r)
			})
		}
	}
}

func benchPrefix(b *testing.B, r *reader.Reader) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 4096
	present, absent := make([][]byte, n), make([][]byte, n)
	for i := range n {
		u := 2 * uint64(rng.IntN(benchPrefixes))
		versions := 1 + uint64((u/2)*7919%4)
		present[i] = versionedKey(nil, u, versions) // the newest version
		absent[i] = versionedKey(nil, u+1, 1)
	}
	it := r.NewIterator()
	defer it.Close()
	buf := make([]byte, 0, 256)
	b.Run("absent/MayContain", func(b *testing.B) {
		b.ReportAllocs()
		fp := 0
		for i := 0; b.Loop(); i++ {
			if r.MayContain(absent[i%n]) {
				fp++
			}
		}
		b.ReportMetric(float64(fp)/float64(b.N), "fp/op")
	})
	b.Run("absent/SeekPrefixGE", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			k := absent[i%n]
			if it.SeekPrefixGE(k[:len(k)-8], k) {
				b.Fatal("SeekPrefixGE found an absent prefix")
			}
		}
	})
	b.Run("present/Get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := r.GetAppend(buf[:0], present[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("present/Has", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if ok, err := r.Has(present[i%n]); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("present/SeekPrefixGE", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			k := present[i%n]
			if !it.SeekPrefixGE(k[:len(k)-8], k) {
				b.Fatal("SeekPrefixGE missed", it.Err())
			}
		}
	})
	b.Run("present/SeekLT", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if !it.SeekLT(present[i%n]) && it.Err() != nil {
				b.Fatal(it.Err())
			}
		}
	})
}

// BenchmarkBoundedNext scans with an upper bound, restarting at the lower
// bound.
func BenchmarkBoundedNext(b *testing.B) {
	benchReaders(b, func(b *testing.B, r *reader.Reader) {
		lo, hi := benchKey(nil, uint64(benchEntries/4)), benchKey(nil, uint64(benchEntries))
		it := r.NewIter(&reader.IterOptions{LowerBound: lo, UpperBound: hi})
		defer it.Close()
		if !it.First() {
			b.Fatal(it.Err())
		}
		b.ReportAllocs()
		for b.Loop() {
			if !it.Next() {
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
				it.First()
			}
		}
	})
}
