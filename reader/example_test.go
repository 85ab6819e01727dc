package reader_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "sstable-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fruit.sst")

	// Build a small table.
	b, err := builder.Create(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, kv := range [][2]string{{"apple", "red"}, {"banana", "yellow"}, {"cherry", "dark red"}} {
		if err := b.Add([]byte(kv[0]), []byte(kv[1])); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		log.Fatal(err)
	}

	// Open it, memory-mapped, and look things up.
	r, err := reader.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	v, err := r.Get([]byte("banana"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("banana: %s\n", v)
	if _, err := r.Get([]byte("durian")); errors.Is(err, reader.ErrNotFound) {
		fmt.Println("durian: not found")
	}
	fmt.Println("may contain durian:", r.MayContain([]byte("durian")))

	// Scan in key order, then from the first key >= "b".
	it := r.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	if it.SeekGE([]byte("b")) {
		fmt.Printf("first key >= b: %s\n", it.Key())
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("entries:", r.Properties().NumEntries)
	// Output:
	// banana: yellow
	// durian: not found
	// may contain durian: false
	// apple=red
	// banana=yellow
	// cherry=dark red
	// first key >= b: banana
	// entries: 3
}
