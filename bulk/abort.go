package bulk

import (
	"errors"
	"os"
	"path/filepath"
)

func (w *Writer) check() error {
	if w.aborted.Load() {
		return ErrAborted
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return ErrFinished
	}
	return nil
}

// Abort gives the writer up: it removes every table it wrote, its spilled
// runs and their directory, leaving the output directory in place. It may
// be called from another goroutine while Finish
// runs, which then fails with ErrAborted. After a successful Finish it does
// nothing and returns nil; it always returns nil otherwise too, unless
// removing a file fails.
func (w *Writer) Abort() error {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	w.aborted.Store(true)
	if w.finishing.Load() {
		// Finish is running (or failed): it sees the flag and cleans up.
		return nil
	}
	return w.fail()
}

// fail removes everything the writer wrote and marks it done.
func (w *Writer) fail() error {
	w.release()
	return w.cleanup()
}

func (w *Writer) cleanup() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phase.Store(int32(PhaseDone))
	if w.done {
		return nil
	}
	w.done = true
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	if w.pending != nil {
		keep(w.pending.Abort())
		w.pending = nil
	}
	for _, p := range w.tables {
		keep(os.Remove(p))
	}
	w.tables = nil
	keep(os.Remove(filepath.Join(w.dir, ManifestName)))
	if w.runDir != "" {
		keep(os.RemoveAll(w.runDir))
		w.runDir = ""
	}
	if first != nil {
		return wrap("cleanup", first)
	}
	return nil
}
