package reader_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestNewBadArguments checks that New reports a negative size or a nil
// source as a bad argument, not as a damaged table (format.ErrCorrupt),
// and without a panic.
func TestNewBadArguments(t *testing.T) {
	data, _ := build(t, numbered(10, func(int) string { return "v" }), nil)
	for _, tc := range []struct {
		name string
		src  *bytes.Reader
		size int64
		want string
	}{
		{"size -1", bytes.NewReader(data), -1, "negative size -1"},
		{"nil source", nil, int64(len(data)), "nil source"},
	} {
		var r *reader.Reader
		var err error
		if tc.src == nil {
			r, err = reader.New(nil, tc.size, nil)
		} else {
			r, err = reader.New(tc.src, tc.size, nil)
		}
		if r != nil || err == nil {
			t.Fatalf("%s: New = %v, %v; want an error", tc.name, r, err)
		}
		if errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New: %v; want an error mentioning %q, not ErrCorrupt", tc.name, err, tc.want)
		}
	}
	// A size of 0 to 63 bytes is still a file too small to be a table.
	if _, err := reader.New(bytes.NewReader(nil), 0, nil); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("New of 0 bytes: %v; want ErrCorrupt", err)
	}
}

// TestCacheCountsReadersOnce checks that a reader, which keeps its
// sections and its data blocks in two Tables of the cache (three with
// partitions), counts as one user in the error Cache.Close returns while
// it is open: with one NoMmap reader open, Close said "2 tables still
// open".
func TestCacheCountsReadersOnce(t *testing.T) {
	es := numbered(2000, func(i int) string { return strings.Repeat("v", i%50) })
	plain, _ := build(t, es, &builder.Options{BlockSize: 256})
	parted, _ := build(t, es, &builder.Options{BlockSize: 256, PartitionThreshold: 1, PartitionSize: 512})
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		open func(c *cache.Cache, data []byte) (*reader.Reader, error)
	}{
		{"NoMmap", plain, func(c *cache.Cache, data []byte) (*reader.Reader, error) {
			return reader.Open(writeFile(t, dir, data), &reader.Options{Cache: c, NoMmap: true})
		}},
		{"mapped", plain, func(c *cache.Cache, data []byte) (*reader.Reader, error) {
			return reader.Open(writeFile(t, dir, data), &reader.Options{Cache: c})
		}},
		{"New", plain, func(c *cache.Cache, data []byte) (*reader.Reader, error) {
			return reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Cache: c})
		}},
		{"New, partitioned", parted, func(c *cache.Cache, data []byte) (*reader.Reader, error) {
			return reader.New(bytes.NewReader(data), int64(len(data)), &reader.Options{Cache: c})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, 8<<20)
			r, err := tc.open(c, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Get([]byte(es[1234].Key)); err != nil {
				t.Fatal(err)
			}
			err = c.Close()
			if !errors.Is(err, cache.ErrInUse) || !strings.Contains(err.Error(), "1 user (table readers) still open") {
				t.Fatalf("cache Close with one reader open: %v", err)
			}
			r2, err := tc.open(c, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err == nil || !strings.Contains(err.Error(), "2 users") {
				t.Fatalf("cache Close with two readers open: %v", err)
			}
			r.Close()
			r2.Close()
			if err := c.Close(); err != nil {
				t.Fatalf("cache Close after the readers: %v", err)
			}
		})
	}
}

// TestLargeKeysReadBack checks tables whose smallest or largest key is too
// long for the properties block (format.MaxPropertiesKeyLen): the reader
// takes them from the data, so Properties has both keys whole, Verify
// passes, and the keys read back, over a ReaderAt (with a tail too small
// for the data blocks, and the default one) and mapped.
func TestLargeKeysReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	big := func(n int, first byte) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b[0] = first
		return string(b)
	}
	for _, tc := range []struct {
		name string
		es   []entry
	}{
		{"one 10 MiB key", []entry{{big(10<<20, 'k'), "v"}}},
		{"long first key", []entry{{big(5000, 'a'), "1"}, {"b", "2"}, {"c", "3"}}},
		{"long last key", []entry{{"a", "1"}, {"b", "2"}, {big(format.MaxPropertiesKeyLen+1, 'c'), "3"}}},
		{"key of the limit", []entry{{big(format.MaxPropertiesKeyLen, 'a'), "1"}, {big(70000, 'b'), ""}}},
	} {
		for _, opts := range []builder.Options{
			{FormatVersion: format.Version1},
			{Compression: format.NoCompression, HashIndex: true},
			{Compression: format.ZstdCompression, PartitionThreshold: 1, FormatVersion: format.Version1},
			{}, // version 4
			{Compression: format.ZstdCompression, PartitionThreshold: 1}, // version 4, partitioned
		} {
			data, bp := build(t, tc.es, &opts)
			var keyBytes int
			for _, e := range tc.es {
				keyBytes += len(e.Key)
			}
			// Each key once; in a partitioned table (format version 3, or
			// 4 with Partitioned) the key that ends a partition once more,
			// as its top-level key (the only partition here ends with the
			// last key).
			limit := keyBytes + 8192
			if bp.FormatVersion == format.Version3 || bp.Partitioned {
				limit += len(tc.es[len(tc.es)-1].Key)
			}
			if len(data) > limit {
				t.Errorf("%s: table of %d bytes (format version %d, partitioned %v) for %d bytes of keys", tc.name, len(data), bp.FormatVersion, bp.Partitioned, keyBytes)
			}
			check := func(t *testing.T, r *reader.Reader) {
				p := r.Properties()
				first, last := tc.es[0].Key, tc.es[len(tc.es)-1].Key
				if string(p.SmallestKey) != first || string(p.LargestKey) != last {
					t.Fatalf("Properties keys of %d and %d bytes; want %d and %d", len(p.SmallestKey), len(p.LargestKey), len(first), len(last))
				}
				if p.SmallestKeyOmitted != bp.SmallestKeyOmitted || p.LargestKeyOmitted != bp.LargestKeyOmitted {
					t.Fatalf("omitted lengths %d/%d, builder %d/%d", p.SmallestKeyOmitted, p.LargestKeyOmitted, bp.SmallestKeyOmitted, bp.LargestKeyOmitted)
				}
				if err := r.Verify(); err != nil {
					t.Fatal(err)
				}
				got, err := scan(r)
				if err != nil || len(got) != len(tc.es) || got[0] != tc.es[0] || got[len(got)-1] != tc.es[len(tc.es)-1] {
					t.Fatalf("scan: %d entries, %v", len(got), err)
				}
			}
			t.Run(tc.name, func(t *testing.T) {
				sources(t, data, nil, check)
				t.Run("small tail", func(t *testing.T) {
					r := openMem(t, data, &reader.Options{TailSize: 64})
					defer r.Close()
					check(t, r)
				})
			})
		}
	}
}

// closeCounter is an io.ReaderAt with a Close method that counts calls.
type closeCounter struct {
	*bytes.Reader
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }

// TestNewLeavesSourceOpen pins New's documentation: Close never closes
// the source, and an iterator opened before Close reads through it after
// Close, until it is closed.
func TestNewLeavesSourceOpen(t *testing.T) {
	es := numbered(3000, func(i int) string { return strings.Repeat("x", i%40) })
	data, _ := build(t, es, &builder.Options{BlockSize: 512})
	src := &closeCounter{Reader: bytes.NewReader(data)}
	r, err := reader.New(src, int64(len(data)), &reader.Options{TailSize: 64, Cache: newCache(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	it := r.NewIterator()
	if !it.First() {
		t.Fatal(it.Err())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	n := 1
	for it.Next() {
		n++
	}
	if err := it.Close(); err != nil || n != len(es) {
		t.Fatalf("iterator after Close saw %d of %d entries: %v", n, len(es), err)
	}
	if src.closes != 0 {
		t.Fatalf("the source was closed %d times", src.closes)
	}
}
