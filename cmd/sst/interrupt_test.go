package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sstkit/sstable/bulk"
)

// TestBuildInterruptedInFinish sends a build an interrupt through the
// signal channel buildDir watches, as the bulk writer's Finish starts and
// just after it returns, and checks that the build either fails saying
// so and leaves nothing behind (neither the table nor its working
// directory), or, for a signal after Finish, may also succeed. The
// goroutine that takes the signal sets the interrupted flag that the
// build reads once Finish returns: run with -race, which reports the two
// when they are not synchronised.
func TestBuildInterruptedInFinish(t *testing.T) {
	var sig chan<- os.Signal
	oldNotify, oldFinish := notifySignals, finishWriter
	defer func() { notifySignals, finishWriter = oldNotify, oldFinish }()
	notifySignals = func(c chan<- os.Signal) { sig = c }

	dir := t.TempDir()
	in, _ := bulkInput(t, dir, "in.txt", 20000, 1)
	for _, after := range []bool{false, true} {
		finishWriter = func(w *bulk.Writer) ([]bulk.TableInfo, error) {
			if !after {
				sig <- os.Interrupt
				return w.Finish()
			}
			tables, err := w.Finish()
			sig <- os.Interrupt
			time.Sleep(time.Millisecond) // for the goroutine to take it
			return tables, err
		}
		for _, split := range []bool{false, true} {
			for range 10 { // the signal lands at different points
				out := filepath.Join(dir, "out.sst")
				args := []string{"build", "-q", "-memory", "1MiB", "-o", out, in}
				if split {
					out = filepath.Join(dir, "tables")
					args = []string{"build", "-q", "-memory", "1MiB", "-split", "64KiB", "-o", out, in}
				}
				_, errs, status := sst(t, args...)
				if after && status == 0 {
					os.RemoveAll(out)
					continue
				}
				if status != 1 || errs != "sst: build: interrupted (interrupt)\n" {
					t.Fatalf("signal after Finish %v, split %v: status %d, stderr %q", after, split, status, errs)
				}
				if names := dirNames(t, dir); !slices.Equal(names, []string{"in.txt"}) {
					t.Fatalf("signal after Finish %v, split %v: an interrupted build left %q", after, split, names)
				}
			}
		}
	}
	// A signal before Finish is taken between entries.
	finishWriter = oldFinish
	notifySignals = func(c chan<- os.Signal) { c <- os.Interrupt }
	_, errs, status := sst(t, "build", "-q", "-o", filepath.Join(dir, "out.sst"), in)
	if status != 1 || !strings.Contains(errs, "interrupted (interrupt)") {
		t.Errorf("build interrupted while reading: status %d, stderr %q", status, errs)
	}
}

// TestBuildToClosedPipe runs builds whose standard output is a pipe with
// no reader left, as in "sst build ... | head -1" once head has gone: the
// first line printed ends the process with SIGPIPE. Every kind of build
// must by then have put its tables in place and removed its working
// directory, as the plain build does: a conversion (-leveldb, -rocksdb
// DIR) once left it behind, printing before its deferred removal ran.
func TestBuildToClosedPipe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGPIPE")
	}
	dir := t.TempDir()
	in, _ := bulkInput(t, dir, "in.txt", 5000, 1)
	ldb, rdb := copyLevelDB(t), copyRocksDB(t, "s1")
	for _, tc := range []struct {
		name  string
		split bool
		args  []string
	}{
		{"plain", false, []string{in}},
		{"plain-split", true, []string{in}},
		{"leveldb", false, []string{"-leveldb", ldb}},
		{"leveldb-split", true, []string{"-leveldb", ldb}},
		{"rocksdb", false, []string{"-rocksdb", rdb}},
		{"rocksdb-split", true, []string{"-rocksdb", rdb}},
	} {
		parent := filepath.Join(dir, tc.name)
		if err := os.Mkdir(parent, 0o777); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(parent, "out")
		args := append([]string{"build", "-q", "-o", out}, tc.args...)
		if tc.split {
			args = append(args, "-split", "8KiB")
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close() // no reader: the first write fails with EPIPE
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "SST_TEST_RUN_MAIN=1")
		cmd.Stdout = pw
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Start()
		pw.Close()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
			t.Errorf("%s: %v, stderr %q; want death by SIGPIPE at the first line", tc.name, cmd.ProcessState, stderr.String())
		}
		// The output is complete, and nothing else is left.
		if tc.split {
			if _, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName)); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			for _, name := range dirNames(t, out) {
				if bulk.IsTempDir(name) {
					t.Errorf("%s: the build left %s in %s", tc.name, name, out)
				}
			}
		} else if _, err := os.Stat(out); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if names := dirNames(t, parent); !slices.Equal(names, []string{"out"}) {
			t.Errorf("%s: the build left %q beside its output", tc.name, names)
		}
	}
}
