package s3tables_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/diskcache"
	s3tables "github.com/sstkit/sstable/examples/s3"
	"github.com/sstkit/sstable/reader"
)

// TestS3DiskCacheSurvivesRestart reads a 200k-entry table (9 MB) from
// the gateway through a local disk cache, cold: 1000 random Gets through
// a cache in one directory, a full scan through a cache in another. Then
// new Caches on the same directories (a restart) and new readers with
// empty memory caches, with the gateway stopped, make the same Gets and
// the full scan with 0 requests to S3, every value checked.
func TestS3DiskCacheSurvivesRestart(t *testing.T) {
	g := newGateway(t)
	bucket := g.bucket(t)
	ctx := context.Background()
	const n = 200_000
	path := buildTable(t, t.TempDir(), n, &builder.Options{})
	if err := s3tables.Upload(ctx, bucket, "cached.sst", path); err != nil {
		t.Fatal(err)
	}
	size, etag, err := s3tables.Stat(ctx, bucket, "cached.sst")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != size {
		t.Fatalf("Stat: %d bytes, the file has %d", size, st.Size())
	}
	getsDir, scanDir := filepath.Join(t.TempDir(), "gets"), filepath.Join(t.TempDir(), "scan")
	rng := rand.New(rand.NewPCG(30, 30))
	keys := make([]int, 1000)
	for i := range keys {
		keys[i] = rng.IntN(n)
	}
	// run opens the table through a Cache on dir, with a new memory
	// cache, makes the Gets or a full scan, and returns the requests to
	// S3, counting reader.New's, and the Cache's Stats.
	run := func(name, dir string, scan bool) (requests int64, st diskcache.Stats) {
		t.Helper()
		dc, err := diskcache.Open(dir, &diskcache.Options{Capacity: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer dc.Close()
		mem, err := cache.New(8 << 20)
		if err != nil {
			t.Fatal(err)
		}
		defer mem.Close()
		r, ra, err := s3tables.OpenCached(ctx, bucket, "cached.sst", size, etag, dc, &reader.Options{Cache: mem})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer r.Close()
		if scan {
			it := r.NewIterator()
			i := 0
			for ok := it.First(); ok; ok = it.Next() {
				if !bytes.Equal(it.Key(), key(i)) || !bytes.Equal(it.Value(), value(i)) {
					t.Fatalf("%s: scan entry %d: %x", name, i, it.Key())
				}
				i++
			}
			if err := it.Close(); err != nil || i != n {
				t.Fatalf("%s: scan: %d of %d entries, %v", name, i, n, err)
			}
			return ra.Calls(), dc.Stats()
		}
		for _, i := range keys {
			if v, err := r.Get(key(i)); err != nil || !bytes.Equal(v, value(i)) {
				t.Fatalf("%s: Get(key %d) = %q, %v", name, i, v, err)
			}
		}
		if _, err := r.Get(absent(7)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("%s: Get(absent) = %v", name, err)
		}
		return ra.Calls(), dc.Stats()
	}
	t.Logf("table: %d entries, %d bytes", n, size)
	for _, scan := range []bool{false, true} {
		what, dir := "open + 1000 Gets", getsDir
		if scan {
			what, dir = "open + full scan", scanDir
		}
		cold, st := run("cold "+what, dir, scan)
		t.Logf("cold, %s: %d requests to S3; %+v", what, cold, st)
		if cold == 0 || st.SourceReads != cold {
			t.Fatalf("cold, %s: %d requests, the cache counted %d", what, cold, st.SourceReads)
		}
	}
	g.stop() // nothing below may need S3
	for _, scan := range []bool{false, true} {
		what, dir := "open + the same 1000 Gets", getsDir
		if scan {
			what, dir = "open + full scan", scanDir
		}
		warm, st := run("after a restart, "+what, dir, scan)
		t.Logf("after a restart, gateway stopped, %s: %d requests to S3; %+v", what, warm, st)
		if warm != 0 || st.SourceReads != 0 || st.Hits == 0 {
			t.Fatalf("after a restart, %s: %d requests, want 0; %+v", what, warm, st)
		}
	}
}
