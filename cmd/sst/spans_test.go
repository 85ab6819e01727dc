package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildScanSpans builds a table with -spans (overlapping spans, out of
// order), lists its fragments with scan -spans (raw and -hex, within
// -start and -end), and checks that info shows the span counts and the
// span block, and verify passes.
func TestBuildScanSpans(t *testing.T) {
	dir := t.TempDir()
	in, spans, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "spans.txt"), filepath.Join(dir, "t.sst")
	if err := os.WriteFile(in, []byte("a\t1\nb\t2\nc\t3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spans, []byte("c\te\tdel@2\na\tc\tdel@1\nb\td\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSST(t, "build", "-q", "-o", out, "-spans", spans, in)
	if got, want := mustSST(t, "scan", "-spans", out), "a\tb\tdel@1\nb\tc\tdel@1\t\nc\td\tdel@2\t\nd\te\tdel@2\n"; got != want {
		t.Fatalf("scan -spans = %q, want %q", got, want)
	}
	if got, want := mustSST(t, "scan", "-spans", "-start", "b", "-end", "c", out), "b\tc\tdel@1\t\n"; got != want {
		t.Fatalf("scan -spans -start b -end c = %q, want %q", got, want)
	}
	if got, want := mustSST(t, "scan", "-spans", "-hex", "-limit", "1", out), "61\t62\t64656c4031\n"; got != want {
		t.Fatalf("scan -spans -hex -limit 1 = %q, want %q", got, want)
	}
	if got, want := mustSST(t, "scan", out), "a\t1\nb\t2\nc\t3\n"; got != want {
		t.Fatalf("scan = %q, want %q", got, want)
	}
	// Built through bulk: the table holds 6 pieces of spans, one per
	// fragment and value (bulk.Writer.AddSpan), in 4 fragments.
	info := mustSST(t, "info", out)
	for _, s := range []string{"format version:     5", "spans:              6", "span fragments:     4", "span block ", "smallest span key:  \"a\"", "largest span end:   \"e\""} {
		if !strings.Contains(info, s) {
			t.Errorf("info lacks %q:\n%s", s, info)
		}
	}
	mustSST(t, "verify", out)
	// Hex spans, and spans need version 4's layout.
	hexIn, hexSpans, hexOut := filepath.Join(dir, "in.hex"), filepath.Join(dir, "spans.hex"), filepath.Join(dir, "h.sst")
	os.WriteFile(hexIn, []byte("00\t01\n"), 0o644)
	os.WriteFile(hexSpans, []byte("00\tff\t0a\n"), 0o644)
	mustSST(t, "build", "-q", "-hex", "-o", hexOut, "-spans", hexSpans, hexIn)
	if got, want := mustSST(t, "scan", "-spans", "-hex", hexOut), "00\tff\t0a\n"; got != want {
		t.Fatalf("hex scan -spans = %q, want %q", got, want)
	}
	wantError(t, []string{"build", "-q", "-o", filepath.Join(dir, "v1.sst"), "-format-version", "1", "-spans", spans, in}, 2, "-spans needs format version 4")
	os.WriteFile(spans, []byte("b\ta\tx\n"), 0o644)
	wantError(t, []string{"build", "-q", "-o", filepath.Join(dir, "bad.sst"), "-spans", spans, in}, 1, "spans.txt:1", "not below its end")
}
