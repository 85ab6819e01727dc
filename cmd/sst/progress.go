package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sstkit/sstable/bulk"
)

// forceProgress makes progressWriter return stderr even when it is not a
// terminal (tests).
var forceProgress = false

// progressWriter returns stderr if it is a terminal, else nil.
func progressWriter(stderr io.Writer) io.Writer {
	if forceProgress {
		return stderr
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return stderr
}

// progressInterval is how often the progress line is redrawn.
var progressInterval = time.Second

// showProgress redraws a progress line on out every progressInterval
// until the returned function is called, which ends the line.
func showProgress(out io.Writer, w *bulk.Writer) (stop func()) {
	if out == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	drawn := false
	draw := func() {
		s := w.Stats()
		line := fmt.Sprintf("sst build: %-8s %d entries, %s read", s.Phase.String()+":", s.Entries, humanBytes(uint64(s.Bytes)))
		if s.Runs > 0 {
			line += fmt.Sprintf(", %d runs", s.Runs)
		}
		if s.Phase == bulk.PhaseMerging {
			line += fmt.Sprintf(", %d written, %d tables", s.Written, s.Tables)
		}
		line += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Second))
		fmt.Fprintf(out, "\r%-100s", line)
		drawn = true
	}
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				draw()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		if drawn {
			draw()
			fmt.Fprintln(out)
		}
	}
}
