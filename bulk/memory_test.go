package bulk_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// heapChildEnv, when set (to "budget,input" in bytes), makes TestHeapBound
// run one writer's workload in this process instead of checking: the
// child process of the check.
const heapChildEnv = "SSTABLE_BULK_HEAP_CHILD"

// Markers the child writes to standard error around its workload, after a
// forced collection (markTrace).
const (
	heapStartMarker = "heapbound: start"
	heapEndMarker   = "heapbound: end"
)

// TestHeapBound adds ten times the memory budget of entries in random order
// and checks that the writer never holds more than 2 x MemoryBudget + 16
// MiB of Go heap, through Add and Finish.
//
// Sampling the heap (as this test once did, every 5 ms) lets short peaks
// escape. Instead the workload runs in a child process with
// GODEBUG=gctrace=1, which makes the runtime print a line for every
// collection, none skipped, with the heap's size as the collector counts
// it (heapLive: the bytes the previous collection marked plus every byte
// allocated since, garbage included) when the cycle starts and when its
// marking ends, and the bytes it marked. heapLive only grows between one
// cycle's end of marking and the next's, and only grows during a cycle's
// marking; so every instant of the run lies under the start or the
// end-of-marking size of some cycle, and the largest of those sizes
// bounds the live heap at every instant: no peak escapes. The bound
// counts garbage, so the child runs with GOGC=10: a collection after
// every 10% of heap growth (the pacer's assists hold the allocating
// goroutine to that, whatever the scheduling), which keeps the garbage
// in the bound small. The trace gives MiB rounded down: the bound adds
// one to the peak and subtracts the rounded-down heap the last
// collection before the workload marked (the child's baseline).
func TestHeapBound(t *testing.T) {
	if spec := os.Getenv(heapChildEnv); spec != "" {
		heapChild(t, spec)
		return
	}
	// Ten runs of 4 MiB, and 32 of 2 MiB, merged in passes (each run's
	// iterator reads ahead in the merge).
	t.Run("4MiB", func(t *testing.T) { testHeapBound(t, 4<<20, 40<<20) })
	t.Run("2MiB", func(t *testing.T) { testHeapBound(t, 2<<20, 64<<20) })
}

// gcTraceLine matches a gctrace line: the cycle number and the heap at
// the cycle's start, at the end of marking, and marked, in MiB.
var gcTraceLine = regexp.MustCompile(`^gc (\d+) @.* (\d+)->(\d+)->(\d+) MB, `)

func testHeapBound(t *testing.T, budget, input int64) {
	limit := 2*budget + 16<<20
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeapBound$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("%s=%d,%d", heapChildEnv, budget, input),
		"GOGC=10",
		"GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",gctrace=1", ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr (last 2000 bytes):\n%s", err, stdout.Bytes(), tail(stderr.Bytes(), 2000))
	}

	var (
		started, ended bool
		base, peak     int64 // MiB, rounded down
		cycles         int
		last           = -1 // number of the last cycle seen
	)
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == heapStartMarker:
			started = true
			continue
		case line == heapEndMarker:
			ended = true
		}
		if ended {
			break
		}
		m := gcTraceLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		start, _ := strconv.ParseInt(m[2], 10, 64)
		markEnd, _ := strconv.ParseInt(m[3], 10, 64)
		marked, _ := strconv.ParseInt(m[4], 10, 64)
		// Cycles are numbered from 1 with no gap: a line lost or
		// garbled would leave part of the run unbounded.
		if last >= 0 && n != last+1 {
			t.Fatalf("gctrace: cycle %d follows cycle %d", n, last)
		}
		last = n
		if !started {
			base = marked
			continue
		}
		cycles++
		peak = max(peak, start, markEnd)
	}
	if !started || !ended || cycles == 0 {
		t.Fatalf("child's trace: start marker %v, end marker %v, %d collections between; stderr (last 2000 bytes):\n%s", started, ended, cycles, tail(stderr.Bytes(), 2000))
	}
	held := (peak + 1 - base) << 20
	t.Logf("budget %d MiB, %d MiB of entries: at most %d MiB of heap above the baseline (%d collections), limit %d MiB",
		budget>>20, input>>20, held>>20, cycles, limit>>20)
	if held > limit {
		t.Fatalf("writer held up to %d MiB of heap, limit %d MiB", held>>20, limit>>20)
	}
}

// heapChild runs the workload of testHeapBound between the markers.
func heapChild(t *testing.T, spec string) {
	var budget, input int64
	if _, err := fmt.Sscanf(spec, "%d,%d", &budget, &input); err != nil {
		t.Fatalf("%s=%q: %v", heapChildEnv, spec, err)
	}
	const entry = 16 + 100
	dir := t.TempDir()
	markTrace(heapStartMarker)
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: budget, TargetTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	key := make([]byte, 16)
	value := make([]byte, 100)
	n := int(input / entry)
	for range n {
		binary.BigEndian.PutUint64(key, rng.Uint64())
		binary.BigEndian.PutUint64(key[8:], rng.Uint64())
		binary.LittleEndian.PutUint64(value, rng.Uint64())
		if err := w.Add(key, value); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	markTrace(heapEndMarker)
	var entries int64
	for _, ti := range tables {
		entries += ti.Entries
	}
	if entries != int64(n) {
		t.Fatalf("%d entries in tables, want %d", entries, n)
	}
	if s := w.Stats(); s.Runs < 9 {
		t.Fatalf("only %d runs spilled", s.Runs)
	}
}

// markTrace collects garbage and writes marker to standard error after
// the collection's trace line. runtime.GC returns before the runtime
// prints that line, but the runtime prints it before it lets the world
// be stopped again, as ReadMemStats does. The marker goes through the
// builtin println, which holds the runtime's print lock as the trace
// lines do, so that no trace line of a collection started meanwhile can
// be written into the middle of it.
func markTrace(marker string) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	println(marker)
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }
