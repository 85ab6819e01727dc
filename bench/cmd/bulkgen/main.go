// Command bulkgen writes unsorted input for "sst build": N lines of
// "key<TAB>value", each key 16 hexadecimal digits and each value 100
// printable bytes, keys distinct and in pseudo-random order (key i is
// i*0x9E3779B97F4A7C15 mod 2^64, a bijection, so no key repeats).
//
//	go run ./cmd/bulkgen -n 20000000 -o /tmp/bulk20m.txt
//
// 20M lines take 2.36 GB (118 bytes each).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
)

func main() {
	n := flag.Int64("n", 1000000, "number of lines")
	out := flag.String("o", "", "output file (default: standard output)")
	flag.Parse()
	f := os.Stdout
	if *out != "" {
		var err error
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "bulkgen:", err)
			os.Exit(1)
		}
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	line := make([]byte, 0, 128)
	var kb [8]byte
	for i := range uint64(*n) {
		k := i * 0x9E3779B97F4A7C15
		binary.BigEndian.PutUint64(kb[:], k)
		line = hex.AppendEncode(line[:0], kb[:])
		line = append(line, '\t')
		x := k ^ 0x2545F4914F6CDD1D
		for j := 0; j < 100; j++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			line = append(line, letters[x%uint64(len(letters))])
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			fmt.Fprintln(os.Stderr, "bulkgen:", err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "bulkgen:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "bulkgen:", err)
		os.Exit(1)
	}
}
