// Command objstore counts the ReadAt calls and bytes a table reader makes
// over an io.ReaderAt, as it would against object storage (S3, GCS,
// Azure), where every ReadAt is a ranged GET: ours in each layout (the
// builder's defaults, which partition the index and filter once they do
// not fit the 256 KiB tail the reader reads on open; the same with a
// hash index; version 1 and version 3 forced), beside Pebble v1.1.5
// (reading through an objstorage.Readable with the read-ahead of its
// remote objects, ported in readahead_pebble.go) and Pebble v2.1.7
// (TableFormatPebblev7, through objstorageprovider.NewRemoteReadable, its
// own remote read handle with read-ahead), each with a one-level and a
// two-level index.
//
// Tables: n entries of 16-byte random keys and 100-byte values (half
// random, half text), 4 KiB blocks, snappy, 10 bits/key bloom filter,
// written to a temporary directory. Every row but the 1000-lookup rows
// starts from a new reader and a new, empty 256 MiB block cache; the
// first-Get rows show the most over 5 random keys, each on a new reader;
// the 1000-lookup rows run on one reader, present keys first, then
// absent; the last row runs 16 goroutines of 20 lookups each on one new
// reader. With -latency, every ReadAt sleeps that long first, as a
// request to object storage takes, and every cell shows the wall time
// too. The command ends with the read caps checked for ours, and ours
// against Pebble v2's reads on every row.
//
//	cd bench && go run ./cmd/objstore [-n 10000,200000,1000000,5000000] [-latency 20ms]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sstkit/sstable/bench/internal/scratchdir"
)

// The data set's value length, the lookups of the 1000-Gets rows (and
// of the diskcache and span rows), and every reader's block cache.
const (
	valueLen   = 100
	lookups    = 1000
	cacheBytes = 256 << 20
)

// latency is the -latency flag: how long every ReadAt sleeps.
var latency time.Duration

func main() {
	sizes := flag.String("n", "10000,200000,1000000,5000000", "comma-separated entry counts")
	flag.DurationVar(&latency, "latency", 0, "sleep this long in every ReadAt (as a request to object storage) and report wall times")
	disk := flag.Bool("diskcache", true, "also read the default table through a diskcache.Cache: cold, warm on disk after a restart, warm in memory (diskcache.go)")
	flag.IntVar(&spanCount, "spans", 1000, "range deletions in the span table measured after each size (0: none)")
	flag.Parse()
	dir, removeDir, err := scratchdir.Make("", "objstore-*")
	if err != nil {
		fail(err)
	}
	defer removeDir() // and on SIGINT, SIGTERM or fail
	fmt.Println("ReadAt calls / bytes asked for, per reader (16-byte keys, 100-byte values, 4 KiB blocks, snappy, 10 bits/key, 256 MiB cache).")
	if latency > 0 {
		fmt.Printf("Every ReadAt sleeps %v; wall times follow the counts.\n", latency)
	}
	fmt.Println("ours: reader.New with the default TailSize (256 KiB) and read-ahead (64 KiB, 256 KiB, 1 MiB).")
	fmt.Println("ours default: the builder's defaults (format version 4, partitioned once the index and filter do not fit the 256 KiB tail); hash index v2: the same with HashIndex (versions 2 and 3); v1 and v3 forced by FormatVersion 1 with PartitionThreshold -1 and 1.")
	fmt.Println("pebble: v1.1.5 through an objstorage.Readable with the read-ahead of its remote objects (64 KiB to 1 MiB), ported.")
	fmt.Println("pebble2: v2.1.7, TableFormatPebblev7, through objstorageprovider.NewRemoteReadable (its remote read handle and read-ahead).")
	fmt.Printf("first Get rows: the most over %d random keys, each on a new reader. %s: one new reader, every goroutine with its own iterator where the implementation needs one.\n", coldKeys, concurrentRow)
	var checks []string
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("bad -n %q", s))
		}
		results := make([]*result, len(impls))
		fileSizes := make([]int64, len(impls))
		var diskRows []diskRow
		for i, im := range impls {
			path := filepath.Join(dir, fmt.Sprintf("t%d-%d.sst", i, n))
			if err := im.build(path, n); err != nil {
				fail(fmt.Errorf("%s: build: %w", im.name, err))
			}
			if results[i], fileSizes[i], err = measure(im, path, n); err != nil {
				fail(fmt.Errorf("%s, %d entries: %w", im.name, n, err))
			}
			if i == 0 && *disk {
				if diskRows, err = measureDisk(path, n); err != nil {
					fail(fmt.Errorf("%s through diskcache, %d entries: %w", im.name, n, err))
				}
			}
			os.Remove(path)
		}
		printTable(os.Stdout, n, fileSizes, results)
		if diskRows != nil {
			printDisk(os.Stdout, n, diskRows)
		}
		checks = append(checks, check(n, results)...)
		if spanCount > 0 {
			path := filepath.Join(dir, fmt.Sprintf("spans-%d.sst", n))
			if err := buildSpans(path, n, spanCount); err != nil {
				fail(fmt.Errorf("span table: %w", err))
			}
			sr, err := measureSpans(path, n)
			if err != nil {
				fail(fmt.Errorf("span table, %d entries: %w", n, err))
			}
			os.Remove(path)
			fmt.Println(sr)
			ok := "ok"
			if sr.first.calls != 0 && sr.blockSize+64 <= 256<<10 {
				ok = "NOT MET"
			}
			checks = append(checks, fmt.Sprintf("%s: %d entries, span table: the first SpanAt makes %d reads after open (0 when the span block is in the 256 KiB tail)", ok, n, sr.first.calls))
		}
	}
	fmt.Println("\nChecks (ours against the read caps, and against Pebble v2's reads on every row but the concurrent one):")
	good, bad := 0, 0
	for _, c := range checks {
		switch {
		case strings.HasPrefix(c, "NOT MET"):
			bad++
		case strings.HasPrefix(c, "ok"):
			good++
		}
		fmt.Println("- " + c)
	}
	fmt.Printf("%d of %d checks hold.\n", good, good+bad)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "objstore:", err)
	scratchdir.Exit(1)
}
