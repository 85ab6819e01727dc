package diskcache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpen opens a directory of 10,000 chunk files (small ones: the
// cost is per file, a listing entry and an lstat, not per byte).
func BenchmarkOpen(b *testing.B) {
	const files = 10000
	dir := b.TempDir()
	data := object(1, 100)
	for i := range files {
		r := &objReader{key: "k", size: 100, pref: fmt.Sprintf("%sobject%d-", chunkPref, i)}
		if err := os.WriteFile(filepath.Join(dir, r.name(0)), encodeChunk("k", 100, 0, data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		c, err := Open(dir, &Options{Capacity: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		if st := c.Stats(); st.Chunks != files {
			b.Fatalf("%d chunks", st.Chunks)
		}
		c.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/files, "ns/file")
}
