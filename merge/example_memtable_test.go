package merge_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// This example reads an engine's memtable and two tables as one view,
// then compacts them. The memtable is a sorted slice of entries and a
// list of range deletions, made a Level by merge.Memtable. Values
// starting with "DEL" are point deletions; every span is a range
// deletion.
func ExampleMemtable() {
	dir, _ := os.MkdirTemp("", "merge-example")
	defer os.RemoveAll(dir)
	write := func(name string, kvs ...string) *reader.Reader {
		path := filepath.Join(dir, name)
		b, _ := builder.Create(path, nil)
		for i := 0; i+1 < len(kvs); i += 2 {
			b.Add([]byte(kvs[i]), []byte(kvs[i+1]))
		}
		b.Finish()
		r, err := reader.Open(path, nil)
		if err != nil {
			panic(err)
		}
		return r
	}
	older := write("1.sst", "apple", "red", "banana", "yellow", "cherry", "red", "date", "brown")
	defer older.Close()
	newer := write("2.sst", "banana", "green", "elder", "black")
	defer newer.Close()

	// The memtable: its keys sorted, each key's newest write.
	keys := [][]byte{[]byte("apple"), []byte("fig")}
	vals := [][]byte{[]byte("DEL"), []byte("purple")}
	rangeDels := []reader.Span{{Start: []byte("c"), End: []byte("d")}} // deletes cherry
	mem := &merge.Memtable{
		NewCursor: func() merge.Cursor { return merge.SliceCursor(keys, vals) },
		Spans:     func() []reader.Span { return rangeDels },
	}

	levels := []merge.Level{mem, merge.Tables(newer), merge.Tables(older)}
	opts := &merge.Options{IsDeletion: func(v []byte) bool { return bytes.HasPrefix(v, []byte("DEL")) }}

	it := merge.NewIterator(levels, opts)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
	if _, err := merge.Get(levels, []byte("cherry"), opts); err == reader.ErrNotFound {
		fmt.Println("cherry: deleted")
	}

	tables, err := merge.Compact(levels, &merge.CompactOptions{Options: *opts, Dir: filepath.Join(dir, "out"), Bottom: true})
	if err != nil {
		panic(err)
	}
	for _, t := range tables {
		fmt.Printf("%s: %d entries, %s to %s\n", filepath.Base(t.Path), t.Entries, t.Smallest, t.Largest)
	}
	// Output:
	// banana=green
	// date=brown
	// elder=black
	// fig=purple
	// cherry: deleted
	// 000001.sst: 4 entries, banana to fig
}
