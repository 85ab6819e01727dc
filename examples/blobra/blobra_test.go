package blobra_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/examples/blobra"
	"github.com/sstkit/sstable/reader"
)

func key(i int) []byte { return fmt.Appendf(nil, "key%012d", i) }

// value returns entry i's 100-byte value: pseudo-random bytes, which
// snappy cannot shrink, so the table is about 12 MB.
func value(i int) []byte {
	v := make([]byte, 100)
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	for j := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[j] = byte(x)
	}
	return v
}

// upload builds a table of n entries (even keys 0, 2, 4, ...) and writes
// it to bucket as name.
func upload(t *testing.T, bucket *blob.Bucket, name string, n int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.sst")
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := b.Add(key(2*i), value(2*i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(context.Background(), name, data, nil); err != nil {
		t.Fatal(err)
	}
}

func openBucket(t *testing.T) *blob.Bucket {
	t.Helper()
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	return bucket
}

// TestTableOverBlob opens a 100k-entry table through the fileblob driver
// and checks Gets, an absent key and a full scan, and the ReadAt calls
// each takes: one to open, one more (the data block) for a cold Get of a
// present key, none for an absent key the filter rules out, and about
// at most two per MiB for the scan.
func TestTableOverBlob(t *testing.T) {
	const n = 100_000
	ctx := context.Background()
	bucket := openBucket(t)
	upload(t, bucket, "tables/000001.sst", n)

	c, err := cache.New(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, ra, err := blobra.Open(ctx, bucket, "tables/000001.sst", &reader.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("table: %d bytes", ra.Size())
	report := func(what string, maxCalls int64) {
		t.Helper()
		t.Logf("%-28s %3d ReadAt, %9d bytes", what, ra.Calls(), ra.Bytes())
		if ra.Calls() > maxCalls {
			t.Errorf("%s: %d ReadAt calls, want at most %d", what, ra.Calls(), maxCalls)
		}
		ra.ResetCounts()
	}
	report("open", 1)

	v, err := r.Get(key(2 * 4321))
	if err != nil || !bytes.Equal(v, value(2*4321)) {
		t.Fatalf("Get(present) = %q, %v", v, err)
	}
	report("cold Get, present", 2)

	absent := 0
	for i := 0; i < 100; i++ {
		if _, err := r.Get(key(2*i*997 + 1)); errors.Is(err, reader.ErrNotFound) {
			absent++
		} else {
			t.Fatalf("Get(absent key %q) = %v, want ErrNotFound", key(2*i*997+1), err)
		}
	}
	report("100 Gets, absent", 5) // a filter false positive reads a block
	if _, err := r.Get(key(2*n + 2)); !errors.Is(err, reader.ErrNotFound) {
		t.Fatalf("Get(beyond the last key) = %v, want ErrNotFound", err)
	}

	for i := 0; i < n; i += 997 {
		v, err := r.Get(key(2 * i))
		if err != nil || !bytes.Equal(v, value(2*i)) {
			t.Fatalf("Get(%q) = %q, %v", key(2*i), v, err)
		}
	}
	report("101 Gets, present", 101)

	it := r.NewIterator()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), key(2*i)) || !bytes.Equal(it.Value(), value(2*i)) {
			t.Fatalf("scan entry %d: %q=%q", i, it.Key(), it.Value())
		}
		i++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("scan saw %d entries, want %d", i, n)
	}
	report("full scan", 2*((ra.Size()+1<<20-1)>>20))
}

// TestReadAt checks the adapter's io.ReaderAt contract at the blob's
// ends, and that a missing blob is an error, not a panic.
func TestReadAt(t *testing.T) {
	ctx := context.Background()
	bucket := openBucket(t)
	if err := bucket.WriteAll(ctx, "b", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	ra := blobra.NewReaderAt(ctx, bucket, "b", 10)
	p := make([]byte, 4)
	if n, err := ra.ReadAt(p, 3); n != 4 || err != nil || string(p) != "3456" {
		t.Errorf("ReadAt(4, 3) = %d, %v, %q", n, err, p)
	}
	if n, err := ra.ReadAt(p, 8); n != 2 || err != io.EOF || string(p[:2]) != "89" {
		t.Errorf("ReadAt(4, 8) = %d, %v, %q; want 2, EOF", n, err, p[:n])
	}
	if n, err := ra.ReadAt(p, 10); n != 0 || err != io.EOF {
		t.Errorf("ReadAt(4, 10) = %d, %v; want 0, EOF", n, err)
	}
	if _, err := ra.ReadAt(p, -1); err == nil {
		t.Error("ReadAt at -1: no error")
	}
	if _, _, err := blobra.Open(ctx, bucket, "missing", nil); err == nil {
		t.Error("Open of a missing blob: no error")
	}
	// A blob shorter than the size given: an error, not a short success.
	short := blobra.NewReaderAt(ctx, bucket, "b", 20)
	if _, err := short.ReadAt(make([]byte, 8), 6); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadAt past the real end = %v, want io.ErrUnexpectedEOF", err)
	}
}
