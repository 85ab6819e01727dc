package sstbeam

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// TestShardsCoverTables plans the reading of tables in many shards and
// reads every shard: each entry must come out exactly once.
func TestShardsCoverTables(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewWriter(filepath.Join(dir, "t"), &bulk.Options{TargetTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000
	for i := range n {
		// Skewed keys: interpolated shards are uneven, never wrong.
		k := fmt.Appendf(nil, "%d-%07d", i%3, i*i%1000003)
		if err := w.Add(k, bytes.Repeat([]byte{'v'}, 40)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	// The manifest's paths are relative to its directory, the bucket's
	// "t/", as WriteTables writes them.
	ctx := context.Background()
	url := "file://" + dir
	plan := &planFn{BucketURL: url, Prefix: "t/", ShardSize: 32 << 10}
	var shards []readShard
	m, err := bulk.ReadManifest(filepath.Join(dir, "t", bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.ProcessElement(ctx, nil, func(s readShard) { shards = append(shards, s) }); err != nil {
		t.Fatal(err)
	}
	if len(shards) < 3*len(m.Tables) {
		t.Fatalf("%d shards for %d tables", len(shards), len(m.Tables))
	}
	rd := &readFn{BucketURL: url}
	if err := rd.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer rd.Teardown()
	seen := map[string]int{}
	for _, sh := range shards {
		if err := rd.ProcessElement(ctx, sh, func(k, v []byte) { seen[string(k)]++ }); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != n {
		t.Fatalf("read %d distinct keys, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("key %q read %d times", k, c)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	for _, c := range []struct {
		lo, hi string
		n      int
	}{
		{"a", "b", 4}, {"aaaa", "aaab", 10}, {"", "\xff\xff", 5}, {"k", "k", 3}, {"abc", "abd\x00\x01", 100}, {"x", "y", 1},
	} {
		keys := splitKeys([]byte(c.lo), []byte(c.hi), c.n)
		if len(keys) > c.n-1 && c.n > 0 {
			t.Errorf("splitKeys(%q, %q, %d): %d keys", c.lo, c.hi, c.n, len(keys))
		}
		prev := []byte(c.lo)
		for _, k := range keys {
			if bytes.Compare(k, prev) <= 0 || bytes.Compare(k, []byte(c.hi)) > 0 {
				t.Errorf("splitKeys(%q, %q, %d) = %q: not increasing within (lo, hi]", c.lo, c.hi, c.n, keys)
				break
			}
			prev = k
		}
	}
}
