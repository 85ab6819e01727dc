package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/diskcache"
	"github.com/sstkit/sstable/reader"
)

// The disk cache rows: the builder's default table read through
// reader.New over a diskcache.Cache over the counting source, for 1000
// random present Gets (the keys of the "1000 Gets, present" row) and a
// full scan, each workload in a disk cache directory of its own:
//
//   - cold: an empty directory, a new reader (counting its open);
//   - warm on disk: after a restart, a new Cache on the same directory and
//     a new reader with an empty memory cache (counting its open);
//   - warm in memory: the same reader again.
//
// Each cell is the requests to the source and their bytes (and with
// -latency the wall time).
var diskPhases = []string{"cold (empty disk cache)", "warm on disk (after a restart)", "warm in memory (same reader)"}

// diskRow is one phase's figures: the Gets' and the scan's.
type diskRow struct{ gets, scan count }

// measureDisk returns the disk cache rows for the table of n entries at
// path.
func measureDisk(path string, n int) ([]diskRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	src := &source{r: f, latency: latency}
	dir, err := os.MkdirTemp(filepath.Dir(path), "diskcache-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rows := make([]diskRow, len(diskPhases))
	for _, scan := range []bool{false, true} {
		cdir := filepath.Join(dir, fmt.Sprint("scan-", scan))
		work := func(r *reader.Reader) error {
			if scan {
				got, err := scanAll(r)
				if err == nil && got != n {
					err = fmt.Errorf("scan: %d of %d entries", got, n)
				}
				return err
			}
			var k []byte
			for j := range lookups {
				k = key(k, int(mix(uint64(j))%uint64(n)), n)
				if _, err := r.Get(k); err != nil {
					return fmt.Errorf("lookup %d: %w", j, err)
				}
			}
			return nil
		}
		var r *reader.Reader
		var mem *cache.Cache
		var dc *diskcache.Cache
		closeAll := func() {
			if r != nil {
				r.Close()
			}
			if mem != nil {
				mem.Close()
			}
			if dc != nil {
				dc.Close()
			}
			r, mem, dc = nil, nil, nil
		}
		for p := range diskPhases {
			start := time.Now()
			if p < 2 {
				closeAll()
				if dc, err = diskcache.Open(cdir, &diskcache.Options{Capacity: max(2*size, diskcache.MinCapacity)}); err != nil {
					return nil, err
				}
				if mem, err = cache.New(cacheBytes); err != nil {
					closeAll()
					return nil, err
				}
				if r, err = reader.New(dc.ReaderAt(path, size, src), size, &reader.Options{Cache: mem}); err != nil {
					closeAll()
					return nil, err
				}
			}
			if err := work(r); err != nil {
				closeAll()
				return nil, fmt.Errorf("%s: %w", diskPhases[p], err)
			}
			reads, _ := src.take()
			c := counted(reads, time.Since(start))
			if scan {
				rows[p].scan = c
			} else {
				rows[p].gets = c
			}
		}
		closeAll()
	}
	return rows, nil
}

// scanAll scans r whole and returns the entries seen.
func scanAll(r *reader.Reader) (int, error) {
	it := r.NewIterator()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Close()
}

// printDisk prints the disk cache rows of a table of n entries.
func printDisk(w io.Writer, n int, rows []diskRow) {
	fmt.Fprintf(w, "\n%d entries, ours default through diskcache (requests / bytes to the source)\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "| disk cache\t| open + 1000 Gets, present\t| open + full scan\t|")
	for p, row := range rows {
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t|\n", diskPhases[p], row.gets, row.scan)
	}
	tw.Flush()
}
