package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
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

// Reading the newest version of a key at or below a timestamp, in a table
// whose keys are a user key followed by its version's timestamp,
// big-endian, so that a key's versions sort oldest first. With
// format.Suffix(8), the user key is the prefix: the filter holds user
// keys, and SeekPrefixLT rules out an absent one without reading a data
// block.
func ExampleIterator_SeekPrefixLT() {
	key := func(user string, ts uint64) []byte {
		return binary.BigEndian.AppendUint64([]byte(user), ts)
	}
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{Splitter: format.Suffix(8)})
	for _, e := range []struct {
		user  string
		ts    uint64
		value string
	}{
		{"apple", 10, "green"}, {"apple", 20, "red"}, {"apple", 30, "brown"},
		{"banana", 15, "yellow"},
	} {
		if err := b.Add(key(e.user, e.ts), []byte(e.value)); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		log.Fatal(err)
	}
	r, err := reader.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	it := r.NewIterator()
	defer it.Close()

	// The newest version at or below ts is the last key below
	// user + (ts+1) whose prefix is user. (For ts = math.MaxUint64, seek
	// below user followed by nine 0xff bytes instead.)
	newestAtOrBelow := func(user string, ts uint64) {
		if it.SeekPrefixLT([]byte(user), key(user, ts+1)) {
			version := binary.BigEndian.Uint64(it.Key()[len(user):])
			fmt.Printf("%s at %d: %s (version %d)\n", user, ts, it.Value(), version)
			return
		}
		if err := it.Err(); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s at %d: none\n", user, ts)
	}
	newestAtOrBelow("apple", 25)
	newestAtOrBelow("apple", 30)
	newestAtOrBelow("apple", 9)
	newestAtOrBelow("banana", 100)
	newestAtOrBelow("cherry", 100)

	// In prefix iteration mode, Prev walks to older versions and stops at
	// the user key's oldest.
	var older []string
	for ok := it.SeekPrefixLT([]byte("apple"), key("apple", 31)); ok; ok = it.Prev() {
		older = append(older, string(it.Value()))
	}
	fmt.Println(strings.Join(older, ", "))
	// Output:
	// apple at 25: red (version 20)
	// apple at 30: brown (version 30)
	// apple at 9: none
	// banana at 100: yellow (version 15)
	// cherry at 100: none
	// brown, red, green
}
