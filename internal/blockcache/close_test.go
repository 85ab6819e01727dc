//go:build linux

package blockcache

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// statusKB returns a "Name:   123 kB" field of /proc/self/status, in
// bytes.
func statusKB(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", name)
	return 0
}

// TestClosedCachesReturnMemory: Close gives the memory of a cache filled
// with blocks back at once. Three 64 MiB caches are filled (each adding
// its budget to the process's anonymous memory, RssAnon) and closed:
// after each Close, RssAnon is back within 4 MiB of where it was.
// When closed caches' mappings were kept for the next New, their pages
// returned lazily (MADV_FREE, reclaimed only under memory pressure), two
// closed caches left 265 MB resident.
func TestClosedCachesReturnMemory(t *testing.T) {
	const capacity = 64 << 20
	pattern(0, 0, 0, 1) // the blocks' contents, 4 MiB of Go heap, made before the start
	runtime.GC()
	base := statusKB(t, "RssAnon")
	for round := range 3 {
		c := newCache(capacity)
		if !c.offHeap {
			t.Skip("no anonymous mapping here")
		}
		tb := newTable(t, c, capacity/4096)
		for i := range capacity / 4096 {
			put(tb, i, 4096, uint32(round))
		}
		filled := statusKB(t, "RssAnon")
		tb.Close()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		closed := statusKB(t, "RssAnon")
		t.Logf("round %d: RssAnon %d MiB at the start, %d filled, %d closed", round, base>>20, filled>>20, closed>>20)
		if filled-base < capacity*3/4 {
			t.Fatalf("round %d: filling a %d MiB cache took RssAnon from %d to only %d MiB", round, capacity>>20, base>>20, filled>>20)
		}
		if closed-base > 4<<20 {
			t.Fatalf("round %d: RssAnon %d MiB after Close, %d MiB at the start", round, closed>>20, base>>20)
		}
	}
}
