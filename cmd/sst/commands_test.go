package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/bulk"
)

// TestMain lets a test run the test binary as the sst command, so that it
// can kill a build with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("SST_TEST_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func TestScanPrefix(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("k%02d\tv%d", i, i))
	}
	lines = append(lines, "k1", "j", "l", "k")
	table := buildText(t, lines...)
	keys := func(ks ...string) string { return strings.Join(ks, "\n") + "\n" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-prefix", "k1"}, keys("k1", "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19")},
		{[]string{"-prefix", "k1", "-start", "k15"}, keys("k15", "k16", "k17", "k18", "k19")},
		{[]string{"-prefix", "k1", "-start", "a"}, keys("k1", "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19")},
		{[]string{"-prefix", "k1", "-end", "k13"}, keys("k1", "k10", "k11", "k12")},
		{[]string{"-prefix", "k1", "-end", "z"}, keys("k1", "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19")},
		{[]string{"-prefix", "k1", "-limit", "2"}, keys("k1", "k10")},
		{[]string{"-prefix", "k1", "-start", "k2"}, ""},
		{[]string{"-prefix", "k1", "-end", ""}, ""},
		{[]string{"-prefix", "k"}, keys(append([]string{"k"}, strings.Fields("k00 k01 k02 k03 k04 k05 k06 k07 k08 k09 k1 k10 k11 k12 k13 k14 k15 k16 k17 k18 k19")...)...)},
		{[]string{"-prefix", "m"}, ""},
		{[]string{"-prefix", "", "-limit", "2"}, keys("j", "k")},
	} {
		args := append(append([]string{"scan", "-keys-only"}, tc.args...), table)
		if got := mustSST(t, args...); got != tc.want {
			t.Errorf("sst %q:\n%s\nwant:\n%s", args, got, tc.want)
		}
	}
	if got, want := mustSST(t, "scan", "-prefix", "k05", table), "k05\tv5\n"; got != want {
		t.Errorf("scan -prefix k05 = %q, want %q", got, want)
	}

	// Prefixes ending in 0xff bytes, which have no successor to stop at.
	ff := buildHex(t, [][2]string{{"\xfe", ""}, {"\xff", ""}, {"\xff\x00", ""}, {"\xff\xff", ""}, {"\xff\xff\x01", ""}, {"\xfe\xff\xff", ""}, {"\xff\xfe", ""}})
	for prefix, want := range map[string]string{
		"ff":   keys("ff", "ff00", "fffe", "ffff", "ffff01"),
		"ffff": keys("ffff", "ffff01"),
		"feff": keys("feffff"),
		"fe":   keys("fe", "feffff"),
	} {
		if got := mustSST(t, "scan", "-hex", "-keys-only", "-prefix", prefix, ff); got != want {
			t.Errorf("scan -hex -prefix %s:\n%s\nwant:\n%s", prefix, got, want)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for prefix, want := range map[string]string{
		"":             "",
		"a":            "b",
		"a\xff":        "b",
		"\xff":         "",
		"\xff\xff":     "",
		"ab\xfe\xff":   "ab\xff",
		"\x00":         "\x01",
		"k1":           "k2",
		"\xfe\xff\xff": "\xff",
	} {
		got := prefixEnd([]byte(prefix))
		if string(got) != want || (want == "") != (got == nil) {
			t.Errorf("prefixEnd(%q) = %q, want %q", prefix, got, want)
		}
	}
}

func TestVerifyMany(t *testing.T) {
	a := buildText(t, "a\t1", "b\t2")
	b := buildText(t, "c\t3")
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.sst")
	data[0] ^= 1
	writeFile(t, bad, data)
	missing := filepath.Join(t.TempDir(), "missing.sst")

	if got, want := mustSST(t, "verify", a, b), a+": ok: 2 entries, 1 data blocks\n"+b+": ok: 1 entries, 1 data blocks\n"; got != want {
		t.Errorf("verify of two good tables:\n%s\nwant:\n%s", got, want)
	}
	if got, want := mustSST(t, "verify", a), "ok: 2 entries, 1 data blocks\n"; got != want {
		t.Errorf("verify of one table: %q, want %q", got, want)
	}
	out, errs, status := sst(t, "verify", bad, a, missing, b)
	if status != 1 {
		t.Errorf("verify with failures: status %d, want 1", status)
	}
	if want := a + ": ok: 2 entries, 1 data blocks\n" + b + ": ok: 1 entries, 1 data blocks\n"; out != want {
		t.Errorf("verify with failures: stdout\n%s\nwant the good tables' lines:\n%s", out, want)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "sst: verify: "+bad+": corrupt") ||
		lines[1] != "sst: verify: open "+missing+": no such file or directory" || lines[2] != "sst: verify: 2 of 4 files failed" {
		t.Errorf("verify with failures: stderr\n%s", errs)
	}
	// One bad file: its error alone, as before.
	wantError(t, []string{"verify", bad}, 1, "verify: "+bad+": corrupt")
}

// withStdin runs f with the sst command's standard input reading data.
func withStdin(data string, f func()) {
	old := stdin
	stdin = strings.NewReader(data)
	defer func() { stdin = old }()
	f()
}

func TestBuildStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.sst")
	withStdin("b\t2\na\t1\n", func() { mustSST(t, "build", "-o", out, "-") })
	if got := mustSST(t, "scan", out); got != "a\t1\nb\t2\n" {
		t.Errorf("table from standard input holds %q", got)
	}
	// With -hex, and beside a file with -split.
	file := filepath.Join(dir, "in.txt")
	writeFile(t, file, []byte("63\t33\n"))
	split := filepath.Join(dir, "split")
	withStdin("61\t31\n62\t00\n", func() { mustSST(t, "build", "-hex", "-split", "1MiB", "-o", split, file, "-") })
	m, err := bulk.ReadManifest(filepath.Join(split, bulk.ManifestName))
	if err != nil || len(m.Tables) != 1 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	if got := mustSST(t, "scan", "-hex", m.Tables[0].Path); got != "61\t31\n62\t00\n63\t33\n" {
		t.Errorf("table from a file and standard input holds %q", got)
	}
	// Errors name standard input.
	withStdin("a\nb\na\n", func() {
		wantError(t, []string{"build", "-o", filepath.Join(dir, "dup.sst"), "-"}, 1, "build: standard input: duplicate key \"a\"")
	})
	withStdin("6\n", func() {
		wantError(t, []string{"build", "-hex", "-o", filepath.Join(dir, "bad.sst"), "-"}, 1, "build: standard input:1: -hex: bad key")
	})
	wantError(t, []string{"build", "-split", "1MiB", "-o", split, "-f", "-", "-"}, 2, "standard input (-) given twice")
	if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt", "out.sst", "split"}) {
		t.Errorf("directory holds %q", names)
	}
}

// TestKilledBuild kills a build with SIGKILL after it has spilled, and
// checks that its working directory is left behind, recognised by
// bulk.IsTempDir, and removed by the next build of the same table.
func TestKilledBuild(t *testing.T) {
	skipWithoutFlock(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.sst")
	cmd := exec.Command(os.Args[0], "build", "-q", "-memory", "1MiB", "-o", out, "-")
	cmd.Env = append(os.Environ(), "SST_TEST_RUN_MAIN=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// 3 MiB of entries spill at least twice; then the build waits for
	// more input, with its runs on disk.
	for i := range 30000 {
		if _, err := fmt.Fprintf(in, "key%08d\t%s\n", i, strings.Repeat("v", 90)); err != nil {
			t.Fatal(err)
		}
	}
	var work string
	for deadline := time.Now().Add(time.Minute); work == "" || !hasRun(work); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no spilled run after a minute; directory holds %q, stderr %q", dirNames(t, dir), stderr.String())
		}
		if names := dirNames(t, dir); len(names) == 1 {
			work = filepath.Join(dir, names[0])
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	in.Close()
	if names := dirNames(t, dir); len(names) != 1 || !bulk.IsTempDir(names[0]) || !strings.HasPrefix(names[0], ".out.sst.bulk-") {
		t.Fatalf("the killed build left %q, want its working directory", names)
	}

	other := filepath.Join(dir, "other.sst") // another output's build leaves it
	withStdin("a\n", func() { mustSST(t, "build", "-q", "-o", other, "-") })
	if _, err := os.Stat(work); err != nil {
		t.Fatalf("a build of another table removed the working directory: %v", err)
	}
	withStdin("a\n", func() { mustSST(t, "build", "-q", "-o", out, "-") })
	if names := dirNames(t, dir); !slices.Equal(names, []string{"other.sst", "out.sst"}) {
		t.Fatalf("after the next build of the table the directory holds %q", names)
	}
}

// hasRun reports whether the working directory work holds a spilled run.
func hasRun(work string) bool {
	found := false
	filepath.WalkDir(work, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "run-") {
			found = true
		}
		return nil
	})
	return found
}

// TestInterruptibleRead checks that a read of standard input waiting for
// data ends at a signal, and that otherwise every byte comes through in
// order, whatever the sizes asked for.
func TestInterruptibleRead(t *testing.T) {
	pr, pw := io.Pipe()
	sig := make(chan os.Signal, 1)
	in := &interruptible{r: pr, sig: sig}
	var want []byte
	go func() {
		for i := range 1000 {
			line := fmt.Appendf(nil, "line %d %s\n", i, strings.Repeat("x", i%300))
			pw.Write(line)
		}
		pw.Close()
	}()
	for i := range 1000 {
		want = fmt.Appendf(want, "line %d %s\n", i, strings.Repeat("x", i%300))
	}
	var got []byte
	buf := make([]byte, 4096)
	for n := 1; ; n = n%4096 + 7 { // varying sizes, as bufio asks
		k, err := in.Read(buf[:n])
		got = append(got, buf[:k]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}

	// Nothing to read: the signal ends the wait.
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	in = &interruptible{r: pr2, sig: sig}
	sig <- os.Interrupt
	if n, err := in.Read(buf); n != 0 || err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("read after a signal: %d, %v", n, err)
	}
}
