package bulk

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
)

// maxFanIn is the most runs merged at once. More runs than this are merged
// in passes, fanIn at a time, into longer runs first.
const maxFanIn = 64

// fanIn returns how many runs one merge takes for a memory budget: each
// run's iterator may hold a read-ahead window of up to 1 MiB on the Go
// heap (when the merge's cache cannot lend it), so that small budgets
// merge fewer runs at once, in more passes, to keep the heap under
// 2 x budget + 16 MiB.
func fanIn(budget int64) int {
	return int(min(max((2*budget+8<<20)/(5<<18), 4), maxFanIn))
}

// runOptions are the builder options of spilled runs: no filter, snappy,
// 32 KiB blocks, never partitioned, compressed in Add (sorting, not
// compression, bounds a spill: a second goroutine only added CPU time).
var runOptions = &builder.Options{
	BlockSize:          32 << 10,
	Compression:        format.SnappyCompression,
	Filter:             noFilter{},
	PartitionThreshold: -1,
	SerialCompression:  true,
}

// spill sorts the in-memory entries and writes them as a run, then empties
// the buffer, keeping its chunks of the usual size for reuse.
func (w *Writer) spill() error {
	w.phase.Store(int32(PhaseSpilling))
	defer w.phase.Store(int32(PhaseReading))
	w.sortRefs()
	path, err := w.newRunPath()
	if err != nil {
		return err
	}
	rw, err := createRun(path)
	if err != nil {
		return err
	}
	for i, r := range w.refs {
		if i&1023 == 0 && w.aborted.Load() {
			rw.abort()
			return ErrAborted
		}
		if err := rw.b.Add(w.key(r), w.value(r)); err != nil {
			rw.abort()
			if errors.Is(err, builder.ErrKeyOrder) {
				return &DuplicateKeyError{Key: bytes.Clone(w.key(r)), Dir: w.dir}
			}
			return wrap("spill", err)
		}
	}
	if err := rw.finish(); err != nil {
		return err
	}
	w.runs = append(w.runs, path)
	w.nruns.Add(1)
	w.reset()
	return nil
}

func (w *Writer) newRunPath() (string, error) {
	if w.runDir == "" {
		parent := w.opts.TempDir
		if parent == "" {
			parent = w.dir
		}
		d, err := os.MkdirTemp(parent, runDirPrefix+"*")
		if err != nil {
			return "", fmt.Errorf("bulk: spill: %w", err)
		}
		w.runDir = d
	}
	w.runSeq++
	return filepath.Join(w.runDir, fmt.Sprintf("run-%06d.sst", w.runSeq)), nil
}

// mergeRuns merges the oldest fanIn runs into one new run.
func (w *Writer) mergeRuns() error {
	k := fanIn(w.budget)
	in := w.runs[:k]
	src, err := openMerge(in)
	if err != nil {
		return err
	}
	defer src.close()
	path, err := w.newRunPath()
	if err != nil {
		return err
	}
	rw, err := createRun(path)
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		k, v, ok := src.next()
		if !ok {
			break
		}
		if n&1023 == 0 && w.aborted.Load() {
			rw.abort()
			return ErrAborted
		}
		if err := rw.b.Add(k, v); err != nil {
			rw.abort()
			if errors.Is(err, builder.ErrKeyOrder) {
				return &DuplicateKeyError{Key: bytes.Clone(k), Dir: w.dir}
			}
			return wrap("merge", err)
		}
	}
	if err := src.err(); err != nil {
		rw.abort()
		return err
	}
	if err := rw.finish(); err != nil {
		return err
	}
	if err := src.close(); err != nil {
		return err
	}
	for _, p := range in {
		os.Remove(p)
	}
	w.runs = append(w.runs[k:], path)
	return nil
}

// runWriter writes one run: a table written straight to its file (the
// builder buffers its writes), without the
// fsync and rename of builder.Create, since runs need not survive a crash
// (the run directory is removed on every exit path).
type runWriter struct {
	f *os.File
	b *builder.Builder
}

func createRun(path string) (*runWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, fmt.Errorf("bulk: run: %w", err)
	}
	return &runWriter{f: f, b: builder.New(f, runOptions)}, nil
}

func (r *runWriter) finish() error {
	err := r.b.Finish()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(r.f.Name())
		return wrap("run", err)
	}
	return nil
}

func (r *runWriter) abort() {
	r.b.Abort()
	r.f.Close()
	os.Remove(r.f.Name())
}
