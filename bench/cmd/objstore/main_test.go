package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMeasureSmall measures every implementation on small tables (3000
// entries, all in the tail; 60000, partitioned by default) and checks
// that every lookup found what it should (measure fails otherwise), that
// every row has a cell, and that ours meets the read caps. (Whether ours
// makes fewer reads than Pebble v2 on every row is reported, not checked
// here: on the 1000 absent keys it turns on the filters' false positives,
// which differ between the two at a given size.)
func TestMeasureSmall(t *testing.T) {
	for _, n := range []int{3000, 60000} {
		results := make([]*result, len(impls))
		for i, im := range impls {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("t%d.sst", i))
			if err := im.build(path, n); err != nil {
				t.Fatalf("%s: build: %v", im.name, err)
			}
			r, _, err := measure(im, path, n)
			if err != nil {
				t.Fatalf("%s, %d entries: %v", im.name, n, err)
			}
			for _, row := range rows {
				if r.cells[row] == "" {
					t.Errorf("%s, %d entries: no %q", im.name, n, row)
				}
			}
			results[i] = r
		}
		for _, c := range check(n, results) {
			if strings.HasPrefix(c, "NOT MET") && !strings.Contains(c, "Pebble v2") {
				t.Error(c)
			}
		}
	}
}

// TestLatencyWallTimes checks that with a latency every ReadAt sleeps,
// so that every cell's wall time covers its reads: on a table larger than
// the reader's tail (so that every row but the absent Gets reads), a row
// read by one goroutine (open, the first Gets counting open's reads,
// 1000 Gets, the full scan) took at least its reads times the latency,
// and the concurrent row at least its reads times the latency over the
// most reads in flight at once. Times are parsed from the cells as
// printed: milliseconds rounded down, or seconds to 10 ms.
func TestLatencyWallTimes(t *testing.T) {
	const n = 20000
	latency = time.Millisecond
	defer func() { latency = 0 }()
	im := impls[0]
	path := filepath.Join(t.TempDir(), "t.sst")
	if err := im.build(path, n); err != nil {
		t.Fatal(err)
	}
	r, _, err := measure(im, path, n)
	if err != nil {
		t.Fatal(err)
	}
	cell := regexp.MustCompile(`^(\d+) / [^,]+, (\d+) ms|^(\d+) / [^,]+, (\d+\.\d\d) s`)
	// wallOf returns the reads and wall time of a cell, and the slack the
	// printed precision allows.
	wallOf := func(row string) (reads int64, wall, slack time.Duration) {
		c := r.cells[row]
		m := cell.FindStringSubmatch(c)
		if m == nil {
			t.Fatalf("%s: cell %q has no reads and wall time", row, c)
		}
		if m[1] != "" {
			reads, _ = strconv.ParseInt(m[1], 10, 64)
			ms, _ := strconv.ParseInt(m[2], 10, 64)
			return reads, time.Duration(ms) * time.Millisecond, 0
		}
		reads, _ = strconv.ParseInt(m[3], 10, 64)
		sec, _ := strconv.ParseFloat(m[4], 64)
		return reads, time.Duration(sec * float64(time.Second)), 5 * time.Millisecond
	}
	withOpen := regexp.MustCompile(`\((\d+) with open\)$`)
	for _, row := range []string{"open", "first Get, present", "first Get, absent", "1000 Gets, present", "1000 Gets, absent", "full scan"} {
		reads, wall, slack := wallOf(row)
		if m := withOpen.FindStringSubmatch(r.cells[row]); m != nil {
			// A first Get's wall time counts the open before it.
			reads, _ = strconv.ParseInt(m[1], 10, 64)
		} else if strings.HasPrefix(row, "first Get") {
			t.Fatalf("%s: cell %q has no reads with open", row, r.cells[row])
		}
		if reads == 0 && row != "1000 Gets, absent" {
			t.Errorf("%s: no reads on a %d-entry table: the check is empty (cell %q)", row, n, r.cells[row])
		}
		if want := time.Duration(reads) * latency; wall+slack < want {
			t.Errorf("%s: %d sequential reads at %v each in %v (cell %q)", row, reads, latency, wall, r.cells[row])
		}
	}
	conc := regexp.MustCompile(`, (\d+) in flight$`).FindStringSubmatch(r.cells[concurrentRow])
	reads, wall, slack := wallOf(concurrentRow)
	if conc == nil || reads == 0 {
		t.Fatalf("%s: cell %q", concurrentRow, r.cells[concurrentRow])
	}
	peak, _ := strconv.ParseInt(conc[1], 10, 64)
	if want := time.Duration(reads) * latency / time.Duration(max(peak, 1)); peak < 1 || wall+slack < want {
		t.Errorf("%s: %d reads at %v each, at most %d at once, in %v (cell %q)", concurrentRow, reads, latency, peak, wall, r.cells[concurrentRow])
	}
}

// TestSpanReads checks the span table's reads: SpanAt reads nothing after
// New when the span block lies in the tail (1000 spans over 60000
// entries), and the span block once when it does not (20000 spans, a
// span block past the 256 KiB tail).
func TestSpanReads(t *testing.T) {
	defer func(s int) { spanCount = s }(spanCount)
	for _, c := range []struct{ n, spans, first int }{{60000, 1000, 0}, {60000, 20000, 1}} {
		spanCount = c.spans
		path := filepath.Join(t.TempDir(), "spans.sst")
		if err := buildSpans(path, c.n, c.spans); err != nil {
			t.Fatal(err)
		}
		r, err := measureSpans(path, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if r.first.calls != int64(c.first) || r.thousand.calls != 0 || r.fragments != uint64(c.spans) {
			t.Errorf("%s: want %d reads for the first SpanAt, none after, %d fragments", r, c.first, c.spans)
		}
	}
}
