package main

import (
	"os"
	"path/filepath"
	"slices"
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

// TestBuildSpansStdin checks that -spans - reads the spans from standard
// input beside an INPUT file, and that -spans - with INPUT - (both on
// standard input, which is read once) is a usage error rather than a
// table built without the spans.
func TestBuildSpansStdin(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "t.sst")
	writeFile(t, in, []byte("a\t1\nb\t2\n"))
	withStdin("a\tz\tdel\n", func() { mustSST(t, "build", "-q", "-spans", "-", "-o", out, in) })
	if got, want := mustSST(t, "scan", "-spans", out), "a\tz\tdel\n"; got != want {
		t.Fatalf("spans from standard input: scan -spans = %q, want %q", got, want)
	}
	both := filepath.Join(dir, "both.sst")
	for _, args := range [][]string{
		{"build", "-q", "-spans", "-", "-o", both, "-"},
		{"build", "-q", "-o", both, "-", "-spans", "-"},
		{"build", "-q", "-split", "1MiB", "-spans", "-", "-o", filepath.Join(dir, "both"), in, "-"},
	} {
		withStdin("a\t1\nb\tz\tdel\n", func() {
			wantError(t, args, 2, "-spans - and INPUT - both read standard input")
		})
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt", "t.sst"}) {
		t.Errorf("refused builds left %q", names)
	}
}

// TestBuildSpansBadLine checks that a -spans line without an end says what
// a span line holds, naming the file and the line, with and without -hex.
func TestBuildSpansBadLine(t *testing.T) {
	dir := t.TempDir()
	in, spans := filepath.Join(dir, "in.txt"), filepath.Join(dir, "spans.txt")
	writeFile(t, in, []byte("61\t31\n"))
	for _, hexFlag := range []bool{false, true} {
		writeFile(t, spans, []byte("61\t63\t\n63\n"))
		args := []string{"build", "-q", "-o", filepath.Join(dir, "t.sst"), "-spans", spans, in}
		if hexFlag {
			args = append(args, "-hex")
		}
		errs := wantError(t, args, 1, "spans.txt:2: ", "start<TAB>end<TAB>value", `"63"`)
		if strings.Contains(errs, "not below its end") {
			t.Errorf("-hex %v: %q blames the key order for a line without an end", hexFlag, errs)
		}
		// A tab and nothing after it is an empty end: the order error.
		writeFile(t, spans, []byte("63\t\n"))
		wantError(t, args, 1, "spans.txt:1: ", "not below its end")
	}
	withStdin("c\n", func() {
		wantError(t, []string{"build", "-q", "-o", filepath.Join(dir, "u.sst"), "-spans", "-", in}, 1, "standard input:1: ", "start<TAB>end<TAB>value")
	})
}
