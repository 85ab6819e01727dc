package main

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestQuoteBytes(t *testing.T) {
	for in, want := range map[string]string{
		"":                    `""`,
		"plain key/1":         `"plain key/1"`,
		"é":                   `"\xc3\xa9"`,
		"\x00\xff\t\n\x7f":    `"\x00\xff\x09\x0a\x7f"`,
		`quote " backslash \`: `"quote \" backslash \\"`,
	} {
		got := quoteBytes([]byte(in))
		if got != want {
			t.Errorf("quoteBytes(%q) = %s, want %s", in, got, want)
		}
		if back, err := strconv.Unquote(got); err != nil || back != in {
			t.Errorf("strconv.Unquote(%s) = %q, %v; want %q", got, back, err, in)
		}
	}
}

// binaryEntries are keys and values no text line can carry.
var binaryEntries = [][2]string{
	{"", "value of the empty key"},
	{"\x00", "nul key"},
	{"a\tb", "key with a tab"},
	{"a\nb", "value\nwith\tboth"},
	{"k\x00z", ""},
	{"\xff\xfe", "\x00\x01"},
}

// buildHex builds a table with -hex from entries and returns its path.
func buildHex(t *testing.T, entries [][2]string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	var in strings.Builder
	for i, e := range entries {
		k, v := hex.EncodeToString([]byte(e[0])), hex.EncodeToString([]byte(e[1]))
		if i%2 == 1 {
			k = strings.ToUpper(k) // either case
		}
		fmt.Fprintf(&in, "%s\t%s\r\n", k, v)
	}
	input := filepath.Join(dir, "in.hex")
	writeFile(t, input, []byte(in.String()))
	table := filepath.Join(dir, "t.sst")
	mustSST(t, append(append([]string{"build", "-hex", "-o", table}, extra...), input)...)
	return table
}

func TestHex(t *testing.T) {
	table := buildHex(t, binaryEntries)
	sorted := slices.Clone(binaryEntries)
	slices.SortFunc(sorted, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	hx := func(s string) string { return hex.EncodeToString([]byte(s)) }

	// get: hex keys in, hex values out, one a line.
	for _, e := range binaryEntries {
		if got, want := mustSST(t, "get", "-hex", table, hx(e[0])), hx(e[1])+"\n"; got != want {
			t.Errorf("get -hex %s = %q, want %q", hx(e[0]), got, want)
		}
	}
	if got, want := mustSST(t, "get", table, "-hex", "00", "6B007A"), hx("nul key")+"\n\n"; got != want {
		t.Errorf("get -hex of two keys = %q, want %q", got, want)
	}
	out, errs, status := sst(t, "get", "-hex", table, "00", "0000")
	if status != 1 || out != hx("nul key")+"\n-\n" || errs != "sst: get: "+table+": key \"0000\" not found\n" {
		t.Errorf("get -hex with an absent key: status %d, stdout %q, stderr %q", status, out, errs)
	}

	// scan: hexkey TAB hexvalue, in key order; bounds in hex.
	var want, wantKeys strings.Builder
	for _, e := range sorted {
		fmt.Fprintf(&want, "%s\t%s\n", hx(e[0]), hx(e[1]))
		fmt.Fprintf(&wantKeys, "%s\n", hx(e[0]))
	}
	if got := mustSST(t, "scan", "-hex", table); got != want.String() {
		t.Errorf("scan -hex:\n%s\nwant:\n%s", got, want.String())
	}
	if got := mustSST(t, "scan", "-hex", "-keys-only", table); got != wantKeys.String() {
		t.Errorf("scan -hex -keys-only:\n%s\nwant:\n%s", got, wantKeys.String())
	}
	if got, want := mustSST(t, "scan", "-hex", "-start", "00", "-end", "6109", "-keys-only", table), "00\n"; got != want {
		t.Errorf("scan -hex -start 00 -end 6109 = %q, want %q", got, want)
	}

	// info: the smallest and largest keys in hex, or byte by byte quoted.
	info := mustSST(t, "info", "-hex", table)
	for _, re := range []string{`(?m)^  smallest key:       $`, `(?m)^  largest key:        fffe$`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info -hex does not match %s:\n%s", re, info)
		}
	}
	info = mustSST(t, "info", table)
	if !strings.Contains(info, "\n  smallest key:       \"\"\n  largest key:        \"\\xff\\xfe\"\n") {
		t.Errorf("info keys:\n%s", info)
	}

	// Bad hex on the command line: usage errors that say what is wrong.
	wantError(t, []string{"get", "-hex", table, "0g"}, 2, `bad KEY "0g"`, `"g" is not a hex digit`)
	wantError(t, []string{"get", "-hex", table, "abc"}, 2, `bad KEY "abc"`, "odd number of hex digits")
	wantError(t, []string{"scan", "-hex", "-start", "x", table}, 2, `bad -start "x"`)
	wantError(t, []string{"scan", "-hex", "-end", "0", table}, 2, `bad -end "0"`)
	wantError(t, []string{"scan", "-hex", "-prefix", "zz", table}, 2, `bad -prefix "zz"`)
}

func TestBuildHexErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.sst")
	bad := filepath.Join(dir, "bad.hex")
	writeFile(t, bad, []byte("6b\t76\n6c\tno\n"))
	wantError(t, []string{"build", "-hex", "-o", out, bad}, 1, bad+`:2: -hex: bad value "no"`, `"n" is not a hex digit`)
	writeFile(t, bad, []byte("6b\t76\n6\t76\n"))
	wantError(t, []string{"build", "-hex", "-o", out, bad}, 1, bad+`:2: -hex: bad key "6"`, "odd number")
	dup := filepath.Join(dir, "dup.hex")
	writeFile(t, dup, []byte("00ff\t01\n6b\n00FF\t02\n"))
	wantError(t, []string{"build", "-hex", "-o", out, dup}, 1, dup+`: duplicate key "00ff" (lines 1 and 3)`)
	wantError(t, []string{"build", "-hex", "-o", out, dir}, 2, "-hex reads text input", dir+" is a directory")
	if names := dirNames(t, dir); !slices.Equal(names, []string{"bad.hex", "dup.hex"}) {
		t.Errorf("failed builds left %q", names)
	}
	// -split lists each table's key range in hex.
	good := filepath.Join(dir, "good.hex")
	writeFile(t, good, []byte("6b\n00ff\t01\n"))
	got := mustSST(t, "build", "-hex", "-split", "1MiB", "-o", filepath.Join(dir, "split"), good)
	if !strings.Contains(got, `  000001.sst  2 entries  `) || !strings.Contains(got, `  "00ff" .. "6b"`) {
		t.Errorf("build -hex -split output:\n%s", got)
	}
}
