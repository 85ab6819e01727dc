package cache_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/internal/blockcache"
)

// TestNewUnderAddressSpaceLimit runs New(8 GiB) in a child process whose
// address space is limited to 4 GB (as ulimit -v 4000000 does): New must
// return an error, not take 8 GiB from the Go heap and die of "fatal
// error: out of memory".
func TestNewUnderAddressSpaceLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS as Linux applies it")
	}
	if os.Getenv("SSTABLE_CACHE_CHILD") == "1" {
		lim := syscall.Rlimit{Cur: 4_000_000 << 10, Max: 4_000_000 << 10}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			t.Fatalf("setrlimit: %v", err)
		}
		c, err := cache.New(8 << 30)
		if err == nil {
			c.Close()
			t.Fatal("cache.New(8 GiB) under a 4 GB address-space limit returned no error")
		}
		if !strings.Contains(err.Error(), "cache:") {
			t.Fatalf("error %q does not say it is the cache's", err)
		}
		// A cache that fits still works under the limit.
		small, err := cache.New(16 << 20)
		if err != nil {
			t.Fatalf("cache.New(16 MiB) under the limit: %v", err)
		}
		if err := small.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewUnderAddressSpaceLimit$", "-test.v")
	cmd.Env = append(os.Environ(), "SSTABLE_CACHE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestNewUnderAddressSpaceLimit") {
		t.Fatalf("child did not run the check:\n%s", out)
	}
}

func TestStatsAndClose(t *testing.T) {
	c, err := cache.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.Capacity != 1<<20 || c.Capacity() != 1<<20 || st.Size != 0 || st.Hits != 0 || st.Misses != 0 {
		t.Fatalf("new cache: Capacity %d, Stats %+v", c.Capacity(), st)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestCapacityBelowMinimum: New refuses a capacity below MinCapacity,
// with an error that names the cache once and wraps ErrTooSmall; from
// MinCapacity up it makes a cache of that capacity.
func TestCapacityBelowMinimum(t *testing.T) {
	for _, capacity := range []int64{math.MinInt64, -5, -1, 0, 1, cache.MinCapacity - 1} {
		c, err := cache.New(capacity)
		if err == nil {
			c.Close()
			t.Errorf("New(%d) returned no error", capacity)
			continue
		}
		if c != nil {
			t.Errorf("New(%d) returned a Cache with its error", capacity)
		}
		if !errors.Is(err, cache.ErrTooSmall) {
			t.Errorf("New(%d): error %q does not wrap ErrTooSmall", capacity, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "cache: ") || strings.Count(msg, "cache:") != 1 || !strings.Contains(msg, fmt.Sprint(capacity)) {
			t.Errorf("New(%d): error %q: want one \"cache: \" prefix and the capacity", capacity, msg)
		}
	}
	for _, capacity := range []int64{cache.MinCapacity, cache.MinCapacity + 1, 4096} {
		c, err := cache.New(capacity)
		if err != nil {
			t.Fatalf("New(%d): %v", capacity, err)
		}
		if c.Capacity() != capacity || c.Stats().Capacity != capacity {
			t.Errorf("New(%d): Capacity %d, Stats %+v", capacity, c.Capacity(), c.Stats())
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCloseInUseMessage: Close's error while a reader is open names the
// package once ("cache: close: in use: ..."), where it once read "cache:
// close: 1 user (table readers) still open: cache: in use", and still
// wraps ErrInUse.
func TestCloseInUseMessage(t *testing.T) {
	c, err := cache.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := blockcache.FromPublic(c).NewTable(4) // as a reader registers
	if err != nil {
		t.Fatal(err)
	}
	err = c.Close()
	const want = "cache: close: in use: 1 user (table readers) still open"
	if err == nil || err.Error() != want || !errors.Is(err, cache.ErrInUse) {
		t.Fatalf("Close with a reader open: %v; want %q wrapping ErrInUse", err, want)
	}
	if n := strings.Count(err.Error(), "cache:"); n != 1 {
		t.Fatalf("error %q names the package %d times", err, n)
	}
	tb.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
