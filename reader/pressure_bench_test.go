package reader_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// BenchmarkGetPressure looks up present keys in random order in the
// default (version 4) snappy table through caches of twice (the table
// fits) and of 1/4 to 1/32 of its decoded data blocks: in the latter most
// Gets miss the cache and decode a block, the case of data many times the
// cache. It reports the cache's hit rate.
func BenchmarkGetPressure(b *testing.B) {
	path := benchTable(b, benchKind{c: format.SnappyCompression, v4: true})
	for _, share := range []int{0, 4, 32} {
		name := fmt.Sprintf("cache=1/%d", share)
		if share == 0 {
			name = "cache=2x"
		}
		b.Run(name, func(b *testing.B) {
			probe, err := reader.Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			decoded := int64(probe.Properties().RawKeyBytes + probe.Properties().RawValueBytes)
			probe.Close()
			capacity := 2 * decoded
			if share > 0 {
				capacity = decoded / int64(share)
			}
			opts := cacheOpts(b, capacity)
			r, err := reader.Open(path, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			keys := benchKeys(true)
			for i := range keys { // warm: the cache full, the filter held
				r.Get(keys[i])
			}
			st0 := opts.Cache.Stats()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := r.Get(keys[i%len(keys)])
				if err != nil || len(v) != benchValueLen {
					b.Fatalf("Get: %d bytes, %v", len(v), err)
				}
			}
			b.StopTimer()
			st := opts.Cache.Stats()
			if n := st.Hits - st0.Hits + st.Misses - st0.Misses; n > 0 {
				b.ReportMetric(float64(st.Hits-st0.Hits)/float64(n), "hitrate")
			}
		})
	}
}

// BenchmarkScanWarm scans the default (version 4) snappy table with
// every data block already decoded in a cache that holds them all: the
// cost of a step of a warm scan, per entry. Under fill=scan a first scan
// decoded the blocks, and they lie in the cache's memory in table order;
// under fill=gets point lookups of every key, in random order, decoded
// them, as an engine's lookups leave a cache, and they lie scattered.
func BenchmarkScanWarm(b *testing.B) {
	for _, fill := range []string{"scan", "gets"} {
		b.Run("fill="+fill, func(b *testing.B) { scanWarm(b, fill == "gets") })
	}
}

func scanWarm(b *testing.B, byGets bool) {
	path := benchTable(b, benchKind{c: format.SnappyCompression, v4: true})
	opts := cacheOpts(b, 1<<30)
	r, err := reader.Open(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if byGets {
		var key []byte
		for _, n := range rand.New(rand.NewPCG(3, 4)).Perm(benchEntries) {
			key = benchKey(key, 2*uint64(n))
			if _, err := r.Get(key); err != nil {
				b.Fatal(err)
			}
		}
	}
	it := r.NewIterator()
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() { // decode every block into the cache
	}
	if !it.First() {
		b.Fatal(it.Err())
	}
	st0 := opts.Cache.Stats()
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
	b.StopTimer()
	if st := opts.Cache.Stats(); st.Misses != st0.Misses || st.Hits-st0.Hits < int64(b.N)/100 {
		b.Fatalf("the scan missed the cache %d times and hit it %d times in %d steps: blocks were decoded again", st.Misses-st0.Misses, st.Hits-st0.Hits, b.N)
	}
}
