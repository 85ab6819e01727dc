package merge_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/merge"
)

// BenchmarkCompactSmall compacts two small tables (1,000 entries of 100-byte values each, a
// few range deletions) into one table in a new directory, as a store
// compacting its level 0 does: the cost is the file system's (creates,
// renames, fsyncs), not the merge. On a tmpfs the fsyncs cost nothing;
// run it on the disk the store uses.
func BenchmarkCompactSmall(b *testing.B) {
	stack := benchStack(b, 2, 1000)
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		if _, err := merge.Compact(stack, &merge.CompactOptions{Dir: filepath.Join(dir, fmt.Sprint(n))}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIterBuilderSmall is BenchmarkCompactSmall's merge written by
// hand: an iterator over the stack into one builder.Create table (its
// fsync of the file and of the directory), the spans left out.
func BenchmarkIterBuilderSmall(b *testing.B) {
	stack := benchStack(b, 2, 1000)
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		bl, err := builder.Create(filepath.Join(dir, fmt.Sprintf("%06d.sst", n)), nil)
		if err != nil {
			b.Fatal(err)
		}
		it := merge.NewIterator(stack, nil)
		for ok := it.First(); ok; ok = it.Next() {
			if err := bl.Add(it.Key(), it.Value()); err != nil {
				b.Fatal(err)
			}
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		if err := bl.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactSmallNoManifest is BenchmarkCompactSmall writing the
// table straight to a name of the caller's, without staging directory or
// manifest, as a store with a commit record of its own asks.
func BenchmarkCompactSmallNoManifest(b *testing.B) {
	stack := benchStack(b, 2, 1000)
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		name := func(int) string { return fmt.Sprintf("%06d.sst", n) }
		if _, err := merge.Compact(stack, &merge.CompactOptions{Dir: dir, NoManifest: true, TableName: name}); err != nil {
			b.Fatal(err)
		}
	}
}
