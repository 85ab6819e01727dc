//go:build linux

package main

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("2, 20,,150")
	if err != nil || !slices.Equal(got, []int{2, 20, 150}) {
		t.Fatalf("parseSizes = %v, %v; want [2 20 150]", got, err)
	}
	for _, bad := range []string{"0", "-3", "2,x", "1.5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) gave no error", bad)
		}
	}
}

// TestProbesRun runs each probe at 1 MiB: both give a positive time and
// leave no file behind.
func TestProbesRun(t *testing.T) {
	if ns, err := probeAnon(1, 1000); err != nil || ns <= 0 {
		t.Fatalf("probeAnon = %v, %v", ns, err)
	}
	dir := t.TempDir()
	if ns, err := probeFile(dir, 1, 1000); err != nil || ns <= 0 {
		t.Fatalf("probeFile = %v, %v", ns, err)
	}
	if err := run("1", "1", 0, dir); err == nil {
		t.Error("run with 0 touches gave no error")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestProbePopulate faults in 4 MiB both ways: two ranges, each timed.
func TestProbePopulate(t *testing.T) {
	for _, huge := range []bool{true, false} {
		pop, writes, err := probePopulate(4, huge)
		if err != nil {
			t.Skipf("no MADV_POPULATE_WRITE here: %v", err)
		}
		if len(pop) != 2 || len(writes) != 2 {
			t.Fatalf("huge=%v: %d populate and %d write times for 4 MiB, want 2 each", huge, len(pop), len(writes))
		}
		if s := spread(pop); s == "" {
			t.Fatal("empty spread")
		}
	}
}
