package codec_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sstkit/sstable/internal/codec"
)

// BenchmarkHashIndexWriter records 1M entries as a builder does (34 to a
// 4 KiB block, hashes random), then encodes the Version4 section,
// reporting the cost per entry of Add and of Append. The section buffer
// is reused, so fresh memory's page faults do not count.
func BenchmarkHashIndexWriter(b *testing.B) {
	const n, perBlock = 1 << 20, 34
	hashes := make([]uint64, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range hashes {
		hashes[i] = r.Uint64()
	}
	blockOffsets := make([]uint64, n/perBlock+2)
	for i := range blockOffsets {
		blockOffsets[i] = uint64(i) * 4096
	}
	var dst []byte
	var adding time.Duration
	for b.Loop() {
		w := codec.HashIndexWriter{FirstKeyShared: true}
		t0 := time.Now()
		for i, h := range hashes {
			w.Add(h, uint32(i/perBlock), uint32(i%perBlock*120))
		}
		adding += time.Since(t0)
		dst = w.Append(dst[:0], 0, blockOffsets)
	}
	total := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	add := float64(adding.Nanoseconds()) / float64(b.N) / n
	b.ReportMetric(add, "add-ns/entry")
	b.ReportMetric(total-add, "append-ns/entry")
}
