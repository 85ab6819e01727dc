package builder_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstkit/sstable/builder"
)

func ExampleCreate() {
	dir, err := os.MkdirTemp("", "sstable-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fruit.sst")

	// nil options: 4 KiB blocks, snappy compression, a 10 bits/key Bloom filter.
	b, err := builder.Create(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, kv := range [][2]string{{"apple", "red"}, {"banana", "yellow"}, {"cherry", "dark red"}} {
		if err := b.Add([]byte(kv[0]), []byte(kv[1])); err != nil {
			b.Abort()
			log.Fatal(err)
		}
	}
	// Keys must increase; a key out of order is refused and the builder
	// carries on. A builder from Create names its table in its errors.
	if err := b.Add([]byte("avocado"), []byte("green")); errors.Is(err, builder.ErrKeyOrder) {
		fmt.Println("refused:", strings.Replace(err.Error(), dir, "DIR", 1))
	}
	// Finish writes the filter, index, properties and footer, fsyncs, and
	// renames the temporary file into place.
	if err := b.Finish(); err != nil {
		log.Fatal(err)
	}

	p := b.Properties()
	fmt.Printf("%d entries in %d data block, %s compression, keys %q to %q\n",
		p.NumEntries, p.NumDataBlocks, p.Compression, p.SmallestKey, p.LargestKey)
	entries, err := os.ReadDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println("file:", e.Name())
	}
	// Output:
	// refused: sstable: DIR/fruit.sst: keys not in strictly increasing order: key "avocado" after "cherry"
	// 3 entries in 1 data block, snappy compression, keys "apple" to "cherry"
	// file: fruit.sst
}
