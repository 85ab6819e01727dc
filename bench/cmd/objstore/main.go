// Command objstore counts the ReadAt calls and bytes a table reader makes
// over an io.ReaderAt, as it would against object storage (S3, GCS,
// Azure), where every ReadAt is a ranged GET: ours (format version 1; a
// hash index with the builder's defaults, version 2, or version 3 once the
// index and filter exceed the default PartitionThreshold, as at 5M
// entries; and version 3, the partitioned index and filter, forced)
// beside Pebble v1.1.5 (one-level and
// two-level index) reading through an objstorage.Readable with the
// read-ahead of Pebble's remote objects (readahead_pebble.go).
//
// Tables: n entries of 16-byte random keys and 100-byte values (half
// random, half text), 4 KiB blocks, snappy, 10 bits/key bloom filter,
// written to a temporary directory. Every row but the 1000-lookup rows
// starts from a new reader and a new, empty 256 MiB block cache; the
// 1000-lookup rows run on one reader, present keys first, then absent.
//
//	cd bench && go run ./cmd/objstore [-n 10000,1000000,5000000]
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/internal/faultio"
	"github.com/sstkit/sstable/reader"
)

const (
	valueLen   = 100
	lookups    = 1000
	cacheBytes = 256 << 20
)

// mix is SplitMix64's finaliser: distinct inputs give distinct outputs.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// key i of n: the high 8 bytes increase with i (i's share of 2^64 plus a
// random offset in it), the low 8 are random and even, so keys are sorted
// and random-looking. absentKey(j) has an odd low half: never present.
func key(dst []byte, i, n int) []byte {
	step := math.MaxUint64 / uint64(n)
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(i)*step+mix(uint64(i))%step)
	return binary.BigEndian.AppendUint64(dst, mix(uint64(i)^0x5bd1e995)&^1)
}

func absentKey(dst []byte, j, n int) []byte {
	dst = key(dst, int(mix(uint64(j)+77)%uint64(n)), n)
	binary.BigEndian.PutUint64(dst[8:], mix(uint64(j)+991)|1)
	return dst
}

const text = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, "

func value(dst []byte, i int) []byte {
	dst = dst[:0]
	for j := 0; j < 48; j += 8 {
		dst = binary.LittleEndian.AppendUint64(dst, mix(uint64(i)*7+uint64(j)))
	}
	off := i % (len(text) - (valueLen - 48))
	return append(dst, text[off:off+valueLen-48]...)
}

// table is an open reader of some implementation.
type table interface {
	get(key []byte) (bool, error)
	scan() (int, error)
	close() error
}

// impl builds and opens tables of one kind.
type impl struct {
	name  string
	build func(path string, n int) error
	open  func(src io.ReaderAt, size int64) (table, error)
}

// ours

// oursTable is a reader with a cache of its own, so that every row starts
// from an empty cache.
type oursTable struct {
	r *reader.Reader
	c *cache.Cache
}

func (t oursTable) get(k []byte) (bool, error) {
	_, found, err := implsetup.OursGet(t.r, k)
	return found, err
}

func (t oursTable) scan() (int, error) { return implsetup.OursScan(t.r, nil) }

func (t oursTable) close() error {
	err := t.r.Close()
	if cerr := t.c.Close(); err == nil {
		err = cerr
	}
	return err
}

// buildOurs builds our table: with opts.PartitionThreshold -1, version 1
// whatever its size; with 1, version 3 whatever its size; with 0, the
// default threshold (4 MiB of index and filter) decides.
func buildOurs(opts builder.Options) func(string, int) error {
	return func(path string, n int) error {
		b, err := implsetup.CreateOurs(path, &opts)
		if err != nil {
			return err
		}
		var k, v []byte
		for i := range n {
			k, v = key(k, i, n), value(v, i)
			if err := b.Add(k, v); err != nil {
				b.Abort()
				return err
			}
		}
		return b.Close()
	}
}

func openOurs(src io.ReaderAt, size int64) (table, error) {
	c := cache.New(cacheBytes)
	r, err := reader.New(src, size, &reader.Options{Cache: c})
	if err != nil {
		c.Close()
		return nil, err
	}
	return oursTable{r, c}, nil
}

// Pebble, configured as bench/cmd/compare configures it.

func buildPebble(indexBlockSize int) func(string, int) error {
	return func(path string, n int) error {
		w, err := implsetup.CreatePebble(path, implsetup.PebbleWriterOptions(implsetup.Snappy, indexBlockSize))
		if err != nil {
			return err
		}
		var k, v []byte
		for i := range n {
			k, v = key(k, i, n), value(v, i)
			if err := w.Set(k, v); err != nil {
				w.Close()
				return err
			}
		}
		return w.Close()
	}
}

type pebbleTable struct {
	cache *pebble.Cache
	r     *sstable.Reader
	it    sstable.Iterator
}

func openPebble(src io.ReaderAt, size int64) (table, error) {
	c := pebble.NewCache(cacheBytes)
	r, err := sstable.NewReader(&pebbleReadable{ra: src, size: size}, implsetup.PebbleReaderOptions(c))
	if err != nil {
		c.Unref()
		return nil, err
	}
	return &pebbleTable{cache: c, r: r}, nil
}

// get looks key up as a Pebble user does with a filter check:
// SeekPrefixGE on one reused iterator.
func (t *pebbleTable) get(k []byte) (bool, error) {
	_, found, err := implsetup.PebbleGet(t.r, &t.it, k)
	return found, err
}

func (t *pebbleTable) scan() (int, error) { return implsetup.PebbleScan(t.r, nil) }

func (t *pebbleTable) close() error {
	err := implsetup.ClosePebble(t.r, t.it)
	t.cache.Unref()
	return err
}

var impls = []impl{
	{"ours v1", buildOurs(builder.Options{PartitionThreshold: -1}), openOurs},
	// The builder's defaults but for the hash index: version 2, or version
	// 3 with the hash index kept above the default threshold.
	{"ours hash index", buildOurs(builder.Options{HashIndex: true}), openOurs},
	{"ours v3 (partitioned)", buildOurs(builder.Options{PartitionThreshold: 1}), openOurs},
	{"pebble 1-level index", buildPebble(math.MaxInt32), openPebble},
	{"pebble 2-level index", buildPebble(0), openPebble},
}

// count is one row's figures.
type count struct{ calls, bytes int64 }

func (c count) String() string { return fmt.Sprintf("%d / %s", c.calls, size(c.bytes)) }

func size(b int64) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 10<<10:
		return fmt.Sprintf("%.0f KB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}

var rows = []string{"format version", "open", "first Get, present", "first Get, absent", "1000 Gets, present", "1000 Gets, absent", "full scan", "full scan, reads per MiB"}

// measure returns im's figures for a table of n entries at path.
func measure(im impl, path string, n int) (map[string]string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	src := &faultio.Counting{R: f}
	out := map[string]string{}
	take := func() count {
		c := count{src.Calls(), src.Bytes()}
		src.Reset()
		return c
	}
	var k []byte
	// Open, then one lookup on a new reader: the cold figures.
	cold := func(row string, kf func() []byte, want bool) error {
		t, err := im.open(src, st.Size())
		if err != nil {
			return err
		}
		open := take()
		if row == "open" {
			out["open"] = open.String()
			out["format version"] = "-"
			if ot, ok := t.(oursTable); ok {
				p := ot.r.Properties()
				out["format version"] = fmt.Sprint(p.FormatVersion)
				if p.HashIndexSize != 0 {
					out["format version"] += " + hash index"
				}
			}
			return t.close()
		}
		found, err := t.get(kf())
		if err != nil || found != want {
			t.close()
			return fmt.Errorf("%s: found %v, %v", row, found, err)
		}
		g := take()
		out[row] = fmt.Sprintf("%s (%d with open)", g, g.calls+open.calls)
		return t.close()
	}
	if err := cold("open", nil, false); err != nil {
		return nil, 0, err
	}
	if err := cold("first Get, present", func() []byte { k = key(k, n/3, n); return k }, true); err != nil {
		return nil, 0, err
	}
	if err := cold("first Get, absent", func() []byte {
		// The first absent key; a filter may pass it (a false
		// positive), which then costs what a present key does.
		k = absentKey(k, 0, n)
		return k
	}, false); err != nil {
		return nil, 0, err
	}

	t, err := im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	take()
	for j := range lookups {
		k = key(k, int(mix(uint64(j))%uint64(n)), n)
		if found, err := t.get(k); err != nil || !found {
			t.close()
			return nil, 0, fmt.Errorf("lookup %d: found %v, %v", j, found, err)
		}
	}
	out["1000 Gets, present"] = take().String()
	for j := range lookups {
		k = absentKey(k, j+1, n)
		if found, err := t.get(k); err != nil || found {
			t.close()
			return nil, 0, fmt.Errorf("absent lookup %d: found %v, %v", j, found, err)
		}
	}
	out["1000 Gets, absent"] = take().String()
	if err := t.close(); err != nil {
		return nil, 0, err
	}

	t, err = im.open(src, st.Size())
	if err != nil {
		return nil, 0, err
	}
	take()
	got, err := t.scan()
	if err != nil || got != n {
		t.close()
		return nil, 0, fmt.Errorf("scan: %d of %d entries, %v", got, n, err)
	}
	s := take()
	out["full scan"] = s.String()
	out["full scan, reads per MiB"] = fmt.Sprintf("%.2f", float64(s.calls)/(float64(st.Size())/(1<<20)))
	return out, st.Size(), t.close()
}

func main() {
	sizes := flag.String("n", "10000,1000000,5000000", "comma-separated entry counts")
	flag.Parse()
	dir, err := os.MkdirTemp("", "objstore-*")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	fmt.Println("ReadAt calls / bytes asked for, per reader (16-byte keys, 100-byte values, 4 KiB blocks, snappy, 10 bits/key).")
	fmt.Println("Pebble v1.1.5 reads through an objstorage.Readable with the read-ahead of its remote objects (64 KiB to 1 MiB).")
	fmt.Println("ours: reader.New with the default TailSize (256 KiB) and read-ahead (64 KiB, 256 KiB, 1 MiB).")
	fmt.Println("ours v3: partitioned index and filter, forced at every size here (by default only above 4 MiB of index and filter).")
	fmt.Println("ours hash index: the builder's defaults with HashIndex: version 2, or version 3 (partitioned, hash index kept) above 4 MiB of index and filter.")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("bad -n %q", s))
		}
		results := make([]map[string]string, len(impls))
		fileSizes := make([]int64, len(impls))
		for i, im := range impls {
			path := filepath.Join(dir, fmt.Sprintf("t%d-%d.sst", i, n))
			if err := im.build(path, n); err != nil {
				fail(fmt.Errorf("%s: build: %w", im.name, err))
			}
			if results[i], fileSizes[i], err = measure(im, path, n); err != nil {
				fail(fmt.Errorf("%s, %d entries: %w", im.name, n, err))
			}
			os.Remove(path)
		}
		fmt.Printf("\n%d entries\n", n)
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "|")
		for _, im := range impls {
			fmt.Fprintf(tw, "\t| %s", im.name)
		}
		fmt.Fprintln(tw, "\t|")
		fmt.Fprint(tw, "| file size")
		for i := range impls {
			fmt.Fprintf(tw, "\t| %s", size(fileSizes[i]))
		}
		fmt.Fprintln(tw, "\t|")
		for _, row := range rows {
			fmt.Fprintf(tw, "| %s", row)
			for i := range impls {
				fmt.Fprintf(tw, "\t| %s", results[i][row])
			}
			fmt.Fprintln(tw, "\t|")
		}
		tw.Flush()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "objstore:", err)
	os.Exit(1)
}
