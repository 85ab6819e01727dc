package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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
