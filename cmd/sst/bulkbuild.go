package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
)

// buildInput is one INPUT of sst build: a directory or a text file.
type buildInput struct {
	path    string
	dir     bool
	entries []buildEntry // entries given directly (tests)
}

// buildConfig is what a build needs besides its inputs.
type buildConfig struct {
	opts     *builder.Options
	memory   int64     // bulk.Options.MemoryBudget
	split    int64     // bulk.Options.TargetTableSize; 0: one table
	progress io.Writer // where the progress line goes; nil: none
	hex      bool      // text inputs are hexkey<TAB>hexvalue lines
	spans    string    // a text file of spans, start<TAB>end<TAB>value lines (hex digits with hex); "": none
}

// buildTable writes the entries of inputs into one table at out, through a
// bulk.Writer in a working directory beside out (workdir.go), and renames
// the table to out once it is complete: a failed or interrupted build
// leaves a table already at out as it was.
func buildTable(out string, cfg buildConfig, inputs []buildInput) error {
	parent, name := filepath.Dir(out), filepath.Base(out)
	removeStale(parent, name)
	wd, err := newWorkDir(parent, name)
	if err != nil {
		// The working directory's name means nothing to the user.
		return userPathErr("create", out, err)
	}
	defer wd.remove()
	cfg.split = 0
	tables, err := buildDir(wd.path, []string{out, wd.path}, cfg, inputs)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		// No entries: an empty table.
		b, err := builder.Create(out, cfg.opts)
		if err != nil {
			return err
		}
		defer b.Abort()
		return b.Finish()
	}
	if err := os.Rename(tables[0].Path, out); err != nil {
		return userPathErr("rename into", out, err)
	}
	if err := syncDir(parent); err != nil {
		return userPathErr("fsync directory", parent, err)
	}
	return nil
}

// buildSplit writes the entries of inputs into tables of about cfg.split
// bytes and a manifest in the directory out, which exists: through a
// bulk.Writer in a working directory inside out, whose tables and manifest
// replace out's earlier build (install) once they are complete, so that a
// failed or interrupted build leaves an earlier build as it was.
func buildSplit(out string, cfg buildConfig, inputs []buildInput) ([]bulk.TableInfo, error) {
	name := filepath.Base(out)
	if abs, err := filepath.Abs(out); err == nil {
		name = filepath.Base(abs) // "." names no directory
	}
	removeStale(out, name)
	wd, err := newWorkDir(out, name)
	if err != nil {
		return nil, userPathErr("create tables in", out, err)
	}
	defer wd.remove()
	tables, err := buildDir(wd.path, []string{out}, cfg, inputs)
	if err != nil {
		return nil, err
	}
	return install(out, wd.path, tables)
}

// notifySignals relays the signals that interrupt a build to c (tests
// replace it, to send a signal of their own at a point they choose).
var notifySignals = func(c chan<- os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// finishWriter finishes the bulk writer of buildDir, while a goroutine
// watches for a signal (tests replace it, to send one before or after).
var finishWriter = (*bulk.Writer).Finish

// buildDir writes the entries of inputs into tables in dir through a
// bulk.Writer, which also writes dir/manifest.json. On any error, or on an
// interrupt signal, it aborts the writer, so that nothing is left behind.
// The files and directories at the paths in skip (the output, the working
// directory) are not read from a directory input.
func buildDir(dir string, skip []string, cfg buildConfig, inputs []buildInput) ([]bulk.TableInfo, error) {
	if os.Getenv("GOMEMLIMIT") == "" {
		// Keep the collector from letting the heap grow to twice the
		// buffer: the buffer is live, and little else is allocated.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(cfg.memory + cfg.memory/4 + 96<<20))
	}
	w, err := bulk.NewWriter(dir, &bulk.Options{Builder: cfg.opts, MemoryBudget: cfg.memory, TargetTableSize: cfg.split})
	if err != nil {
		return nil, err
	}
	sig := make(chan os.Signal, 1)
	notifySignals(sig)
	defer signal.Stop(sig)
	stop := showProgress(cfg.progress, w)
	err = addInputs(w, inputs, cfg.hex, skip, sig)
	if err == nil && cfg.spans != "" {
		err = addSpans(w, cfg.spans, cfg.hex, sig)
	}
	var tables []bulk.TableInfo
	if err == nil {
		// A signal during Finish aborts the writer from another goroutine
		// (bulk.Writer allows that), which Finish then reports. The
		// goroutine sets interrupted after caught, so that a Load that
		// sees it true sees caught too; the build waits for the goroutine
		// to end before it reads them, so that a signal taken as Finish
		// returns is not lost.
		finished, watched := make(chan struct{}), make(chan struct{})
		var interrupted atomic.Bool
		var caught os.Signal
		go func() {
			defer close(watched)
			select {
			case s := <-sig:
				caught = s
				interrupted.Store(true)
				w.Abort()
			case <-finished:
			}
		}()
		tables, err = finishWriter(w)
		close(finished)
		<-watched
		if interrupted.Load() {
			err = fmt.Errorf("interrupted (%v)", caught)
		}
	}
	stop()
	if err != nil {
		w.Abort()
		var de *bulk.DuplicateKeyError
		if errors.As(err, &de) {
			return nil, duplicateError(de.Key, inputs, cfg.hex)
		}
		return nil, err
	}
	return tables, nil
}

// parseBytes parses a size in bytes: a decimal number with an optional
// unit, KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T too) or KB, MB, GB,
// TB (powers of 1000), as in "256MiB" or "1.5GiB".
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	if mult == 0 || num == "" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*mult > 1<<62 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(f * mult), nil
}
