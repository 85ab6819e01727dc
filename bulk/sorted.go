package bulk

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstkit/sstable/builder"
)

// stageDirPrefix begins the name of a SortedWriter's staging directory,
// followed by random digits (IsTempDir).
const stageDirPrefix = ".bulk-sorted-"

// SortedWriter writes entries given in strictly increasing key order, and
// span fragments, into non-overlapping tables of about
// Options.TargetTableSize bytes, named 000001.sst, 000002.sst ... and a
// manifest.json, exactly as Writer's output (same TableInfo, same
// manifest, same ReadManifest works on it; for the same input and
// options, the same tables byte for byte). It streams: unlike Writer it
// neither sorts nor spills, and holds only the table being written (what
// its builder keeps) and the span fragment at the current position.
// It is meant for input that is already sorted, such as a compaction's
// merged iterators.
//
// # Order
//
// Every call has a position: an Add's is its key, an AddSpan's its start.
// Calls must come in non-decreasing position order, keys strictly
// increasing. Spans must not overlap each other, except that several
// values over one fragment are given by calling AddSpan once per value
// with the same start and end, consecutively: a span's start is at or
// above the previous span's end, or equal to the previous span's start
// with the same end. Points may lie inside a span (Add("b") after
// AddSpan("a", "z", v)), and a span may start at or after the last point.
// A call breaking these rules returns an error wrapping
// builder.ErrKeyOrder and leaves the writer unchanged: it can go on, or
// Abort.
//
// # Tables
//
// Once an Add makes the table's builder.Builder.EstimatedSize reach
// TargetTableSize (when above 0), the table is full. It is finished at
// the next Add, whose key k is the next table's first position: span
// fragments reaching past k are clipped to [start, k) in the finished
// table and their rest [k, end) goes into the next table, so that each
// table's points and spans lie within [its first position, the next
// table's first position) and no two tables overlap, as with Writer.
// Spans added while a table is full go into it (clipped at the next key):
// a table is not cut at a span's start, since the table begun there might
// get spans only, which a manifest cannot place after another table (its
// Smallest would be nil). So the last table holds every span after the
// last key, and spans alone (no Add at all) make one table of spans.
// To clip, the writer holds the fragment at the current position (its
// bytes copied) until a later position shows where it ends; it never
// holds more than that one fragment and its values.
//
// # Crash safety and cleanup
//
// Tables are written (builder.Create: fsynced, then renamed) into a
// staging directory inside the output directory, ".bulk-sorted-" and
// digits, which IsTempDir recognises. Finish moves them into the output
// directory, fsyncs it, removes the staging directory and writes
// manifest.json last. A process killed before Finish leaves no table and
// no manifest in the output directory, only the staging directory, whose
// tables are of no use and can be removed. (One killed during Finish, in
// its renames, may leave some NNNNNN.sst without a manifest: an
// incomplete build, which NewWriter and NewSortedWriter refuse to build
// over.) A Finish that fails, an Add or AddSpan that fails other than by
// breaking the order, and Abort remove everything the writer wrote,
// tables already moved into the output directory included, and write no
// manifest; the output directory itself stays.
//
// With Options.NoManifest the caller's own record of the tables is the
// commit point instead: the tables go straight to their names (no
// staging directory, no manifest), each durable once finished, and a
// process killed midway leaves the finished ones for the caller, whose
// record does not list them, to remove. Options.TableName names the
// tables; fsyncs: 2 per table with NoManifest, 2 per table and 3 more
// with a manifest.
//
// A SortedWriter is not safe for concurrent use: Add, AddSpan, Finish
// and Abort must be called from one goroutine at a time.
type SortedWriter struct {
	dir    string
	opts   Options
	target int64
	state  int // sortedOpen, sortedDone or sortedAborted

	stage    string           // staging directory, "" until the first table
	b        *builder.Builder // table being written, nil between tables
	cur      TableInfo        // its info, Path its final path in dir
	tables   []TableInfo      // tables finished, in order
	moved    int              // tables[:moved] are renamed into dir
	manifest bool             // manifest.json is written
	full     bool             // cur reached the target: cut at the next Add

	lastKey []byte // the last key added, if hasKey
	hasKey  bool
	// The last span added, if hasSpan: [spanStart, spanEnd).
	spanStart, spanEnd []byte
	hasSpan            bool

	held heldFragment
}

const (
	sortedOpen = iota
	sortedDone
	sortedAborted
)

// heldFragment is the span fragment at the current position, not yet
// handed to a builder since a cut may still clip it: [start, end) with
// vals[:n], none when n is 0. The buffers are reused.
type heldFragment struct {
	start, end []byte
	vals       [][]byte
	n          int
}

func (h *heldFragment) addValue(v []byte) {
	if h.n < len(h.vals) {
		h.vals[h.n] = append(h.vals[h.n][:0], v...)
	} else {
		h.vals = append(h.vals, bytes.Clone(v))
	}
	h.n++
}

// NewSortedWriter returns a SortedWriter that writes its tables and
// manifest into dir, creating dir (and its parents) if needed. Of opts
// (nil: the defaults) it uses Builder, TargetTableSize (bytes; 0 means a
// single table) and the fields for SortedWriter (TableName, NoManifest,
// EmptyTable, UserProperties); MemoryBudget and TempDir are ignored,
// since it neither buffers nor spills. It returns an error for an empty
// dir, a negative TargetTableSize, invalid Builder options
// (builder.Options.Validate), EmptyTable without NoManifest, a dir that
// exists and is not a directory, or, unless NoManifest, a dir that
// already holds a manifest.json or a table named like the writer's
// (NNNNNN.sst), as NewWriter does. It creates no file: the staging
// directory comes with the first table.
func NewSortedWriter(dir string, opts *Options) (*SortedWriter, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case dir == "":
		return nil, errors.New("bulk: empty output directory")
	case o.TargetTableSize < 0:
		return nil, fmt.Errorf("bulk: negative TargetTableSize %d", o.TargetTableSize)
	case o.EmptyTable && !o.NoManifest:
		return nil, errors.New("bulk: Options.EmptyTable needs NoManifest: a manifest lists only tables with entries, and one listing none says the output is empty")
	}
	if err := o.Builder.Validate(); err != nil {
		return nil, wrap("", err)
	}
	if o.NoManifest {
		// dir may hold other files (a store's tables): only the names
		// written are checked, as each table is begun.
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, fmt.Errorf("bulk: %w", err)
		}
	} else if err := prepareDir(dir); err != nil {
		return nil, err
	}
	return &SortedWriter{dir: dir, opts: o, target: o.TargetTableSize}, nil
}

// AddDeletion adds the entry key = value as Add does, and counts it in
// its table's TableInfo.Deletions: for tables that keep deletions, such
// as a compaction's output above the bottom level, whose count a
// store's compaction trigger reads. The entry is stored as any other;
// what makes it a deletion is the caller's convention (its value).
func (w *SortedWriter) AddDeletion(key, value []byte) error {
	if err := w.Add(key, value); err != nil {
		return err
	}
	w.cur.Deletions++ // Add began the next table first if it had to
	return nil
}

// Add adds the entry key = value; the writer copies what it keeps.
// key must be strictly above the previous key and at or above the
// previous span's start, else Add returns an error wrapping
// builder.ErrKeyOrder (builder.ErrDuplicateKey for a repeated key) that
// names both keys, and the writer is unchanged. It returns ErrFinished
// after Finish and ErrAborted after Abort. Any other error (from the
// builder or the file system, naming the table being written) fails the
// writer: it removes everything it wrote, and later calls return
// ErrFinished.
func (w *SortedWriter) Add(key, value []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.hasKey {
		switch c := bytes.Compare(key, w.lastKey); {
		case c == 0:
			return wrap(w.dir, fmt.Errorf("%w %s", builder.ErrDuplicateKey, QuoteKey(key)))
		case c < 0:
			return wrap(w.dir, fmt.Errorf("%w: key %s after %s", builder.ErrKeyOrder, QuoteKey(key), QuoteKey(w.lastKey)))
		}
	}
	if w.hasSpan && bytes.Compare(key, w.spanStart) < 0 {
		return wrap(w.dir, fmt.Errorf("%w: key %s after span start %s", builder.ErrKeyOrder, QuoteKey(key), QuoteKey(w.spanStart)))
	}
	if err := w.add(key, value); err != nil {
		w.cleanup()
		return err
	}
	return nil
}

func (w *SortedWriter) add(key, value []byte) error {
	// A held fragment ending at or below key cannot be clipped by a cut
	// at key or later: it goes whole into the current table.
	if w.held.n > 0 && bytes.Compare(w.held.end, key) <= 0 {
		if err := w.emitHeld(nil, false); err != nil {
			return err
		}
	}
	if w.full {
		if err := w.emitHeld(key, true); err != nil {
			return err
		}
		if err := w.finishTable(); err != nil {
			return err
		}
		w.full = false
	}
	if w.b == nil {
		if err := w.startTable(); err != nil {
			return err
		}
	}
	if w.cur.Entries == 0 {
		w.cur.Smallest = append([]byte{}, key...)
	}
	if err := w.b.Add(key, value); err != nil {
		return wrap(w.stagedPath(), err)
	}
	w.cur.Entries++
	w.lastKey = append(w.lastKey[:0], key...)
	w.hasKey = true
	if w.target > 0 && w.b.EstimatedSize() >= w.target {
		w.full = true
	}
	return nil
}

// AddSpan adds the span [start, end) with value (a range deletion or a
// range key, as builder.Builder.AddSpan takes); the writer copies what it
// keeps. start must be below end in bytes.Compare order, at or above the
// previous key, and at or above the previous span's end unless it repeats
// the previous span's start and end (another value over the same
// fragment), else AddSpan returns an error wrapping builder.ErrKeyOrder
// that names the keys, and the writer is unchanged. With
// Options.Builder asking for FormatVersion 1 to 3 or HashIndex it returns
// an error (spans need the version 4 layout), the writer unchanged. It
// returns ErrFinished after Finish and ErrAborted after Abort; any other
// error fails the writer as for Add.
func (w *SortedWriter) AddSpan(start, end, value []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if err := checkSpanFormat(w.opts.Builder); err != nil {
		return err
	}
	if bytes.Compare(start, end) >= 0 {
		return wrap(w.dir, fmt.Errorf("%w: span start %s is not below its end %s", builder.ErrKeyOrder, QuoteKey(start), QuoteKey(end)))
	}
	if w.hasKey && bytes.Compare(start, w.lastKey) < 0 {
		return wrap(w.dir, fmt.Errorf("%w: span start %s after key %s", builder.ErrKeyOrder, QuoteKey(start), QuoteKey(w.lastKey)))
	}
	same := w.hasSpan && bytes.Equal(start, w.spanStart) && bytes.Equal(end, w.spanEnd)
	if w.hasSpan && !same && bytes.Compare(start, w.spanEnd) < 0 {
		return wrap(w.dir, fmt.Errorf("%w: span [%s, %s) overlaps the previous span [%s, %s)", builder.ErrKeyOrder, QuoteKey(start), QuoteKey(end), QuoteKey(w.spanStart), QuoteKey(w.spanEnd)))
	}
	if same && w.held.n > 0 {
		// The held fragment is [start, end): no key came after start, so
		// no cut or flush touched it.
		w.held.addValue(value)
		return nil
	}
	// The held fragment ends at or below start, so below any later cut.
	if err := w.emitHeld(nil, false); err != nil {
		w.cleanup()
		return err
	}
	w.held.start = append(w.held.start[:0], start...)
	w.held.end = append(w.held.end[:0], end...)
	w.held.n = 0
	w.held.addValue(value)
	w.spanStart = append(w.spanStart[:0], start...)
	w.spanEnd = append(w.spanEnd[:0], end...)
	w.hasSpan = true
	return nil
}

// emitHeld hands the held fragment to the current table (starting one if
// needed): whole, unless clip, when only its part below limit goes and
// the rest [limit, end) stays held for the next table.
func (w *SortedWriter) emitHeld(limit []byte, clip bool) error {
	h := &w.held
	if h.n == 0 || clip && bytes.Compare(h.start, limit) >= 0 {
		return nil
	}
	end := h.end
	cut := clip && bytes.Compare(limit, end) < 0
	if cut {
		end = limit
	}
	if w.b == nil {
		if err := w.startTable(); err != nil {
			return err
		}
	}
	for _, v := range h.vals[:h.n] {
		if err := w.b.AddSpan(h.start, end, v); err != nil {
			return wrap(w.stagedPath(), err)
		}
	}
	w.cur.Spans++ // one fragment, whatever its number of values
	if cut {
		h.start = append(h.start[:0], limit...)
	} else {
		h.n = 0
	}
	return nil
}

// stagedPath returns the path the current table is written to: in the
// staging directory, or with NoManifest its final path.
func (w *SortedWriter) stagedPath() string {
	if w.opts.NoManifest {
		return w.cur.Path
	}
	return filepath.Join(w.stage, filepath.Base(w.cur.Path))
}

// startTable starts the next table in the staging directory, creating
// that directory first if needed, or with NoManifest under its name.
func (w *SortedWriter) startTable() error {
	n := len(w.tables) + 1
	name := fmt.Sprintf("%06d.sst", n)
	if w.opts.TableName != nil {
		name = w.opts.TableName(n)
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || name == ManifestName || builder.IsTempFile(name) || IsTempDir(name) {
			return wrap(w.dir, fmt.Errorf("Options.TableName(%d) = %q: not a table's base name", n, name))
		}
	}
	final := filepath.Join(w.dir, name)
	path := final
	if !w.opts.NoManifest {
		if w.stage == "" {
			d, err := os.MkdirTemp(w.dir, stageDirPrefix+"*")
			if err != nil {
				return wrap("staging directory", err)
			}
			w.stage = d
		}
		path = filepath.Join(w.stage, name)
	}
	// builder.Create would replace a file silently: an input table, or
	// an earlier table of this build given the same name.
	for _, p := range []string{final, path} {
		if _, err := os.Lstat(p); err == nil {
			return wrap(p, fmt.Errorf("table %d: %w", n, fs.ErrExist))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return wrap("", err)
		}
	}
	b, err := builder.Create(path, w.opts.Builder)
	if err != nil {
		return wrap("", err) // "create PATH: ..."
	}
	w.b = b
	w.cur = TableInfo{Path: final}
	return nil
}

// finishTable finishes the current table into the staging directory
// (with NoManifest, under its name).
func (w *SortedWriter) finishTable() error {
	b := w.b
	w.b = nil
	if w.cur.Entries > 0 {
		w.cur.Largest = append([]byte{}, w.lastKey...)
	}
	if w.opts.UserProperties != nil {
		props := w.opts.UserProperties(w.cur)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if err := b.SetUserProperty(name, props[name]); err != nil {
				b.Abort()
				return wrap(w.stagedPath(), err)
			}
		}
	}
	if err := b.Finish(); err != nil { // the builder removes its file
		return wrap("", err)
	}
	st, err := os.Stat(w.stagedPath())
	if err != nil {
		return wrap("", err)
	}
	w.cur.Size = st.Size()
	w.tables = append(w.tables, w.cur)
	if w.opts.NoManifest {
		w.moved++ // in place: cleanup removes it
	}
	w.cur = TableInfo{}
	return nil
}

// Finish finishes the last table, moves the tables from the staging
// directory into the output directory, fsyncs it, removes the staging
// directory, writes manifest.json (fsynced, as is the directory after
// it) and returns the tables in key order, with their final paths. With
// no entries and no spans it writes no table and a manifest listing
// none. With Options.NoManifest the tables are in place already: it
// finishes the last one and writes nothing else, and with no entries
// and no spans it writes no table, or one empty table (Entries 0, nil
// Smallest and Largest) with Options.EmptyTable. On error (the builder's or the file system's, naming the file)
// it removes every table written, moved ones included, and the staging
// directory, leaves no manifest, and returns the error. It returns
// ErrFinished once Finish has been called, or after a failed Add or
// AddSpan, and ErrAborted after Abort.
func (w *SortedWriter) Finish() ([]TableInfo, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	tables, err := w.finish()
	if err != nil {
		w.cleanup()
		return nil, err
	}
	w.state = sortedDone
	return tables, nil
}

func (w *SortedWriter) finish() ([]TableInfo, error) {
	if err := w.emitHeld(nil, false); err != nil {
		return nil, err
	}
	if w.b == nil && len(w.tables) == 0 && w.opts.EmptyTable {
		if err := w.startTable(); err != nil {
			return nil, err
		}
	}
	if w.b != nil {
		if err := w.finishTable(); err != nil {
			return nil, err
		}
	}
	if w.opts.NoManifest {
		return w.tables, nil // each durable under its name (builder.Create)
	}
	for _, t := range w.tables {
		if err := os.Rename(filepath.Join(w.stage, filepath.Base(t.Path)), t.Path); err != nil {
			return nil, wrap("", err) // "rename STAGE/NAME DIR/NAME: ..."
		}
		w.moved++
	}
	if w.moved > 0 {
		if err := syncDir(w.dir); err != nil {
			return nil, err
		}
	}
	if w.stage != "" {
		if err := os.RemoveAll(w.stage); err != nil {
			return nil, wrap("removing the staging directory", err)
		}
		w.stage = ""
	}
	if err := writeManifest(w.dir, w.opts.Builder, w.tables); err != nil {
		return nil, err
	}
	w.manifest = true
	if err := syncDir(w.dir); err != nil {
		return nil, err
	}
	return w.tables, nil
}

// syncDir fsyncs the directory dir, so that the renames into it last.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return wrap("fsync directory", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		return wrap("fsync directory", err)
	}
	return nil
}

// Abort gives the writer up: it removes every table it wrote (those
// Finish moved already included), the staging directory and any
// manifest it wrote, leaving the output directory in place; later calls
// return ErrAborted. After a successful Finish it does nothing and
// returns nil, as after a failed one (which cleaned up already). It
// returns nil unless removing a file fails.
func (w *SortedWriter) Abort() error {
	if w.state != sortedOpen {
		return nil
	}
	err := w.cleanup()
	w.state = sortedAborted
	return err
}

func (w *SortedWriter) check() error {
	switch w.state {
	case sortedAborted:
		return ErrAborted
	case sortedDone:
		return ErrFinished
	}
	return nil
}

// cleanup removes everything the writer wrote and marks it done.
func (w *SortedWriter) cleanup() error {
	w.state = sortedDone
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	if w.b != nil {
		keep(w.b.Abort())
		w.b = nil
	}
	if w.manifest {
		keep(os.Remove(filepath.Join(w.dir, ManifestName)))
		w.manifest = false
	}
	for _, t := range w.tables[:w.moved] {
		keep(os.Remove(t.Path))
	}
	w.tables, w.moved = nil, 0
	if w.stage != "" {
		keep(os.RemoveAll(w.stage))
		w.stage = ""
	}
	w.held = heldFragment{}
	if first != nil {
		return wrap("cleanup", first)
	}
	return nil
}
