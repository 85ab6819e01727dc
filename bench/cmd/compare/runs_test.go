package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes the test binary run main instead of the tests: -runs
// re-executes os.Executable(), which under go test is the test binary.
const asMainEnv = "COMPARE_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRuns runs the command with -runs 2 at 2000 entries, with JSON
// output and the chart, then renders the JSON as markdown, and checks
// that every figure is a median [min–max] over the two processes, that
// the hit times are listed run by run, that issue 41's checks are there,
// and that the children left no scratch directory behind.
func TestRuns(t *testing.T) {
	t.Setenv(asMainEnv, "1") // for the children
	dir := t.TempDir()
	scratch := filepath.Join(dir, "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	saved, chart := filepath.Join(dir, "runs.json"), filepath.Join(dir, "runs.svg")
	var stdout, stderr bytes.Buffer
	err := mainErr([]string{"-runs", "2", "-entries", "2000", "-lookups", "2000", "-reps", "1",
		"-impls", "ours,pebble2,goleveldb", "-compression", "snappy,none", "-dir", scratch, "-json", "-chart", chart}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("compare -runs 2: %v\n%s", err, stderr.String())
	}
	if err := os.WriteFile(saved, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var m multiResults
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, stdout.String())
	}
	if m.Processes != 2 || len(m.Children) != 2 || len(m.Checks) != 4 {
		t.Fatalf("%d processes, %d children's results, %d checks; want 2, 2, 4", m.Processes, len(m.Children), len(m.Checks))
	}
	for i, c := range m.Children {
		if c.Entries != 2000 || len(c.Runs) != 6 {
			t.Errorf("child %d: %d entries, %d runs; want 2000, 6", i+1, c.Entries, len(c.Runs))
		}
	}
	for _, want := range []string{"run 1/2: ", "run 2/2: ", "-child-json"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}
	if svg, err := os.ReadFile(chart); err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("chart: %v", err)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("the children left %d entries in the scratch directory's parent", len(left))
	}

	stdout.Reset()
	if err := mainErr([]string{"-render", saved}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	md := stdout.String()
	n := `[0-9]+(?:\.[0-9]+)?`
	spread := n + ` \[` + n + `–` + n + `\]`
	for _, re := range []string{
		`median \[min–max\] over 2 runs, each a fresh process`,
		`each process generated the dataset and built its own tables`,
		// ours, pebble2, goleveldb, then ours/pebble2, ours/goleveldb.
		`\| Get hit, ns/op \|(?: ` + spread + ` \|){5}\n`,
		`\| build, MB/s of raw key\+value \|(?: ` + spread + ` \|){5}\n`,
		`\| scan \(caches warm\), ns/entry \|(?: ` + spread + ` \|){5}\n`,
		`Get hit, ns/op, run by run \(snappy\):`,
		`\| run \| ours \| pebble2 \| ours/pebble2 \| pebble2 ÷ ours \|`,
		`\| 1 \| [0-9]+ \| [0-9]+ \| ` + n + ` \| ` + n + `x \|\n\| 2 \| `,
		`Checks \(issue 41\), snappy:\n- check: in each of the 2 runs, ours hits at least 2\.5x as fast as Pebble v2 .*: (PASS|FAIL) \(` + n + `x–` + n + `x, lowest in run [12]\)\n` +
			`- check: all 2 Get hit times of ours are within 15% of their median: (PASS|FAIL) \(median [0-9]+ ns`,
		`Checks \(issue 41\), none:\n`,
		`The 2 runs took`,
	} {
		if !regexp.MustCompile(re).MatchString(md) {
			t.Errorf("report lacks %s:\n%s", re, md)
		}
	}
}

// TestRunsInterrupted: a SIGTERM to the parent of -runs reaches the
// running child, which removes its scratch directory; the parent waits
// for it, starts no other run and exits with 128+15.
func TestRunsInterrupted(t *testing.T) {
	scratch := t.TempDir()
	cmd := exec.Command(os.Args[0], "-runs", "3", "-entries", "20000", "-lookups", "20000", "-reps", "100",
		"-impls", "ours", "-compression", "snappy", "-dir", scratch)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Wait for a child's table: its directory exists, and its signal
	// handler with it.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tables, _ := filepath.Glob(filepath.Join(scratch, "sstcompare-*", "*"))
		if len(tables) > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("compare ended (%v) before a table was seen:\n%s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no table after 2 minutes:\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("compare ended with %v, want exit status %d\n%s", err, 128+int(syscall.SIGTERM), stderr.String())
	}
	if !strings.Contains(stderr.String(), "terminated during run 1 of 3") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "done in") {
		t.Errorf("the child ran to its end: the signal did not reach it\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "run 2/3") {
		t.Errorf("a second run started after the signal:\n%s", stderr.String())
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("left behind in the scratch parent: %v", left)
	}
}
