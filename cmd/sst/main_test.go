package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
)

// sst runs the command line args and returns its output and exit status.
func sst(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
	status = run(args, &out, &errb)
	return out.String(), errb.String(), status
}

// mustSST runs args and fails the test unless it succeeds with nothing on
// stderr.
func mustSST(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, status := sst(t, args...)
	if status != 0 || errs != "" {
		t.Fatalf("sst %q: status %d, stderr %q", args, status, errs)
	}
	return out
}

// wantError checks that a run failed with status and exactly one stderr
// line beginning with "sst: " and containing each of subs.
func wantError(t *testing.T, args []string, status int, subs ...string) string {
	t.Helper()
	_, errs, got := sst(t, args...)
	if got != status {
		t.Errorf("sst %q: status %d, want %d (stderr %q)", args, got, status, errs)
	}
	if !strings.HasPrefix(errs, "sst: ") || !strings.HasSuffix(errs, "\n") || strings.Count(errs, "\n") != 1 {
		t.Errorf("sst %q: stderr %q is not one line beginning with \"sst: \"", args, errs)
	}
	if strings.Contains(errs, "internal error") || strings.Contains(errs, "goroutine") {
		t.Errorf("sst %q: stderr %q reports a panic", args, errs)
	}
	for _, s := range subs {
		if !strings.Contains(errs, s) {
			t.Errorf("sst %q: stderr %q does not mention %q", args, errs, s)
		}
	}
	return errs
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestBuildDirectory(t *testing.T) {
	in := t.TempDir()
	big := make([]byte, 10000) // larger than the 1024-byte blocks
	x := uint32(2463534242)
	for i := range big { // xorshift: incompressible
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		big[i] = byte(x)
	}
	files := map[string][]byte{
		"top.txt":            []byte("top level\n"),
		"empty":              {},
		"big.bin":            big,
		"a/b/c.txt":          []byte("nested c"),
		"a/b/d with space":   []byte("d\x00\xff\n"),
		"a/z.txt":            []byte("z"),
		"x/y/z/deep/leaf.go": []byte("package leaf\n"),
		"a-b":                []byte("sorts before a/ in bytes order"),
	}
	for name, data := range files {
		writeFile(t, filepath.Join(in, filepath.FromSlash(name)), data)
	}
	if err := os.MkdirAll(filepath.Join(in, "emptydir", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Symbolic links, to a file and to a directory, are not regular files.
	if err := os.Symlink("top.txt", filepath.Join(in, "link-to-file")); err != nil {
		t.Logf("no symlinks: %v", err)
	} else if err := os.Symlink("a", filepath.Join(in, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for name := range files {
		keys = append(keys, name)
	}
	slices.Sort(keys)

	outDir := t.TempDir()
	table := filepath.Join(outDir, "dir.sst")
	// Flags after INPUT work too.
	out := mustSST(t, "build", "-o", table, in, "-block-size", "1024", "-bits-per-key", "12")
	for _, want := range []string{
		fmt.Sprintf("entries:           %d\n", len(files)),
		"bytes in:", "bytes out:", "compression ratio:", "filter size:", "elapsed:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q:\n%s", want, out)
		}
	}
	if names := dirNames(t, outDir); !slices.Equal(names, []string{"dir.sst"}) {
		t.Errorf("output directory holds %q, want only dir.sst", names)
	}

	got := mustSST(t, "scan", "-keys-only", table)
	if want := strings.Join(keys, "\n") + "\n"; got != want {
		t.Errorf("scan -keys-only:\n%s\nwant:\n%s", got, want)
	}
	if got2 := mustSST(t, "scan", table, "-keys-only"); got2 != got {
		t.Errorf("scan FILE -keys-only differs from scan -keys-only FILE:\n%s", got2)
	}
	for name, data := range files {
		if got := mustSST(t, "get", table, name); got != string(data) {
			t.Errorf("get %q: %d bytes %q..., want %d bytes", name, len(got), got[:min(len(got), 20)], len(data))
		}
	}
	// Several keys: each value followed by a newline.
	if got, want := mustSST(t, "get", table, "a/z.txt", "empty", "top.txt"), "z\n\ntop level\n\n"; got != want {
		t.Errorf("get of three keys = %q, want %q", got, want)
	}

	if got, want := mustSST(t, "verify", table), fmt.Sprintf("ok: %d entries, ", len(files)); !strings.HasPrefix(got, want) {
		t.Errorf("verify = %q, want prefix %q", got, want)
	}
	info := mustSST(t, "info", table)
	for _, re := range []string{
		fmt.Sprintf(`(?m)^\s*entries:\s+%d$`, len(files)),
		`(?m)^\s*compression:\s+snappy$`,
		`(?m)^\s*filter bits/key:\s+12$`,
		`(?m)^\s*block size:\s+1024$`,
		`(?m)^\s*data blocks\s+0\s+\d+`,
		`(?m)^\s*filter section\s+\d+\s+\d+`,
		`(?m)^\s*index block\s+\d+\s+\d+`,
		`(?m)^\s*properties block\s+\d+\s+\d+`,
		`(?m)^\s*footer\s+\d+\s+64\s`,
		`(?m)^filter policy known: yes$`,
	} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info output does not match %s:\n%s", re, info)
		}
	}
	st, err := os.Stat(table)
	if err != nil {
		t.Fatal(err)
	}
	if re := fmt.Sprintf(`(?m)^\s*file size\s+%d$`, st.Size()); !regexp.MustCompile(re).MatchString(info) {
		t.Errorf("info output does not match %s:\n%s", re, info)
	}

	// A table written inside INPUT is not an entry of the next build.
	inner := filepath.Join(in, "self.sst")
	mustSST(t, "build", "-o", inner, in)
	out = mustSST(t, "build", "-f", "-o", inner, in)
	if want := fmt.Sprintf("entries:           %d\n", len(files)); !strings.Contains(out, want) {
		t.Errorf("rebuild into INPUT: output lacks %q:\n%s", want, out)
	}
	if _, _, status := sst(t, "get", inner, "self.sst"); status != 1 {
		t.Errorf("the table built inside INPUT contains itself")
	}
}

func TestBuildTextFile(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte("k3\tthree\n"+
		"k1\tone\twith\ttabs\r\n"+
		"lonely key\n"+
		"\tvalue of the empty key\n"+
		"k2\t\n"+
		"cr\tonly a CR, no newline, is kept\r"))
	table := filepath.Join(dir, "text.sst")
	out := mustSST(t, "build", "-compression", "none", "-o", table, input)
	if !strings.Contains(out, "entries:           6\n") {
		t.Errorf("build output:\n%s", out)
	}
	want := map[string]string{
		"":           "value of the empty key",
		"cr":         "only a CR, no newline, is kept\r",
		"k1":         "one\twith\ttabs",
		"k2":         "",
		"k3":         "three",
		"lonely key": "",
	}
	for k, v := range want {
		if got := mustSST(t, "get", table, k); got != v {
			t.Errorf("get %q = %q, want %q", k, got, v)
		}
	}
	scan := mustSST(t, "scan", table)
	wantScan := "\tvalue of the empty key\n" +
		"cr\tonly a CR, no newline, is kept\r\n" +
		"k1\tone\twith\ttabs\n" +
		"k2\t\n" +
		"k3\tthree\n" +
		"lonely key\t\n"
	if scan != wantScan {
		t.Errorf("scan:\n%q\nwant:\n%q", scan, wantScan)
	}
	if info := mustSST(t, "info", table); !regexp.MustCompile(`(?m)^\s*compression:\s+none$`).MatchString(info) {
		t.Errorf("info after -compression none:\n%s", info)
	}
	mustSST(t, "verify", table)
}

// TestGolden builds the golden input and compares its entries with those
// of the golden table.
func TestGolden(t *testing.T) {
	golden := filepath.Join("..", "..", "testdata", "golden")
	table := filepath.Join(t.TempDir(), "g.sst")
	mustSST(t, "build", "-o", table, filepath.Join(golden, "input.txt"))
	if got, want := mustSST(t, "scan", table), mustSST(t, "scan", filepath.Join(golden, "snappy.sst")); got != want {
		t.Errorf("entries built from input.txt differ from snappy.sst's")
	}
}

func TestBuildDuplicateKey(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "dup.txt")
	writeFile(t, input, []byte("b\t1\na\t2\ndup-key\t3\nc\ndup-key\t4\n"))
	out := filepath.Join(dir, "out.sst")
	// The message names the input file, the key and both lines.
	wantError(t, []string{"build", "-o", out, input}, 1, input+`: duplicate key "dup-key"`, "lines 3 and 5")
	if names := dirNames(t, dir); !slices.Equal(names, []string{"dup.txt"}) {
		t.Errorf("directory holds %q after a failed build, want only dup.txt", names)
	}
	// An existing table at the output path is left alone.
	writeFile(t, out, []byte("previous"))
	wantError(t, []string{"build", "-f", "-o", out, input}, 1, `duplicate key "dup-key"`)
	if data, err := os.ReadFile(out); err != nil || string(data) != "previous" {
		t.Errorf("output replaced by a failed build: %q, %v", data, err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"dup.txt", "out.sst"}) {
		t.Errorf("directory holds %q after a failed build", names)
	}
}

// buildText builds a table from text lines and returns its path.
func buildText(t *testing.T, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte(strings.Join(lines, "\n")+"\n"))
	table := filepath.Join(dir, "t.sst")
	mustSST(t, "build", "-o", table, input)
	return table
}

func TestGetAbsentKey(t *testing.T) {
	table := buildText(t, "a\tA", "b\tB", "-dash\tD")
	out, errs, status := sst(t, "get", table, "a", "nope", "b")
	if want := "sst: get: " + table + ": key \"nope\" not found\n"; status != 1 || out != "A\nB\n" || errs != want {
		t.Errorf("get a nope b: status %d, stdout %q, stderr %q", status, out, errs)
	}
	wantError(t, []string{"get", table, "nope"}, 1, `key "nope" not found`)
	// With -hex, one line per KEY in order, "-" for an absent one, and
	// the status still 1; an empty value is an empty line.
	empty := buildText(t, "\x00\t", "a\tA")
	out, errs, status = sst(t, "get", "-hex", empty, "00", "01", "61", "ff")
	if want := "\n-\n41\n-\n"; status != 1 || out != want || errs != "sst: get: "+empty+": key \"01\" not found\nsst: get: "+empty+": key \"ff\" not found\n" {
		t.Errorf("get -hex 00 01 61 ff: status %d, stdout %q (want %q), stderr %q", status, out, want, errs)
	}
	out, _, status = sst(t, "get", "-hex", empty, "01")
	if status != 1 || out != "-\n" {
		t.Errorf("get -hex of one absent key: status %d, stdout %q", status, out)
	}
	// "--" lets a key begin with "-".
	if got := mustSST(t, "get", table, "--", "-dash"); got != "D" {
		t.Errorf("get -- -dash = %q", got)
	}
	// Without it the key is taken for a flag: the error says to use "--".
	wantError(t, []string{"get", table, "-dash"}, 2, "-dash", `goes after "--"`, "sst get FILE -- -KEY")
	wantError(t, []string{"scan", table, "-nope"}, 2, "-nope", `goes after "--"`)
}

// TestCompressionLevelNeedsZstd checks that -compression-level without
// -compression zstd is a usage error rather than silently ignored, and
// that with zstd every level builds.
func TestCompressionLevelNeedsZstd(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte("k\tv\n"))
	out := filepath.Join(dir, "out.sst")
	for _, args := range [][]string{
		{"build", "-o", out, "-compression-level", "best", input},
		{"build", "-o", out, "-compression", "snappy", "-compression-level", "best", input},
		{"build", "-o", out, "-compression", "none", "-compression-level", "default", input},
	} {
		wantError(t, args, 2, "-compression-level applies to zstd and minlz only")
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt"}) {
		t.Errorf("usage errors left %q", names)
	}
	for _, level := range []string{"fastest", "default", "better", "best"} {
		mustSST(t, "build", "-f", "-o", out, "-compression", "zstd", "-compression-level", level, input)
	}
}

func TestGarbageFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.txt")
	writeFile(t, small, []byte("not a table\n"))
	large := filepath.Join(dir, "large.txt")
	writeFile(t, large, bytes.Repeat([]byte("this is just some text, not a table\n"), 100))
	for _, file := range []string{small, large, filepath.Join(dir, "missing.sst")} {
		for _, args := range [][]string{
			{"get", file, "k"},
			{"info", file},
			{"verify", file},
			{"scan", file},
		} {
			out, _, _ := sst(t, args...)
			wantError(t, args, 1, filepath.Base(file))
			if out != "" {
				t.Errorf("sst %q printed %q", args, out)
			}
		}
	}
}

func TestScanRange(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("k%02d\tv%d", i, i))
	}
	table := buildText(t, lines...)
	keys := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "k%02d\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-keys-only"}, keys(0, 20)},
		{[]string{"-keys-only", "-start", "k05", "-end", "k10"}, keys(5, 10)},
		{[]string{"-start", "k05", "-end", "k10", "-limit", "3", "-keys-only"}, keys(5, 8)},
		{[]string{"-start", "k045", "-limit", "2", "-keys-only"}, keys(5, 7)},
		{[]string{"-end", "k03", "-keys-only"}, keys(0, 3)},
		{[]string{"-limit", "0", "-start", "k18", "-keys-only"}, keys(18, 20)},
		{[]string{"-limit", "100", "-start", "k18", "-keys-only"}, keys(18, 20)},
		{[]string{"-start", "k99", "-keys-only"}, ""},
		{[]string{"-start", "k10", "-end", "k05", "-keys-only"}, ""},
		{[]string{"-end", "", "-keys-only"}, ""},
		{[]string{"-start", "k11", "-limit", "2"}, "k11\tv11\nk12\tv12\n"},
	} {
		// FILE first and FILE last must agree.
		for _, args := range [][]string{
			append([]string{"scan", table}, tc.args...),
			append(append([]string{"scan"}, tc.args...), table),
		} {
			if got := mustSST(t, args...); got != tc.want {
				t.Errorf("sst %q:\n%s\nwant:\n%s", args, got, tc.want)
			}
		}
	}
	wantError(t, []string{"scan", table, "-limit", "-1"}, 2, "-limit")
	wantError(t, []string{"scan", table, "-limit", "x"}, 2)
	wantError(t, []string{"scan", table, "-bogus"}, 2, "bogus")
	wantError(t, []string{"scan", table, table}, 2)
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		out, errs, status := sst(t, args...)
		if status != 0 || errs != "" || out != usageText {
			t.Errorf("sst %q: status %d, stderr %q, stdout not the whole usage", args, status, errs)
		}
		for _, s := range []string{"sst build -o OUT", "sst get [-hex] FILE KEY...", "sst scan FILE", "sst info [-hex] FILE", "sst verify FILE...",
			"-block-size", "-compression", "-bits-per-key", "-start", "-end", "-prefix", "-limit", "-keys-only", "-hex"} {
			if !strings.Contains(out, s) {
				t.Errorf("sst %q: usage lacks %q", args, s)
			}
		}
	}
	// A command's -h, and help COMMAND, print that command's part alone.
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"build", "-h"}, []string{"sst build -o OUT", "sst build -split", "-block-size", "-hex"}, []string{"sst get", "sst scan", "-keys-only"}},
		{[]string{"build", "-o", "x", "-h"}, []string{"sst build -o OUT"}, []string{"sst get"}},
		{[]string{"help", "build"}, []string{"sst build -o OUT"}, []string{"sst get", "sst verify"}},
		{[]string{"get", "-h"}, []string{"sst get [-hex] FILE KEY..."}, []string{"sst build", "sst scan"}},
		{[]string{"scan", "--help"}, []string{"sst scan FILE", "-prefix", "-keys-only"}, []string{"sst get", "-block-size"}},
		{[]string{"help", "info"}, []string{"sst info [-hex] FILE"}, []string{"sst scan", "sst verify"}},
		{[]string{"verify", "-h"}, []string{"sst verify FILE..."}, []string{"sst info", "sst bench"}},
		{[]string{"bench", "-h"}, []string{"sst bench filter", "-policy"}, []string{"sst verify", "sst help"}},
		{[]string{"bench", "filter", "-h"}, []string{"sst bench filter", "-policy"}, []string{"sst verify"}},
		{[]string{"help", "help"}, []string{"sst help [COMMAND]"}, []string{"sst bench"}},
	} {
		out, errs, status := sst(t, tc.args...)
		if status != 0 || errs != "" || !strings.HasPrefix(out, "Usage:\n\n  sst ") || !strings.Contains(out, `"--" ends the flags`) {
			t.Errorf("sst %q: status %d, stderr %q, stdout %.40q...", tc.args, status, errs, out)
		}
		for _, s := range tc.want {
			if !strings.Contains(out, s) {
				t.Errorf("sst %q: usage lacks %q", tc.args, s)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(out, s) {
				t.Errorf("sst %q: usage holds %q, another command's", tc.args, s)
			}
		}
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte("k\tv\n"))
	out := filepath.Join(dir, "out.sst")
	for _, tc := range []struct {
		args []string
		sub  string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"build", input}, "-o"},
		{[]string{"build", "-o", out}, "INPUT"},
		{[]string{"build", "-o", out, input, input}, "INPUT"},
		{[]string{"build", "-o", out, "-compression", "lz4", input}, `"lz4"`},
		{[]string{"build", "-o", out, "-compression", "zstd", "-compression-level", "max", input}, `"max"`},
		{[]string{"build", "-o", out, "-filter", "cuckoo", input}, `"cuckoo"`},
		{[]string{"build", "-o", out, "-block-size", "0", input}, "-block-size"},
		{[]string{"build", "-o", out, "-bits-per-key", "0", input}, "-bits-per-key"},
		{[]string{"build", "-o", out, "-bits-per-key", "many", input}, "bits-per-key"},
		{[]string{"build", "-o", input, input}, "input"},
		{[]string{"get", out}, "KEY"},
		{[]string{"info"}, "FILE"},
		{[]string{"verify"}, "FILE"},
		{[]string{"help", "me"}, `unknown command "me"`},
		{[]string{"help", "get", "scan"}, "at most one COMMAND"},
	} {
		wantError(t, tc.args, 2, tc.sub)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt"}) {
		t.Errorf("usage errors left %q", names)
	}
	wantError(t, []string{"build", "-o", out, filepath.Join(dir, "missing")}, 1, "missing")
}

func TestParseArgsDashDash(t *testing.T) {
	table := buildText(t, "--\tdd", "-s\tds", "k\tv")
	// "--" as the value of -start is a value, not the end of the flags.
	if got := mustSST(t, "scan", table, "-start", "--", "-keys-only"); got != "--\n-s\nk\n" {
		t.Errorf("scan -start -- = %q", got)
	}
	if got := mustSST(t, "scan", "-start", "-s", "--", table); got != "-s\tds\nk\tv\n" {
		t.Errorf("scan -start -s -- FILE = %q", got)
	}
	if got := mustSST(t, "get", table, "--", "--", "-s"); got != "dd\nds\n" {
		t.Errorf("get FILE -- -- -s = %q", got)
	}
}

// TestCorruptTable flips each byte of a small table in turn: every command
// must then succeed or fail with one "sst: " line, never panic.
func TestCorruptTable(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("key%03d\t%s", i, strings.Repeat(string(rune('a'+i)), 2*i)))
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	writeFile(t, input, []byte(strings.Join(lines, "\n")))
	table := filepath.Join(dir, "t.sst")
	mustSST(t, "build", "-o", table, "-block-size", "64", input)
	if out := mustSST(t, "info", table); !regexp.MustCompile(`compression:\s+snappy`).MatchString(out) {
		t.Fatalf("info:\n%s", out)
	}
	orig, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.sst")
	failures := 0
	for off := range orig {
		data := bytes.Clone(orig)
		data[off] ^= 0x41
		writeFile(t, bad, data)
		// verify on every flipped byte; the other commands take turns, to
		// keep the test fast.
		others := [][]string{
			{"get", bad, "key007", "key017", "nokey"},
			{"info", bad},
			{"scan", bad},
		}
		for _, args := range [][]string{{"verify", bad}, others[off%len(others)]} {
			_, errs, status := sst(t, args...)
			if status == 0 && errs == "" {
				continue
			}
			if args[0] == "verify" {
				failures++
			}
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			for _, l := range lines {
				if !strings.HasPrefix(l, "sst: ") || strings.Contains(l, "internal error") {
					t.Fatalf("byte %d flipped: sst %q: status %d, stderr %q", off, args, status, errs)
				}
			}
			if len(lines) > 1 && args[0] != "get" {
				t.Fatalf("byte %d flipped: sst %q: stderr %q is not one line", off, args, errs)
			}
		}
	}
	// Every byte is covered by a checksum, the footer's included.
	if failures != len(orig) {
		t.Errorf("verify caught %d of %d flipped bytes", failures, len(orig))
	}
}

// TestBuildTableAborts checks that a build failing midway, after the
// working directory exists, leaves nothing behind.
func TestBuildTableAborts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.sst")
	for _, tc := range []struct {
		entries []buildEntry
		want    string
	}{
		{[]buildEntry{{key: []byte("a")}, {key: []byte("b"), path: filepath.Join(dir, "vanished")}}, "vanished"},
		{[]buildEntry{{key: []byte("a")}, {key: []byte("b")}, {key: []byte("b")}}, `duplicate key "b"`},
		{[]buildEntry{{key: []byte("a"), path: dir}}, "regular"},
	} {
		cfg := buildConfig{opts: &builder.Options{}, memory: 1 << 20}
		err := buildTable(out, cfg, []buildInput{{entries: tc.entries}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("buildTable: error %v, want one mentioning %q", err, tc.want)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("failed build left %q", names)
		}
	}
}

// TestBuildHashIndex builds with -hash-index and checks that the table is
// format version 2, that info shows the hash index section, and that get,
// scan and verify work on it.
// TestBuildZstdFuse builds a table with zstd blocks and the binary fuse
// filter, and reads it back through every command.
func TestBuildZstdFuse(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	var in strings.Builder
	want := map[string]string{}
	for i := range 2000 {
		k, v := fmt.Sprintf("key%05d", i), fmt.Sprintf("value %d, the square of %d, in a sentence of words", i*i, i)
		want[k] = v
		fmt.Fprintf(&in, "%s\t%s\n", k, v)
	}
	writeFile(t, input, []byte(in.String()))
	snappyTable := filepath.Join(dir, "snappy.sst")
	mustSST(t, "build", "-o", snappyTable, input)
	for _, hash := range []bool{false, true} {
		table := filepath.Join(dir, fmt.Sprint("zstd", hash, ".sst"))
		args := []string{"build", "-compression", "zstd", "-compression-level", "best", "-filter", "fuse8", "-o", table, input}
		if hash {
			args = append(args[:1], append([]string{"-hash-index"}, args[1:]...)...)
		}
		out := mustSST(t, args...)
		if !strings.Contains(out, "zstd)") || !regexp.MustCompile(`sstkit\.BinaryFuse8\.xxh64, \d+\.\d+ bits/key`).MatchString(out) {
			t.Errorf("build output:\n%s", out)
		}
		info := mustSST(t, "info", table)
		for _, re := range []string{`(?m)^\s*compression:\s+zstd$`, `(?m)^\s*filter policy:\s+sstkit\.BinaryFuse8\.xxh64$`} {
			if !regexp.MustCompile(re).MatchString(info) {
				t.Errorf("info does not match %s:\n%s", re, info)
			}
		}
		for _, k := range []string{"key00000", "key01234", "key01999"} {
			if got := mustSST(t, "get", table, k); got != want[k] {
				t.Errorf("get %q = %q, want %q", k, got, want[k])
			}
		}
		wantError(t, []string{"get", table, "key99999"}, 1, "key99999")
		if a, b := mustSST(t, "scan", table), mustSST(t, "scan", snappyTable); a != b {
			t.Errorf("zstd and snappy tables scan differently")
		}
		mustSST(t, "verify", table)
		zs, _ := os.Stat(table)
		ss, _ := os.Stat(snappyTable)
		if zs.Size() >= ss.Size() {
			t.Errorf("zstd table %d bytes, snappy %d", zs.Size(), ss.Size())
		}
	}
}

// TestBuildMinLZAndDict builds with -compression minlz and with
// -compression zstd -dict 2KiB (also split into several tables), and
// reads the tables back through every command; -dict without zstd, or
// of a bad size, is a usage error.
func TestBuildMinLZAndDict(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	var in strings.Builder
	want := map[string]string{}
	for i := range 3000 {
		k, v := fmt.Sprintf("key%05d", i), fmt.Sprintf("Package: pkg%d\\nVersion: %d.%d-%d\\nArchitecture: amd64\\nMaintainer: Team %d <team%d@lists.example.org>\\nInstalled-Size: %d\\nDepends: libc6 (>= 2.%d), libfoo%d\\nDescription: tool number %d for doing things",
			i, i%7, i%13, i%3, i%50, i%50, i*37%10000, i%40, i%9, i)
		want[k] = v
		fmt.Fprintf(&in, "%s\t%s\n", k, v)
	}
	writeFile(t, input, []byte(in.String()))
	snappyTable := filepath.Join(dir, "snappy.sst")
	mustSST(t, "build", "-o", snappyTable, input)
	zstdTable := filepath.Join(dir, "zstd.sst")
	mustSST(t, "build", "-compression", "zstd", "-o", zstdTable, input)
	for _, c := range []struct {
		name, info string
		args       []string
	}{
		{"minlz", `(?m)^\s*compression:\s+minlz$`, []string{"-compression", "minlz"}},
		{"minlz-best", `(?m)^\s*compression:\s+minlz$`, []string{"-compression", "minlz", "-compression-level", "best"}},
		{"dict", `(?m)^\s*dictionary:\s+\d+ bytes$`, []string{"-compression", "zstd", "-dict", "2KiB"}},
	} {
		table := filepath.Join(dir, c.name+".sst")
		mustSST(t, append(append([]string{"build"}, c.args...), "-o", table, input)...)
		if info := mustSST(t, "info", table); !regexp.MustCompile(c.info).MatchString(info) {
			t.Errorf("%s: info does not match %s:\n%s", c.name, c.info, info)
		}
		for _, k := range []string{"key00000", "key01234", "key02999"} {
			if got := mustSST(t, "get", table, k); got != want[k] {
				t.Errorf("%s: get %q = %q, want %q", c.name, k, got, want[k])
			}
		}
		if a, b := mustSST(t, "scan", table), mustSST(t, "scan", snappyTable); a != b {
			t.Errorf("%s and snappy tables scan differently", c.name)
		}
		mustSST(t, "verify", table)
		ts, _ := os.Stat(table)
		ref := snappyTable
		if c.name == "dict" {
			ref = zstdTable
		}
		rs, _ := os.Stat(ref)
		if ts.Size() >= rs.Size() {
			t.Errorf("%s table %d bytes, %s %d", c.name, ts.Size(), ref, rs.Size())
		}
	}
	split := filepath.Join(dir, "split")
	mustSST(t, "build", "-compression", "zstd", "-dict", "1KiB", "-split", "64KiB", "-o", split, input)
	wantError(t, []string{"build", "-dict", "16KiB", "-o", filepath.Join(dir, "x.sst"), input}, 2, "-dict applies to zstd only")
	wantError(t, []string{"build", "-compression", "zstd", "-dict", "1MiB", "-o", filepath.Join(dir, "x.sst"), input}, 2, "-dict")
	wantError(t, []string{"build", "-compression", "zstd", "-dict", "100", "-o", filepath.Join(dir, "x.sst"), input}, 1, "DictionarySize")
}

func TestBuildHashIndex(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	var in strings.Builder
	want := map[string]string{}
	for i := range 500 {
		k, v := fmt.Sprintf("key%04d", i), fmt.Sprintf("value %d", i*i)
		want[k] = v
		fmt.Fprintf(&in, "%s\t%s\n", k, v)
	}
	writeFile(t, input, []byte(in.String()))
	table := filepath.Join(dir, "hash.sst")
	mustSST(t, "build", "-hash-index", "-block-size", "256", "-o", table, input)
	info := mustSST(t, "info", table)
	for _, re := range []string{`(?m)^\s*format version:\s+2$`, `(?m)^\s*hash index\s+\d+\s+\d+\s+\d+$`, `(?m)^\s*hash index size:\s+[1-9]\d*$`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info does not match %s:\n%s", re, info)
		}
	}
	for _, k := range []string{"key0000", "key0137", "key0499"} {
		if got := mustSST(t, "get", table, k); got != want[k] {
			t.Errorf("get %q = %q, want %q", k, got, want[k])
		}
	}
	wantError(t, []string{"get", table, "key0500"}, 1, "key0500")
	if n := strings.Count(mustSST(t, "scan", table), "\n"); n != 500 {
		t.Errorf("scan printed %d lines, want 500", n)
	}
	mustSST(t, "verify", table)

	plain := filepath.Join(dir, "plain.sst")
	mustSST(t, "build", "-block-size", "256", "-format-version", "1", "-o", plain, input)
	if info := mustSST(t, "info", plain); !regexp.MustCompile(`(?m)^\s*format version:\s+1$`).MatchString(info) || strings.Contains(info, "hash index  ") {
		t.Errorf("info with -format-version 1:\n%s", info)
	}
	// By default, version 4 with its compact hash index.
	v4 := filepath.Join(dir, "v4.sst")
	mustSST(t, "build", "-block-size", "256", "-o", v4, input)
	info = mustSST(t, "info", v4)
	for _, re := range []string{`(?m)^\s*format version:\s+4$`, `(?m)^\s*hash index\s+\d+\s+\d+\s+\d+$`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("default build: info does not match %s:\n%s", re, info)
		}
	}
	for _, k := range []string{"key0000", "key0137", "key0499"} {
		if got := mustSST(t, "get", v4, k); got != want[k] {
			t.Errorf("get %q = %q, want %q", k, got, want[k])
		}
	}
	mustSST(t, "verify", v4)
	wantError(t, []string{"build", "-hash-index", "-format-version", "4", "-o", filepath.Join(dir, "x.sst"), input}, 2, "format version 2 or 3")
	wantError(t, []string{"build", "-format-version", "5", "-o", filepath.Join(dir, "x.sst"), input}, 2, "out of range")
}
