// Command touchprobe measures what one random memory access costs on this
// machine, with no table and no cache in the way: the floor under the
// figures that grow with the data (a hit at 10M entries against 1M, an
// insert into a 4 GiB cache against a 64 MiB one).
//
//	cd bench && go run ./cmd/touchprobe [-anon 2,20,150,1200] [-file 120,1200] [-touches N] [-dir DIR]
//
// Each access is a load whose address depends on the value the previous
// one loaded (a chain, as a lookup's index, slot, entry and block are),
// so the time per access is the latency of a miss, not the throughput of
// many in flight. Every figure is the median of three passes of -touches
// accesses, after one pass that is not counted. A random number per access
// is part of the loop: the smallest case, which the CPU's caches hold,
// shows that cost.
//
//   - anon: an anonymous mapping of each size in MiB, every page written
//     first: memory like the cache's metadata (a 64 MiB cache keeps about
//     2.5 MB of it, a 4 GiB cache 150 MB) and its blocks.
//   - file: a file of each size in MiB, written, synced and mapped
//     read-only, every page read once first: memory like a table read in
//     place (1M entries of cmd/compare are a 120 MiB file, 10M a 1.2 GiB
//     one).
//
// It prints one line per case: the kind, the size and the nanoseconds per
// access. The files are removed at exit.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	anon := flag.String("anon", "2,20,150,1200", "sizes in MiB of anonymous mappings to probe, comma-separated")
	file := flag.String("file", "120,1200", "sizes in MiB of file mappings to probe, comma-separated")
	touches := flag.Int("touches", 1<<18, "dependent accesses per pass")
	dir := flag.String("dir", "", "where to write the files (default: os.TempDir())")
	flag.Parse()
	if err := run(*anon, *file, *touches, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "touchprobe:", err)
		os.Exit(1)
	}
}

func run(anonSizes, fileSizes string, touches int, dir string) error {
	if touches < 1 {
		return fmt.Errorf("-touches must be positive")
	}
	anon, err := parseSizes(anonSizes)
	if err != nil {
		return fmt.Errorf("-anon: %w", err)
	}
	files, err := parseSizes(fileSizes)
	if err != nil {
		return fmt.Errorf("-file: %w", err)
	}
	for _, mb := range anon {
		ns, err := probeAnon(mb, touches)
		if err != nil {
			return err
		}
		fmt.Printf("anon %5d MiB: %6.0f ns per access\n", mb, ns)
	}
	for _, mb := range files {
		ns, err := probeFile(dir, mb, touches)
		if err != nil {
			return err
		}
		fmt.Printf("file %5d MiB: %6.0f ns per access\n", mb, ns)
	}
	return nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q: want a positive number of MiB", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func probeAnon(mb, touches int) (float64, error) {
	m, err := unix.Mmap(-1, 0, mb<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("anon %d MiB: %w", mb, err)
	}
	defer unix.Munmap(m)
	for i := 0; i < len(m); i += 4096 {
		m[i] = byte(i >> 12)
	}
	return chase(m, touches, 0), nil
}

func probeFile(dir string, mb, touches int) (float64, error) {
	f, err := os.CreateTemp(dir, "touchprobe-*.bin")
	if err != nil {
		return 0, err
	}
	path := f.Name()
	defer os.Remove(path)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for range mb {
		if _, err := f.Write(buf); err != nil {
			f.Close()
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, mb<<20, unix.PROT_READ, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	defer unix.Munmap(m)
	var sum int // every page read once, as a table's pages are before a lookup
	for i := 0; i < len(m); i += 4096 {
		sum += int(m[i])
	}
	return chase(m, touches, sum%len(m)), nil
}

// chase returns the median over three passes (after one not counted) of
// the time per load, each load's address depending on the one before,
// starting at m[idx].
func chase(m []byte, touches, idx int) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	var passes []float64
	for pass := range 4 {
		start := time.Now()
		for range touches {
			v := m[idx]
			idx = (r.IntN(len(m)) + int(v&1)) % len(m)
		}
		if pass > 0 {
			passes = append(passes, float64(time.Since(start).Nanoseconds())/float64(touches))
		}
	}
	if idx < 0 { // never: it keeps idx, and so every load, live
		panic(idx)
	}
	slices.Sort(passes)
	return passes[len(passes)/2]
}
