package reader_test

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// The GOROOT/src benchmark: every regular file of Go's source tree as an
// entry (key: slash-separated path, value: contents), as `sst build`
// makes it, in snappy and zstd tables side by side.
var (
	gosrcOnce   sync.Once
	gosrcKeys   []string
	gosrcValues [][]byte
	gosrcErr    error
)

func loadGoSrc(b *testing.B) {
	gosrcOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			gosrcErr = err
			return
		}
		root := filepath.Join(strings.TrimSpace(string(out)), "src")
		gosrcErr = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			gosrcKeys = append(gosrcKeys, filepath.ToSlash(rel))
			return nil
		})
		slices.Sort(gosrcKeys) // WalkDir's lexical order is per directory
		for _, k := range gosrcKeys {
			v, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(k)))
			if err != nil {
				gosrcErr = err
				return
			}
			gosrcValues = append(gosrcValues, v)
		}
	})
	if gosrcErr != nil {
		b.Fatal(gosrcErr)
	}
	if len(gosrcKeys) < 1000 {
		b.Skipf("GOROOT/src has %d files", len(gosrcKeys))
	}
}

func buildGoSrc(b *testing.B, path string, c format.Compression) {
	bld, err := builder.Create(path, &builder.Options{Compression: c})
	if err != nil {
		b.Fatal(err)
	}
	for i, k := range gosrcKeys {
		if err := bld.Add([]byte(k), gosrcValues[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := bld.Finish(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGoSrc builds a table of GOROOT/src with snappy and with zstd
// (default level; 4 KiB blocks, Bloom filter) and measures, the two
// compressions side by side under each measurement so that they run close
// in time on a noisy machine: build (one table per op; the table's size is
// reported as table-MB), Get of random files with the default block cache
// (warm after the first pass) and with no cache (every Get decodes its
// blocks), and a full scan with no cache (every block decoded once per op).
//
//	go test -run '^$' -bench GoSrc -count 5 ./reader
func BenchmarkGoSrc(b *testing.B) {
	loadGoSrc(b)
	dir := b.TempDir()
	var raw int64
	for i, k := range gosrcKeys {
		raw += int64(len(k) + len(gosrcValues[i]))
	}
	comps := []format.Compression{format.SnappyCompression, format.ZstdCompression}
	path := func(c format.Compression) string { return filepath.Join(dir, c.String()+".sst") }
	b.Run("build", func(b *testing.B) {
		for _, c := range comps {
			b.Run(c.String(), func(b *testing.B) {
				b.SetBytes(raw)
				for range b.N {
					buildGoSrc(b, path(c), c)
				}
				st, err := os.Stat(path(c))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.Size())/1e6, "table-MB")
			})
		}
	})
	for _, c := range comps {
		if _, err := os.Stat(path(c)); err != nil {
			buildGoSrc(b, path(c), c)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	order := make([]int, 4096)
	for i := range order {
		order[i] = rng.IntN(len(gosrcKeys))
	}
	for _, cache := range []struct {
		name string
		opts *reader.Options
	}{{"get-cached", nil}, {"get-nocache", cacheOpts(b, 0)}} {
		b.Run(cache.name, func(b *testing.B) {
			for _, c := range comps {
				b.Run(c.String(), func(b *testing.B) {
					r, err := reader.Open(path(c), cache.opts)
					if err != nil {
						b.Fatal(err)
					}
					defer r.Close()
					var buf []byte
					b.ResetTimer()
					for i := range b.N {
						j := order[i%len(order)]
						buf, err = r.GetAppend(buf[:0], []byte(gosrcKeys[j]))
						if err != nil || len(buf) != len(gosrcValues[j]) {
							b.Fatalf("Get(%q): %d bytes, %v", gosrcKeys[j], len(buf), err)
						}
					}
				})
			}
		})
	}
	b.Run("scan-nocache", func(b *testing.B) {
		for _, c := range comps {
			b.Run(c.String(), func(b *testing.B) {
				r, err := reader.Open(path(c), cacheOpts(b, 0))
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				b.SetBytes(raw)
				b.ResetTimer()
				for range b.N {
					it := r.NewIterator()
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						n++
					}
					if err := it.Close(); err != nil || n != len(gosrcKeys) {
						b.Fatalf("scan: %d entries, %v", n, err)
					}
				}
			})
		}
	})
}
