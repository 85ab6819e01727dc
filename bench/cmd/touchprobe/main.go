//go:build linux

// Command touchprobe measures what one random memory access costs on this
// machine, with no table and no cache in the way: the floor under the
// figures that grow with the data (a hit at 10M entries against 1M, an
// insert into a 4 GiB cache against a 64 MiB one).
//
//	cd bench && go run ./cmd/touchprobe [-anon 2,20,150,1200] [-file 120,1200] [-touches N] [-dir DIR] [-populate MiB]
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
// Linux only. It prints one line per case: the kind, the size and the nanoseconds per
// access. The files are removed at exit.
//
// With -populate (Linux 5.14 and later), it then faults in an anonymous
// mapping of that many MiB 2 MiB at a time, as the block cache does
// (MADV_POPULATE_WRITE), timing each call by the thread's CPU time, and
// writes one byte to each 4 KiB page of the range after: once asking for
// transparent huge pages (MADV_HUGEPAGE), once refusing them
// (MADV_NOHUGEPAGE). It prints the median and the range of both times
// per 2 MiB: what the cache's slowHugeFault weighs.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	anon := flag.String("anon", "2,20,150,1200", "sizes in MiB of anonymous mappings to probe, comma-separated")
	file := flag.String("file", "120,1200", "sizes in MiB of file mappings to probe, comma-separated")
	touches := flag.Int("touches", 1<<18, "dependent accesses per pass")
	dir := flag.String("dir", "", "where to write the files (default: os.TempDir())")
	populate := flag.Int("populate", 512, "MiB of anonymous memory to fault in 2 MiB at a time, with and without huge pages (0: skip)")
	flag.Parse()
	err := run(*anon, *file, *touches, *dir)
	for _, huge := range []bool{true, false} {
		if err != nil || *populate <= 0 {
			break
		}
		var pop, write []time.Duration
		if pop, write, err = probePopulate(*populate, huge); err == nil {
			fmt.Printf("populate %d MiB, huge pages %-5v: %s per 2 MiB, then first writes %s\n", *populate, huge, spread(pop), spread(write))
		}
	}
	if err != nil {
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

const hugePage = 2 << 20

// probePopulate faults in mb MiB of a fresh anonymous mapping a huge
// page's worth at a time and then writes a byte to each 4 KiB page of
// it, and returns the thread CPU time of each call and of each range's
// writes.
func probePopulate(mb int, huge bool) (populate, writes []time.Duration, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := max(mb<<20/hugePage, 1) * hugePage
	m, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Munmap(m)
	skip := (hugePage - int(uintptr(unsafe.Pointer(&m[0])))%hugePage) % hugePage
	mem := m[skip : skip+n]
	advice := unix.MADV_NOHUGEPAGE
	if huge {
		advice = unix.MADV_HUGEPAGE
	}
	if err := unix.Madvise(mem, advice); err != nil {
		return nil, nil, fmt.Errorf("madvise: %w", err)
	}
	for off := 0; off < n; off += hugePage {
		r := mem[off : off+hugePage]
		t0, err := threadCPU()
		if err != nil {
			return nil, nil, err
		}
		if err := unix.Madvise(r, unix.MADV_POPULATE_WRITE); err != nil {
			return nil, nil, fmt.Errorf("MADV_POPULATE_WRITE (Linux 5.14): %w", err)
		}
		t1, _ := threadCPU()
		for p := 0; p < len(r); p += 4096 {
			r[p] = 1
		}
		t2, _ := threadCPU()
		populate = append(populate, t1-t0)
		writes = append(writes, t2-t1)
	}
	return populate, writes, nil
}

func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// spread formats the median and range of ds.
func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	r := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1e3) }
	return fmt.Sprintf("%s (%s-%s)", r(s[len(s)/2]), r(s[0]), r(s[len(s)-1]))
}
