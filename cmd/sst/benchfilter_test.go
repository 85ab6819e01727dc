package main

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchRows runs args, which must succeed, and returns the FPR column of
// its markdown table, in percent, keyed by "policy distribution".
func benchRows(t *testing.T, args ...string) map[string]float64 {
	t.Helper()
	out, errs, status := sst(t, args...)
	if status != 0 {
		t.Fatalf("sst %q: status %d, stderr %q", args, status, errs)
	}
	// A slow machine may cross the one-second progress threshold.
	for _, l := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "bench filter: ") {
			t.Errorf("sst %q: unexpected stderr line %q", args, l)
		}
	}
	var table []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		}
	}
	if len(table) < 2 {
		t.Fatalf("sst %q: no markdown table in\n%s", args, out)
	}
	cells := func(l string) []string {
		c := strings.Split(strings.Trim(l, "|"), "|")
		for i := range c {
			c[i] = strings.TrimSpace(c[i])
		}
		return c
	}
	head := cells(table[0])
	want := []string{"policy", "bits/key", "k", "distribution", "FPR %", "theory %", "measured/theory", "bytes/key", "ns/probe", "ns/key build"}
	if strings.Join(head, ",") != strings.Join(want, ",") {
		t.Fatalf("header %q, want %q", head, want)
	}
	if strings.Trim(table[1], "|-: ") != "" {
		t.Errorf("second line %q is not a markdown separator row", table[1])
	}
	rows := make(map[string]float64)
	for _, l := range table[2:] {
		c := cells(l)
		if len(c) != len(want) {
			t.Fatalf("row %q has %d cells, want %d", l, len(c), len(want))
		}
		for _, i := range []int{1, 2, 4, 5, 6, 7, 8, 9} {
			if _, err := strconv.ParseFloat(c[i], 64); err != nil {
				t.Errorf("row %q: %s %q is not a number", l, want[i], c[i])
			}
		}
		fpr, _ := strconv.ParseFloat(c[4], 64)
		rows[c[0]+" "+c[3]] = fpr
	}
	if len(rows) != len(table)-2 {
		t.Errorf("duplicate rows in\n%s", out)
	}
	return rows
}

func TestBenchFilter(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "fpr.svg")
	rows := benchRows(t, "bench", "filter", "-keys", "20000", "-bits", "10", "-plot", svg)
	dists := []string{"random16", "decimal", "prefix12", "prefix100", "seq64"}
	if len(rows) != 3*len(dists) {
		t.Errorf("got %d rows, want %d: %v", len(rows), 3*len(dists), rows)
	}
	for _, d := range dists {
		for _, p := range []string{"bloom", "leveldb", "fuse8"} {
			if _, ok := rows[p+" "+d]; !ok {
				t.Errorf("no row for %s %s", p, d)
			}
		}
		// Theory: 0.96% at 10 bits per key.
		if fpr := rows["bloom "+d]; fpr >= 2 {
			t.Errorf("bloom %s: FPR %.4f%%, want < 2%%", d, fpr)
		}
		// BinaryFuse8: 2^-8 = 0.39%; 20000 probes give a standard
		// deviation of 0.044%.
		if fpr := rows["fuse8 "+d]; fpr >= 0.6 {
			t.Errorf("fuse8 %s: FPR %.4f%%, want < 0.6%%", d, fpr)
		}
	}

	// LevelDB's hash has no final avalanche, so decimal keys differing in
	// their last digits probe correlated bits. Below about 50,000 keys the
	// effect is hidden (1.1% at 20,000); it is 8% at 50,000, 12% at
	// 100,000 and 14% at 10^6 keys, against about 1% for Bloom.
	rows = benchRows(t, "bench", "filter", "-keys", "100000", "-bits", "10", "-dist", "decimal")
	if bl, ldb := rows["bloom decimal"], rows["leveldb decimal"]; bl >= 2 || ldb < 5*bl {
		t.Errorf("decimal at 100000 keys: bloom %.4f%%, leveldb %.4f%%; want bloom < 2%% and leveldb > 5x bloom", bl, ldb)
	}

	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	lines := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse as XML: %v", svg, err)
		}
		if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "polyline" || se.Name.Local == "path") {
			lines++
		}
	}
	// A measured line per policy and distribution, a theory line per policy.
	if want := 3*len(dists) + 3; lines != want {
		t.Errorf("%s has %d lines, want %d", svg, lines, want)
	}
	for _, name := range []string{"bloom random16", "leveldb seq64", "bloom theory", "leveldb theory", "fuse8 decimal", "fuse8 theory", "bits per key"} {
		if !bytes.Contains(data, []byte(">"+name+"<")) {
			t.Errorf("%s lacks the text %q", svg, name)
		}
	}
}

func TestBenchFilterUsage(t *testing.T) {
	out, errs, status := sst(t, "bench", "filter", "-h")
	if status != 0 || errs != "" || !strings.Contains(out, "sst bench filter") {
		t.Errorf("bench filter -h: status %d, stderr %q, usage lacks \"sst bench filter\"", status, errs)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		sub  string
	}{
		{[]string{"bench"}, "filter"},
		{[]string{"bench", "sort"}, `"sort"`},
		{[]string{"bench", "filter", "-bits", "x"}, "-bits"},
		{[]string{"bench", "filter", "-bits", "10,0"}, "-bits"},
		{[]string{"bench", "filter", "-bits", "10,10"}, "duplicate"},
		{[]string{"bench", "filter", "-keys", "0"}, "-keys"},
		{[]string{"bench", "filter", "-keys", "many"}, "keys"},
		{[]string{"bench", "filter", "-policy", "cuckoo"}, `"cuckoo"`},
		{[]string{"bench", "filter", "-dist", "decimal,"}, "-dist"},
		{[]string{"bench", "filter", "-plot", filepath.Join(dir, "fpr.gif")}, "-plot"},
		{[]string{"bench", "filter", "extra"}, `"extra"`},
	} {
		wantError(t, tc.args, 2, tc.sub)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("usage errors left %q", names)
	}
}

// TestBenchKeys checks the key distributions against their definitions.
func TestBenchKeys(t *testing.T) {
	dist := func(name string) keyDist {
		for _, d := range benchDists {
			if d.name == name {
				return d
			}
		}
		t.Fatalf("no distribution %q", name)
		return keyDist{}
	}
	for _, i := range []int{0, 1, 7, 12345, 49_999_999} {
		for _, probe := range []bool{false, true} {
			n := 2*i + b2i(probe)
			be4 := binary.BigEndian.AppendUint32(nil, uint32(n))
			for name, want := range map[string][]byte{
				"decimal":   fmt.Appendf(nil, "%016d", n),
				"prefix12":  append(append([]byte(nil), prefix12...), be4...),
				"prefix100": append(append([]byte(nil), prefix100...), be4...),
				"seq64":     binary.BigEndian.AppendUint64(nil, uint64(n)),
			} {
				if got := dist(name).stream(probe)([]byte("x"), i); !bytes.Equal(got, append([]byte("x"), want...)) {
					t.Errorf("%s key %d (probe %v) = %q, want x%q", name, i, probe, got, want)
				}
			}
		}
	}
	if len(prefix12) != 12 || len(prefix100) != 100 {
		t.Errorf("prefixes are %d and %d bytes, want 12 and 100", len(prefix12), len(prefix100))
	}
	var set, probes keyBatch
	set.fill(dist("random16").stream(false), 0, 100)
	probes.fill(dist("random16").stream(true), 0, 100)
	if len(set.buf) != 1600 || bytes.Equal(set.buf, probes.buf) {
		t.Errorf("random16: %d bytes for 100 keys, probes equal to keys: %v", len(set.buf), bytes.Equal(set.buf, probes.buf))
	}
}

// TestBenchNoAlloc checks that generating a batch of keys and probing it
// allocate nothing once the batch buffers have grown.
func TestBenchNoAlloc(t *testing.T) {
	for _, bp := range benchPolicies {
		for _, d := range benchDists {
			var b keyBatch
			p := bp.new(10)
			filter, _, _, _ := measureFilter(p, d, 1000, &b)
			next := d.stream(true)
			b.fill(next, 0, benchBatch)
			if n := testing.AllocsPerRun(5, func() { b.fill(next, 0, benchBatch) }); n != 0 {
				t.Errorf("%s %s: fill allocates %v times", bp.name, d.name, n)
			}
			if n := testing.AllocsPerRun(5, func() { probeBatch(p, filter, &b) }); n != 0 {
				t.Errorf("%s %s: probeBatch allocates %v times", bp.name, d.name, n)
			}
		}
	}
}

// TestBenchFilterPNG checks the PNG plumbing with a stand-in rsvg-convert
// that copies its input, and the error when no converter is found.
func TestBenchFilterPNG(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a shell script in PATH")
	}
	cp, err := exec.LookPath("cp")
	if err != nil {
		t.Skip(err)
	}
	bin, dir := t.TempDir(), t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n# rsvg-convert -f png -o OUT IN\nexec %s \"$5\" \"$4\"\n", cp)
	writeFile(t, filepath.Join(bin, "rsvg-convert"), []byte(script))
	if err := os.Chmod(filepath.Join(bin, "rsvg-convert"), 0o755); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "fpr.png")
	t.Setenv("PATH", bin)
	benchRows(t, "bench", "filter", "-keys", "1000", "-bits", "10", "-dist", "seq64", "-plot", png)
	if data, err := os.ReadFile(png); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("stand-in converter did not receive the SVG plot: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	os.Remove(png)
	wantError(t, []string{"bench", "filter", "-keys", "1000", "-plot", png}, 1, "rsvg-convert", ".svg")
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("failed PNG run left %q", names)
	}
}
