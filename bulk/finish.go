package bulk

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/sstkit/sstable/builder"
)

// Finish sorts and merges everything added into tables in dir, writes
// dir/manifest.json, removes the spilled runs and returns the tables in
// key order. With no entries it writes no table and a manifest listing
// none. On error (a duplicate key: *DuplicateKeyError; an I/O error; Abort
// from another goroutine: ErrAborted) it removes every table written, the
// runs and the manifest, and returns the error. A second call returns
// ErrFinished.
func (w *Writer) Finish() ([]TableInfo, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	w.finishing.Store(true)
	defer w.finishing.Store(false)
	tables, err := w.finish()
	if err == nil && w.aborted.Load() {
		err = ErrAborted
	}
	if err != nil {
		w.fail()
		if w.aborted.Load() {
			return nil, ErrAborted
		}
		return nil, err
	}
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.phase.Store(int32(PhaseDone))
	return tables, nil
}

func (w *Writer) finish() ([]TableInfo, error) {
	var tables []TableInfo
	w.frags, w.spans = fragmentSpans(w.spans), nil
	if len(w.runs) == 0 {
		// Everything fits in memory: sort and write.
		w.phase.Store(int32(PhaseMerging))
		w.sortRefs()
		var err error
		tables, err = w.writeTables(&memSource{w: w})
		if err != nil {
			return nil, err
		}
		w.release()
	} else {
		if len(w.refs) > 0 {
			if err := w.spill(); err != nil {
				return nil, err
			}
		}
		w.release()
		// Hand the buffer's memory back to the OS before the merge, so
		// that the process's peak stays near MemoryBudget rather than the
		// buffer plus the merge's cache.
		debug.FreeOSMemory()
		w.phase.Store(int32(PhaseMerging))
		// Merge in passes while there are too many runs for one merge.
		for len(w.runs) > fanIn(w.budget) {
			if err := w.mergeRuns(); err != nil {
				return nil, err
			}
		}
		src, err := openMerge(w.runs)
		if err != nil {
			return nil, err
		}
		tables, err = w.writeTables(src)
		if cerr := src.close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	if err := writeManifest(w.dir, w.opts.Builder, tables); err != nil {
		return nil, err
	}
	if w.runDir != "" {
		if err := os.RemoveAll(w.runDir); err != nil {
			return nil, fmt.Errorf("bulk: removing runs: %w", err)
		}
		w.runDir = ""
	}
	return tables, nil
}

// source yields entries in increasing key order (equal keys adjacent).
type source interface {
	next() (key, value []byte, ok bool)
	err() error
}

type memSource struct {
	w *Writer
	i int
}

func (s *memSource) next() ([]byte, []byte, bool) {
	if s.i >= len(s.w.refs) {
		return nil, nil, false
	}
	r := s.w.refs[s.i]
	s.i++
	return s.w.key(r), s.w.value(r), true
}

func (s *memSource) err() error { return nil }

// writeTables writes the entries of src into tables in w.dir, cutting a new
// table once one reaches the target size.
func (w *Writer) writeTables(src source) ([]TableInfo, error) {
	var (
		tables []TableInfo
		b      *builder.Builder
		cur    TableInfo
		last   []byte
		n      int64
		full   bool // b reached the target size: finish it before the next key
	)
	// finishTable finishes the table, with the spans below limit, the
	// next table's first key (nil: all those left, for the last table).
	finishTable := func(limit []byte) error {
		ns, err := w.addSpansBelow(b, limit)
		if err != nil {
			return err
		}
		cur.Spans = ns
		if err := b.Finish(); err != nil {
			return wrap("", err)
		}
		st, err := os.Stat(cur.Path)
		if err != nil {
			return fmt.Errorf("bulk: %w", err)
		}
		cur.Size = st.Size()
		if cur.Entries > 0 { // not nil for the empty key: nil means no points
			cur.Largest = append([]byte{}, last...)
		}
		tables = append(tables, cur)
		w.mu.Lock()
		w.pending = nil
		w.mu.Unlock()
		w.ntables.Add(1)
		b = nil
		return nil
	}
	target := w.opts.TargetTableSize
	for {
		k, v, ok := src.next()
		if !ok {
			break
		}
		if n&1023 == 0 && w.aborted.Load() {
			return nil, ErrAborted
		}
		if n > 0 {
			switch c := bytes.Compare(k, last); {
			case c == 0:
				return nil, &DuplicateKeyError{Key: bytes.Clone(k), Dir: w.dir}
			case c < 0:
				return nil, fmt.Errorf("bulk: internal error: key %s after %s", QuoteKey(k), QuoteKey(last))
			}
		}
		if full {
			if err := finishTable(k); err != nil {
				return nil, err
			}
			full = false
		}
		if b == nil {
			path := filepath.Join(w.dir, fmt.Sprintf("%06d.sst", len(tables)+1))
			var err error
			if b, err = builder.Create(path, w.opts.Builder); err != nil {
				return nil, wrap("", err) // "create PATH: ..."
			}
			w.mu.Lock()
			w.pending = b
			w.tables = append(w.tables, path)
			w.mu.Unlock()
			cur = TableInfo{Path: path, Smallest: bytes.Clone(k)}
		}
		if err := b.Add(k, v); err != nil {
			return nil, wrap("", err)
		}
		last = append(last[:0], k...)
		cur.Entries++
		n++
		w.written.Store(n)
		if target > 0 && int64(b.EstimatedSize()) >= target {
			full = true // finished at the next key, which bounds its spans
		}
	}
	if err := src.err(); err != nil {
		return nil, err
	}
	if b == nil && w.nextFrag < len(w.frags) {
		// Spans alone: a table of their own.
		path := filepath.Join(w.dir, fmt.Sprintf("%06d.sst", len(tables)+1))
		var err error
		if b, err = builder.Create(path, w.opts.Builder); err != nil {
			return nil, wrap("", err)
		}
		w.mu.Lock()
		w.pending = b
		w.tables = append(w.tables, path)
		w.mu.Unlock()
		cur = TableInfo{Path: path}
	}
	if b != nil {
		if err := finishTable(nil); err != nil {
			return nil, err
		}
	}
	return tables, nil
}
