package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// writeTable writes a table at path with the entries (key, value), given
// in key order, and the spans (start, end, value), in start order.
func writeTable(t *testing.T, path string, entries [][2]string, spans [][3]string) string {
	t.Helper()
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	for _, e := range entries {
		if err := b.Add([]byte(e[0]), []byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range spans {
		if err := b.AddSpan([]byte(s[0]), []byte(s[1]), []byte(s[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The values that delete in mergeTables' tables: a point value beginning
// with 0x00 (-tombstone 00), a span value beginning with 0x01
// (-range-tombstone 01); a span value beginning with 0x02 is a range key.
const (
	tombstoneHex = "00"
	rangeDelHex  = "01"
)

// mergeTables writes three tables with overlapping keys, newest first: a
// point deletion in the newest and the middle one, a range deletion in
// the newest, a range key in the middle one.
func mergeTables(t *testing.T) (t1, t2, t3 string) {
	dir := t.TempDir()
	t1 = writeTable(t, filepath.Join(dir, "t1.sst"),
		[][2]string{{"a", "a1"}, {"c", "\x00"}, {"f", "f1"}, {"g", "g1"}},
		[][3]string{{"e", "g", "\x01del"}}) // hides e, ee and f of t2 and t3, not t1's f
	t2 = writeTable(t, filepath.Join(dir, "t2.sst"),
		[][2]string{{"b", "b2"}, {"d", "\x00"}, {"h", "h2"}},
		[][3]string{{"j", "l", "\x02rangekey"}}) // deletes k3 only when every span deletes
	t3 = writeTable(t, filepath.Join(dir, "t3.sst"),
		[][2]string{{"-x", "-x3"}, {"a", "a3"}, {"b", "b3"}, {"c", "c3"}, {"d", "d3"}, {"e", "e3"}, {"ee", "ee3"}, {"f", "f3"}, {"h", "h3"}, {"k", "k3"}},
		nil)
	return t1, t2, t3
}

// lines joins "key<TAB>value" lines, each ended by a newline.
func lines(ls ...string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// The view of mergeTables' tables under -tombstone 00 -range-tombstone 01.
var mergedView = []string{"-x\t-x3", "a\ta1", "b\tb2", "f\tf1", "g\tg1", "h\th2", "k\tk3"}

func TestScanMerge(t *testing.T) {
	t1, t2, t3 := mergeTables(t)
	dels := []string{"-tombstone", tombstoneHex, "-range-tombstone", rangeDelHex}
	scan := func(args ...string) string {
		t.Helper()
		return mustSST(t, append([]string{"scan", "-merge"}, args...)...)
	}
	if got, want := scan(append(dels, t1, t2, t3)...), lines(mergedView...); got != want {
		t.Errorf("scan -merge:\n%s\nwant:\n%s", got, want)
	}
	// Flags after the FILEs work too.
	if got, want := scan(append([]string{t1, t2, t3}, dels...)...), lines(mergedView...); got != want {
		t.Errorf("scan -merge FILE... flags:\n%s\nwant:\n%s", got, want)
	}
	// Every span a range deletion (the default): the range key hides k.
	if got, want := scan("-tombstone", "00", t1, t2, t3), lines("-x\t-x3", "a\ta1", "b\tb2", "f\tf1", "g\tg1", "h\th2"); got != want {
		t.Errorf("scan -merge -tombstone 00:\n%s\nwant:\n%s", got, want)
	}
	// No -tombstone: no value deletes, and the deletions are values.
	if got, want := scan("-range-tombstone", "01", t1, t2, t3), lines("-x\t-x3", "a\ta1", "b\tb2", "c\t\x00", "d\t\x00", "f\tf1", "g\tg1", "h\th2", "k\tk3"); got != want {
		t.Errorf("scan -merge without -tombstone:\n%q\nwant:\n%q", got, want)
	}
	// Repeated prefixes: either deletes; the empty prefix matches every span.
	if got, want := scan("-tombstone", "00", "-tombstone", "6232", "-range-tombstone", "", t1, t2, t3), lines("-x\t-x3", "a\ta1", "f\tf1", "g\tg1", "h\th2"); got != want {
		t.Errorf("scan -merge, two tombstone prefixes:\n%s\nwant:\n%s", got, want)
	}
	// The order of the FILEs is the order of the levels: oldest first,
	// t3's values win and t1's range deletion hides nothing older.
	if got, want := scan(append(dels, t3, t2, t1)...), lines("-x\t-x3", "a\ta3", "b\tb3", "c\tc3", "d\td3", "e\te3", "ee\tee3", "f\tf3", "g\tg1", "h\th3", "k\tk3"); got != want {
		t.Errorf("scan -merge oldest first:\n%s\nwant:\n%s", got, want)
	}

	// -hex: hexkey TAB hexvalue, and hex bounds.
	var hexView []string
	for _, l := range mergedView {
		k, v, _ := strings.Cut(l, "\t")
		hexView = append(hexView, hex.EncodeToString([]byte(k))+"\t"+hex.EncodeToString([]byte(v)))
	}
	if got, want := scan(append(dels, "-hex", t1, t2, t3)...), lines(hexView...); got != want {
		t.Errorf("scan -merge -hex:\n%s\nwant:\n%s", got, want)
	}
	if got, want := scan(append(dels, "-hex", "-start", "62", "-end", "68", t1, t2, t3)...), lines(hexView[2:5]...); got != want {
		t.Errorf("scan -merge -hex -start 62 -end 68:\n%s\nwant:\n%s", got, want)
	}

	// The bounds flags, as for one table.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-start", "c"}, lines(mergedView[3:]...)},
		{[]string{"-start", "c", "-end", "h"}, lines(mergedView[3:5]...)},
		{[]string{"-end", ""}, ""},
		{[]string{"-prefix", "g"}, lines("g\tg1")},
		{[]string{"-prefix", "e"}, ""},
		{[]string{"-limit", "2"}, lines(mergedView[:2]...)},
		{[]string{"-keys-only", "-start", "f", "-limit", "3"}, lines("f", "g", "h")},
	} {
		args := append(append(slices.Clone(dels), tc.args...), t1, t2, t3)
		if got := scan(args...); got != tc.want {
			t.Errorf("scan -merge %q:\n%s\nwant:\n%s", args, got, tc.want)
		}
	}

	// One table, merged: the same lines as the plain scan, but for its
	// deletions.
	if got, want := scan(t3), mustSST(t, "scan", t3); got != want {
		t.Errorf("scan -merge of one table:\n%s\nwant, as scan:\n%s", got, want)
	}
	if got, want := scan("-tombstone", "00", t2), lines("b\tb2", "h\th2"); got != want {
		t.Errorf("scan -merge -tombstone 00 of one table:\n%s\nwant:\n%s", got, want)
	}
}

func TestGetMerge(t *testing.T) {
	t1, t2, t3 := mergeTables(t)
	get := func(args ...string) (string, string, int) {
		t.Helper()
		return sst(t, append([]string{"get", "-merge", "-tombstone", tombstoneHex, "-range-tombstone", rangeDelHex}, args...)...)
	}
	// One KEY: its bytes alone; several: each on a line.
	if out, errs, status := get(t1, t2, t3, "--", "b"); out != "b2" || errs != "" || status != 0 {
		t.Errorf("get -merge -- b: %q, %q, status %d", out, errs, status)
	}
	out, errs, status := get(t1, t2, t3, "--", "a", "b", "f", "h", "k", "-x")
	if want := "a1\nb2\nf1\nh2\nk3\n-x3\n"; out != want || errs != "" || status != 0 {
		t.Errorf("get -merge of present keys: %q, %q, status %d; want %q", out, errs, status, want)
	}
	// Deleted keys (point deletion, newer range deletion) and absent ones
	// are reported as a single table's absent keys are.
	files := t1 + ", " + t2 + ", " + t3
	out, errs, status = get(t1, t2, t3, "--", "a", "c", "d", "e", "ee", "zz", "g")
	wantErrs := `sst: get: key "c" not found in ` + files + "\n" +
		`sst: get: key "d" not found in ` + files + "\n" +
		`sst: get: key "e" not found in ` + files + "\n" +
		`sst: get: key "ee" not found in ` + files + "\n" +
		`sst: get: key "zz" not found in ` + files + "\n"
	if out != "a1\ng1\n" || errs != wantErrs || status != 1 {
		t.Errorf("get -merge with absent keys: stdout %q, status %d, stderr\n%s\nwant:\n%s", out, status, errs, wantErrs)
	}
	// Every span a range deletion: k is deleted.
	if _, errs, status := sst(t, "get", "-merge", t1, t2, t3, "--", "k"); status != 1 || !strings.Contains(errs, `key "k" not found`) {
		t.Errorf("get -merge -- k, every span deleting: status %d, stderr %q", status, errs)
	}
	// -hex: hex KEYs, hex values on lines of their own, one line per KEY:
	// "-" for an absent or deleted one.
	out, errs, status = get("-hex", t1, t2, t3, "--", "61", "63", "2d78", "7a7a")
	if out != "6131\n-\n2d7833\n-\n" || status != 1 || errs != `sst: get: key "63" not found in `+files+"\n"+`sst: get: key "7a7a" not found in `+files+"\n" {
		t.Errorf("get -merge -hex: stdout %q, stderr %q, status %d", out, errs, status)
	}
}

func TestVerifyMerge(t *testing.T) {
	t1, t2, t3 := mergeTables(t)
	want := t1 + ": ok: 4 entries, 1 data blocks\n" + t2 + ": ok: 3 entries, 1 data blocks\n" + t3 + ": ok: 10 entries, 1 data blocks\n"
	if got := mustSST(t, "verify", "-merge", "-tombstone", "00", "-range-tombstone", "01", t1, t2, t3); got != want+"merged view: ok: 7 entries (of 17 in 3 tables)\n" {
		t.Errorf("verify -merge:\n%s", got)
	}
	if got := mustSST(t, "verify", "-merge", t1, t2, t3); got != want+"merged view: ok: 8 entries (of 17 in 3 tables)\n" {
		t.Errorf("verify -merge, no deletions:\n%s", got)
	}
	// One FILE: named too, before the view's line.
	if got, want := mustSST(t, "verify", "-merge", t3), t3+": ok: 10 entries, 1 data blocks\nmerged view: ok: 10 entries (of 10 in 1 tables)\n"; got != want {
		t.Errorf("verify -merge of one table:\n%s\nwant:\n%s", got, want)
	}

	// A damaged table: the others are still checked, the view is not
	// read, and the exit status is 1.
	data, err := os.ReadFile(t2)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1 // in the first data block
	bad := filepath.Join(t.TempDir(), "bad.sst")
	writeFile(t, bad, data)
	out, errs, status := sst(t, "verify", "-merge", t1, bad, t3)
	if status != 1 || out != t1+": ok: 4 entries, 1 data blocks\n"+t3+": ok: 10 entries, 1 data blocks\n" {
		t.Errorf("verify -merge with a damaged table: status %d, stdout\n%s", status, out)
	}
	errLines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(errLines) != 3 || !strings.HasPrefix(errLines[0], "sst: verify: "+bad+": corrupt") ||
		errLines[1] != "sst: verify: 1 of 3 files failed" || !strings.Contains(errLines[2], "merged view not read") {
		t.Errorf("verify -merge with a damaged table: stderr\n%s", errs)
	}
}

// manifestTables returns the tables a compaction wrote into dir, in key
// order, as its manifest lists them.
func manifestTables(t *testing.T, dir string) []string {
	t.Helper()
	m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, ti := range m.Tables {
		paths = append(paths, ti.Path)
	}
	return paths
}

func TestCompact(t *testing.T) {
	t1, t2, t3 := mergeTables(t)
	dels := []string{"-tombstone", tombstoneHex, "-range-tombstone", rangeDelHex}
	view := lines(mergedView...)

	// To the bottom, in tables of any size: the output holds the view's
	// entries and nothing else, and reads back as the view, merged or not.
	for _, split := range []string{"", "1", "1KiB", "64MiB"} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append([]string{"compact", "-o", out, "-bottom"}, dels...), t1, t2, t3)
		if split != "" {
			args = append(args, "-split", split)
		}
		report := mustSST(t, args...)
		tables := manifestTables(t, out)
		if split == "1" && len(tables) != len(mergedView) {
			t.Errorf("compact -split 1 wrote %d tables, want one per key (%d)", len(tables), len(mergedView))
		}
		if split != "1" && len(tables) != 1 {
			t.Errorf("compact -split %q wrote %d tables, want 1", split, len(tables))
		}
		for _, re := range []string{
			`^wrote \d+ tables to ` + regexp.QuoteMeta(out+" ("+filepath.Join(out, bulk.ManifestName)+")") + "\n",
			`(?m)^tables in:\s+3 \(17 entries, `,
			`(?m)^entries:\s+7$`,
			`(?m)^  000001\.sst  \d+ entries.*  "-x" \.\. "`,
			`(?m)^elapsed:\s+`,
		} {
			if !regexp.MustCompile(re).MatchString(report) {
				t.Errorf("compact -split %q: report does not match %s:\n%s", split, re, report)
			}
		}
		var raw strings.Builder
		for _, tb := range tables {
			raw.WriteString(mustSST(t, "scan", tb))
		}
		if raw.String() != view {
			t.Errorf("compact -bottom -split %q: the tables hold\n%s\nwant the view:\n%s", split, raw.String(), view)
		}
		if got := mustSST(t, append(append([]string{"scan", "-merge"}, dels...), tables...)...); got != view {
			t.Errorf("compact -bottom -split %q: merged scan of the output:\n%s\nwant:\n%s", split, got, view)
		}
		// The range key is data: kept; the range deletion is dropped.
		var spans strings.Builder
		for _, tb := range tables {
			spans.WriteString(mustSST(t, "scan", "-spans", tb))
		}
		want := "j\tl\t\x02rangekey\n"
		if split == "1" { // clipped at k, the first key of the next table
			want = "j\tk\t\x02rangekey\nk\tl\t\x02rangekey\n"
		}
		if got := spans.String(); got != want {
			t.Errorf("compact -bottom -split %q: spans %q, want %q", split, got, want)
		}
	}

	// Not to the bottom: the newest deletions and the range deletion are
	// kept, so that the output of t1 and t2 over t3 reads as all three.
	for _, split := range []string{"", "1"} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append([]string{"compact", "-o", out}, dels...), t1, t2)
		if split != "" {
			args = append(args, "-split", split)
		}
		mustSST(t, args...)
		tables := manifestTables(t, out)
		got := mustSST(t, append(append(append([]string{"scan", "-merge"}, dels...), tables...), t3)...)
		if got != view {
			t.Errorf("compact -split %q of t1, t2: merged scan of the output over t3:\n%s\nwant:\n%s", split, got, view)
		}
		var raw strings.Builder
		for _, tb := range tables {
			raw.WriteString(mustSST(t, "scan", tb))
		}
		if want := lines("a\ta1", "b\tb2", "c\t\x00", "d\t\x00", "f\tf1", "g\tg1", "h\th2"); raw.String() != want {
			t.Errorf("compact -split %q of t1, t2: the tables hold\n%q\nwant\n%q", split, raw.String(), want)
		}
	}
	// Of all three, not to the bottom: the merged scan of the output is
	// the view of the input.
	out := filepath.Join(t.TempDir(), "out")
	mustSST(t, append(append([]string{"compact", "-o", out, "-compression", "zstd", "-block-size", "64"}, dels...), t1, t2, t3)...)
	if got := mustSST(t, append(append([]string{"scan", "-merge"}, dels...), manifestTables(t, out)...)...); got != view {
		t.Errorf("compact without -bottom: merged scan of the output:\n%s\nwant:\n%s", got, view)
	}
	if info := mustSST(t, "info", manifestTables(t, out)[0]); !regexp.MustCompile(`(?m)^\s*compression:\s+zstd$`).MatchString(info) {
		t.Errorf("compact -compression zstd: info says\n%s", info)
	}

	// -hex shows the tables' keys as hex digits.
	hexOut := filepath.Join(t.TempDir(), "hex")
	if report := mustSST(t, append(append([]string{"compact", "-hex", "-bottom", "-o", hexOut}, dels...), t1, t2, t3)...); !strings.Contains(report, `"2d78" .. "6b"`) {
		t.Errorf("compact -hex: report lacks the hex keys:\n%s", report)
	}
}

func TestCompactRefused(t *testing.T) {
	t1, t2, t3 := mergeTables(t)
	dir := t.TempDir()

	// A directory that is not empty: refused, left as it was.
	full := filepath.Join(dir, "full")
	writeFile(t, filepath.Join(full, "README"), []byte("mine"))
	wantError(t, []string{"compact", "-o", full, t1, t2, t3}, 1, "compact: "+full+" is not empty: it holds README", "new or empty directory")
	if names := dirNames(t, full); !slices.Equal(names, []string{"README"}) {
		t.Errorf("refused compaction: %s holds %q", full, names)
	}
	// An earlier compaction's output.
	done := filepath.Join(dir, "done")
	mustSST(t, "compact", "-o", done, t1, t2, t3)
	wantError(t, []string{"compact", "-o", done, t1}, 1, "compact: "+done+" is not empty: it holds 000001.sst")
	// The staging directory of an interrupted compaction.
	stale := filepath.Join(dir, "stale")
	if err := os.MkdirAll(filepath.Join(stale, ".bulk-sorted-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantError(t, []string{"compact", "-o", stale, t1}, 1, "holds .bulk-sorted-123, left by an interrupted")
	// A file at DIR.
	wantError(t, []string{"compact", "-o", t3, t1}, 1, "compact: "+t3+" is not a directory")
	// A missing input: named, and no DIR left behind.
	missing := filepath.Join(dir, "missing.sst")
	out := filepath.Join(dir, "out")
	wantError(t, []string{"compact", "-o", out, t1, missing}, 1, "compact: open "+missing+": ")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed compaction left %s: %v", out, err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"done", "full", "stale"}) {
		t.Errorf("refused compactions left %q", names)
	}
}

func TestMergeBadFlags(t *testing.T) {
	t1, t2, _ := mergeTables(t)
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		sub  string
	}{
		{[]string{"scan", t1, t2}, "add -merge"},
		{[]string{"scan", "-merge"}, "at least one FILE"},
		{[]string{"scan", "-merge", "-spans", t1, t2}, "-spans"},
		{[]string{"scan", "-tombstone", "00", t1}, "-tombstone applies to a merged view: add -merge"},
		{[]string{"scan", "-merge", "-tombstone", "0g", t1}, `invalid value "0g" for flag -tombstone`},
		{[]string{"scan", "-merge", "-range-tombstone", "123", t1}, "odd number of hex digits"},
		{[]string{"get", "-merge", t1, t2, "a"}, `put "--" between the FILEs and the KEYs`},
		{[]string{"get", "-merge", "--", "a"}, "at least one FILE"},
		{[]string{"get", "-merge", t1, "--"}, "one KEY"},
		{[]string{"get", "-range-tombstone", "01", t1, "a"}, "-range-tombstone applies to a merged view"},
		{[]string{"verify", "-tombstone", "00", t1}, "add -merge"},
		{[]string{"compact", t1}, "-o DIR is required"},
		{[]string{"compact", "-o", out}, "at least one FILE"},
		{[]string{"compact", "-o", out, "-split", "0", t1}, "bad -split"},
		{[]string{"compact", "-o", out, "-split", "lots", t1}, "bad -split"},
		{[]string{"compact", "-o", out, "-compression", "lz4", t1}, `compact: unknown -compression "lz4"`},
		{[]string{"compact", "-o", out, "-compression-level", "best", t1}, "-compression-level applies to zstd and minlz only"},
		{[]string{"compact", "-o", out, "-block-size", "0", t1}, "compact: -block-size 0 out of range"},
		{[]string{"compact", "-o", out, "-tombstone", "x", t1}, "-tombstone"},
		{[]string{"compact", "-o", out, "-bottom=maybe", t1}, "-bottom"},
		// An empty deletion marker (an unset shell variable) would make
		// every value a deletion and every view empty.
		{[]string{"scan", "-merge", "-tombstone", "", t1, t2}, "every entry would read as deleted"},
		{[]string{"scan", "-merge", "-tombstone", "00", "-tombstone", "", t1}, "-tombstone: an empty marker"},
		{[]string{"get", "-merge", "-tombstone=", t1, "--", "a"}, "-tombstone: an empty marker"},
		{[]string{"verify", "-merge", "-tombstone", "", t1}, "-tombstone: an empty marker"},
		{[]string{"compact", "-o", out, "-tombstone", "", t1}, "-tombstone: an empty marker"},
	} {
		wantError(t, tc.args, 2, tc.sub)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("usage errors left %s: %v", out, err)
	}
	// help: the merged view's paragraph goes with the commands that read one.
	for cmd, want := range map[string]bool{"scan": true, "get": true, "verify": true, "compact": true, "info": false, "build": false} {
		out := mustSST(t, "help", cmd)
		if got := strings.Contains(out, "Merged view (") && strings.Contains(out, "-range-tombstone HEX"); got != want {
			t.Errorf("help %s: shows the merged view paragraph: %v, want %v", cmd, got, want)
		}
	}
	if out := mustSST(t, "compact", "-h"); !strings.HasPrefix(out, "Usage:\n\n  sst compact -o DIR") || strings.Contains(out, "sst scan") {
		t.Errorf("compact -h:\n%s", out)
	}
}

// TestMergeTableTwice: a table given twice to a merged view, by one path
// or two paths to the same file, is a usage error of every command that
// reads one, before any output; -range-tombstone "" (every span deletes,
// the default) stays allowed.
func TestMergeTableTwice(t *testing.T) {
	t1, t2, _ := mergeTables(t)
	dir := filepath.Dir(t1)
	link := filepath.Join(t.TempDir(), "link.sst")
	if err := os.Link(t1, link); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, ".", filepath.Base(t2))
	out := filepath.Join(t.TempDir(), "out")
	for _, files := range [][]string{{t1, t2, t1}, {t1, link}, {t2, dotted}} {
		want := files[0] + " and " + files[len(files)-1] + " are the same file"
		if files[0] == files[len(files)-1] {
			want = files[0] + " is given twice"
		}
		for _, args := range [][]string{
			append([]string{"scan", "-merge"}, files...),
			append(append([]string{"get", "-merge"}, files...), "--", "a"),
			append([]string{"verify", "-merge"}, files...),
			append([]string{"compact", "-o", out}, files...),
		} {
			if stdout, _, _ := sst(t, args...); stdout != "" {
				t.Errorf("sst %q printed %q", args, stdout)
			}
			wantError(t, args, 2, want, "give each table of a merged view once")
		}
	}
	// build -rocksdb merges the tables it is given too.
	tables, _ := filepath.Glob(filepath.Join(copyRocksDB(t, "s1"), "*.sst"))
	wantError(t, []string{"build", "-rocksdb", tables[0], tables[1], tables[0], "-o", out}, 2, tables[0]+" is given twice")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused commands left %s: %v", out, err)
	}
	if got, want := mustSST(t, "scan", "-merge", "-tombstone", "00", "-range-tombstone", "", t1, t2), mustSST(t, "scan", "-merge", "-tombstone", "00", t1, t2); got != want {
		t.Errorf("-range-tombstone \"\" gives %q, want the default's %q", got, want)
	}
}

// TestMergeCorruptionNamesFile damages a data block in the middle of the
// older of two tables: a merged scan prints the entries before it and
// fails naming the file, as do a merged get of a key in that block and a
// compaction, which leaves no output directory behind.
func TestMergeCorruptionNamesFile(t *testing.T) {
	dir := t.TempDir()
	var entries [][2]string
	for i := range 200 {
		entries = append(entries, [2]string{fmt.Sprintf("key%03d", i), strings.Repeat("v", 40)})
	}
	b, err := builder.Create(filepath.Join(dir, "old.sst"), &builder.Options{BlockSize: 256, Compression: format.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := b.Add([]byte(e[0]), []byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "old.sst"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(filepath.Join(dir, "old.sst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dataSize := r.Properties().DataSize
	r.Close()
	// A value's byte in the middle of the data blocks.
	mid := int(dataSize / 2)
	mid += bytes.IndexByte(data[mid:], 'v')
	data[mid] ^= 1
	bad := filepath.Join(dir, "bad.sst")
	writeFile(t, bad, data)
	newer := writeTable(t, filepath.Join(dir, "new.sst"), [][2]string{{"key000", "new"}}, nil)

	out, _, status := sst(t, "scan", "-merge", "-keys-only", newer, bad)
	keys := strings.Fields(out)
	if status != 1 || len(keys) < 10 || len(keys) > 190 || keys[0] != "key000" {
		t.Fatalf("merged scan over a damaged table: status %d, stdout %q", status, out)
	}
	msg := wantError(t, []string{"scan", "-merge", newer, bad}, 1, "scan: "+bad+": corrupt data block")
	if strings.Count(msg, bad) != 1 || strings.Contains(msg, "merge:") {
		t.Errorf("scan -merge: %q names the file more than once, or package merge", msg)
	}
	// The key after the last printed lies in the damaged block.
	damaged := fmt.Sprintf("key%03d", len(keys))
	wantError(t, []string{"get", "-merge", newer, bad, "--", damaged}, 1, `get: key "`+damaged+`": `+bad+": corrupt data block")
	if got := mustSST(t, "get", "-merge", newer, bad, "--", "key000"); got != "new" {
		t.Errorf("get -merge of a key in the newer table: %q", got)
	}
	outDir := filepath.Join(dir, "out")
	wantError(t, []string{"compact", "-o", outDir, newer, bad}, 1, "compact: "+bad+": corrupt data block")
	if _, err := os.Stat(outDir); !os.IsNotExist(err) {
		t.Errorf("a failed compaction left %s: %v", outDir, err)
	}
}
