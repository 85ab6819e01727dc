// Package bulk builds tables from entries in any order, at any scale, within
// a memory budget: the external sort behind bulk loading (RocksDB's
// SstFileWriter and IngestExternalFile, HBase's HFileOutputFormat2).
//
// A Writer holds added entries in memory until they reach
// Options.MemoryBudget, then sorts them and spills them as a sorted run to a
// temporary directory. Runs are tables of this module's format (no filter,
// snappy, 32 KiB blocks): the format is already a sorted run. Finish merges
// the runs (and what is still in memory) with a k-way merge (in passes when
// there are more runs than the budget allows merging at once) into tables of
// about Options.TargetTableSize bytes, named in key order (000001.sst,
// 000002.sst, ...), which never overlap, and writes dir/manifest.json
// listing them. Input that fits the budget is sorted in memory and written
// without a spill.
//
// For input already in key order (a compaction's merged iterators),
// SortedWriter writes the same tables and manifest streaming, without
// Writer's sort and spill.
//
// # Memory
//
// The entries held before a spill take their key and value bytes plus 24
// bytes each; the writer spills once they reach MemoryBudget. Around them it
// keeps arena slack (at most one chunk of min(MemoryBudget/8, 4 MiB)) and
// the slack of the growing entry index, so the Go heap the writer holds
// stays under 2 x MemoryBudget + 16 MiB whatever the input size, plus what
// the builder keeps for the table being written (its index and filter:
// about 3 bytes per entry with the default Bloom(10) filter and 4 KiB
// blocks, 8 more per entry, a key hash, once the table is partitioned:
// once its index and filter pass builder.Options.PartitionThreshold, 240
// KiB by default, about 120k entries of 16-byte keys;
// more with a hash index), which TargetTableSize bounds.
//
// When runs exist, Finish spills the in-memory entries too, drops the
// buffer and calls debug.FreeOSMemory once, so that its pages go back to
// the OS before the merge. The merge then holds only the run readers (a few
// KiB each, their blocks in a private cache of 48 MiB off the Go heap),
// their read-ahead windows (up to 1 MiB each, lent by that cache or, when
// it cannot, on the heap: the number of runs merged at once is capped by
// the budget for this) and the output builder.
//
// # Errors and cleanup
//
// A key added twice makes Finish fail with a *DuplicateKeyError, which
// matches builder.ErrDuplicateKey (and so builder.ErrKeyOrder) under
// errors.Is and names the key. A Finish that fails, and Abort, remove every
// table the writer wrote, its spilled runs and their directory; no manifest
// is written. The output directory itself stays (NewWriter creates it when
// missing), empty of the writer's files. A process killed during a build
// cleans up nothing: its spill directory stays, recognised by IsTempDir.
//
// Error messages begin "bulk: " once: an error of the builder or the
// reader passed on loses its own "sstable: " prefix in the message (the
// cause stays for errors.Is and errors.As). They name what was being
// written where the writer knows it: the table (a builder's error names
// its file, "bulk: DIR/000003.sst: ..."), or the output directory for
// errors about the input (a duplicate key, keys or spans out of order:
// "bulk: DIR: duplicate key \"k\"").
package bulk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
)

// DefaultMemoryBudget is the memory budget of a Writer whose
// Options.MemoryBudget is 0: 64 MiB of entries.
const DefaultMemoryBudget = 64 << 20

// ManifestName is the name of the manifest Finish writes in the output
// directory.
const ManifestName = "manifest.json"

// runDirPrefix begins the name of a Writer's spill directory, followed by
// random digits.
const runDirPrefix = ".bulk-runs-"

// IsTempDir reports whether name, a base name, is a temporary directory
// of a bulk build: a Writer's spill directory (".bulk-runs-" and digits,
// in Options.TempDir or the output directory), a SortedWriter's staging
// directory (".bulk-sorted-" and digits, in the output directory: the
// tables it has finished, moved out by Finish), or the working directory of
// "sst build" ("." + the output's base name + ".bulk-" and digits, beside
// the output table, or inside the output directory with -split), which
// holds its spilled runs and unfinished tables. Finish and Abort remove
// them; a process killed during a build leaves its directory behind, with
// up to a whole input's worth of runs. Once that process has gone, nothing
// in it is of use and it can be removed; "sst build" removes the ones of
// its own output that no running build holds.
func IsTempDir(name string) bool {
	if rest, ok := strings.CutPrefix(name, runDirPrefix); ok {
		return allDigits(rest)
	}
	if rest, ok := strings.CutPrefix(name, stageDirPrefix); ok {
		return allDigits(rest)
	}
	i := strings.LastIndex(name, ".bulk-")
	return i >= 2 && name[0] == '.' && allDigits(name[i+len(".bulk-"):])
}

// allDigits reports whether s is one or more decimal digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// entryOverhead is what each entry held in memory costs besides its key and
// value bytes: its index record.
const entryOverhead = 24

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

// ErrAborted is returned by Add and Finish after Abort.
var ErrAborted = errors.New("bulk: writer aborted")

// ErrFinished is returned by Add and Finish once Finish has been called,
// whether it succeeded or failed, or once a spill in Add has failed; after
// Abort they return ErrAborted instead. (builder.ErrClosed is the
// builder's error for any call after its Finish or Abort.)
var ErrFinished = errors.New("bulk: writer already finished")

// Options configure a Writer. A nil *Options means the defaults.
type Options struct {
	// Builder configures every table written (not the spilled runs, which
	// are always unfiltered and snappy-compressed). nil means the builder's
	// defaults: 4 KiB blocks, snappy, Bloom(10).
	Builder *builder.Options
	// MemoryBudget is how many bytes of entries (key and value bytes plus
	// 24 bytes each) the writer holds before it sorts them and spills them
	// as a run. 0 means DefaultMemoryBudget (64 MiB); negative is an error.
	MemoryBudget int64
	// TargetTableSize is the size in bytes at which a table is finished and
	// the next one started (builder.EstimatedSize, so tables end up about
	// this size, slightly above). 0 means a single table; negative is an
	// error.
	TargetTableSize int64
	// TempDir is the directory under which spilled runs are written, in a
	// directory of their own (".bulk-runs-*") removed by Finish and Abort.
	// "" means the output directory.
	TempDir string
}

// TableInfo describes one table a Writer wrote.
type TableInfo struct {
	// Path is the table's file: dir joined with its name from Finish and
	// ReadManifest; in the manifest file, the name relative to the
	// manifest's directory.
	Path string `json:"path"`
	// Smallest and Largest are the table's first and last keys (base64 in
	// the manifest's JSON).
	Smallest []byte `json:"smallest"`
	Largest  []byte `json:"largest"`
	// Entries is the number of entries in the table.
	Entries int64 `json:"entries"`
	// Spans is the number of span fragments in the table (Writer.AddSpan;
	// absent from the manifest when 0). Smallest and Largest stay the
	// point entries' bounds (nil in a table of spans only); the table's
	// spans lie above the previous table's Largest and below the next
	// table's Smallest (the first table's from the smallest key, the
	// last table's to the largest).
	Spans int64 `json:"spans,omitempty"`
	// Size is the table's file size in bytes.
	Size int64 `json:"size"`
}

// DuplicateKeyError reports a key added more than once. It matches
// builder.ErrDuplicateKey and builder.ErrKeyOrder under errors.Is.
type DuplicateKeyError struct {
	Key []byte // the repeated key
	Dir string // the output directory of the Writer that met it ("": not known)
}

// Error returns "bulk: ", the directory and ": " when Dir is set,
// "duplicate key " and the key, quoted by QuoteKey: "bulk: out: duplicate
// key \"k\"".
func (e *DuplicateKeyError) Error() string {
	if e.Dir != "" {
		return "bulk: " + e.Dir + ": duplicate key " + QuoteKey(e.Key)
	}
	return "bulk: duplicate key " + QuoteKey(e.Key)
}

// Unwrap returns builder.ErrDuplicateKey.
func (e *DuplicateKeyError) Unwrap() error { return builder.ErrDuplicateKey }

// QuoteKey renders a key for messages: Go-quoted, cut after 100 bytes with
// the full length noted.
func QuoteKey(k []byte) string {
	const max = 100
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// Phase is the stage a Writer is in, as reported by Stats.
type Phase int32

// The phases of a Writer, in order.
const (
	PhaseReading  Phase = iota // taking entries through Add
	PhaseSpilling              // sorting and writing a run
	PhaseMerging               // in Finish: merging runs into tables
	PhaseDone                  // Finish returned, or Abort was called
)

// String returns the phase's name: "reading", "spilling", "merging" or
// "done".
func (p Phase) String() string {
	switch p {
	case PhaseReading:
		return "reading"
	case PhaseSpilling:
		return "spilling"
	case PhaseMerging:
		return "merging"
	case PhaseDone:
		return "done"
	}
	return fmt.Sprintf("Phase(%d)", int32(p))
}

// Stats are a Writer's progress figures.
type Stats struct {
	Phase   Phase
	Entries int64 // entries added
	Bytes   int64 // key and value bytes added
	Runs    int64 // runs spilled so far
	Written int64 // entries written to tables so far
	Tables  int64 // tables finished so far
}

// Writer sorts entries added in any order into non-overlapping tables.
// Add, Finish and Abort must not be called concurrently with each other,
// except that Abort may be called from another goroutine while Finish runs
// (it then makes Finish fail with ErrAborted and clean up). Stats may be
// called at any time from any goroutine.
type Writer struct {
	dir       string
	opts      Options
	budget    int64
	chunkSize int

	// In-memory entries: key and value bytes in chunks, refs index them.
	chunks [][]byte // of chunkSize bytes each
	bigs   [][]byte // one large entry each
	cur    int      // chunk being filled
	refs   []ref
	used   int64 // bytes of entries held, overhead included

	runDir string
	runs   []string // run files, in creation order
	runSeq int

	// Spans (AddSpan, spans.go): held until Finish, then fragmented into
	// frags, of which the tables written take from nextFrag on.
	spans    []bulkSpan
	frags    []fragment
	nextFrag int

	mu      sync.Mutex // guards tables and cleanup
	tables  []string   // table files written (for cleanup)
	pending *builder.Builder
	done    bool // finished or cleaned up

	aborted   atomic.Bool
	finishing atomic.Bool // Finish is running
	phase     atomic.Int32
	entries   atomic.Int64
	bytes     atomic.Int64
	nruns     atomic.Int64
	written   atomic.Int64
	ntables   atomic.Int64
}

// ref locates one in-memory entry: its key at chunks[chunk][off:], or at
// bigs[chunk&^bigChunk][0:] when chunk has the bigChunk bit, followed by its
// value.
type ref struct {
	prefix uint64 // the key's first 8 bytes, big-endian, zero-padded
	chunk  uint32
	off    uint32
	klen   uint32
	vlen   uint32
}

const bigChunk = 1 << 31

var ourNames = regexp.MustCompile(`^([0-9]{6,}\.sst|manifest\.json)$`)

// NewWriter returns a Writer that writes its tables and manifest into dir,
// creating dir (and its parents) if needed. It returns an error for a
// negative MemoryBudget or TargetTableSize, a dir that exists and is not a
// directory, or a dir that already holds a manifest.json or a table named
// like the writer's (NNNNNN.sst), so that a manifest never lists tables of
// two builds.
func NewWriter(dir string, opts *Options) (*Writer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case dir == "":
		return nil, errors.New("bulk: empty output directory")
	case o.MemoryBudget < 0:
		return nil, fmt.Errorf("bulk: negative MemoryBudget %d", o.MemoryBudget)
	case o.TargetTableSize < 0:
		return nil, fmt.Errorf("bulk: negative TargetTableSize %d", o.TargetTableSize)
	}
	budget := o.MemoryBudget
	if budget == 0 {
		budget = DefaultMemoryBudget
	}
	w := &Writer{dir: dir, opts: o, budget: budget}
	w.chunkSize = int(min(max(budget/8, 64<<10), 4<<20))
	if o.TempDir != "" {
		if st, err := os.Stat(o.TempDir); err != nil {
			return nil, fmt.Errorf("bulk: TempDir: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("bulk: TempDir %s is not a directory", o.TempDir)
		}
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	return w, nil
}

// prepareDir makes dir ready for a build's output (NewWriter,
// NewSortedWriter): it creates dir (and its parents) when missing, and
// returns an error for a dir that is not a directory or already holds a
// manifest.json or a table named NNNNNN.sst.
func prepareDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("bulk: %w", err)
		}
	case err != nil:
		return fmt.Errorf("bulk: %w", err)
	case !st.IsDir():
		return fmt.Errorf("bulk: %s is not a directory", dir)
	default:
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("bulk: %w", err)
		}
		for _, e := range ents {
			if ourNames.MatchString(e.Name()) {
				return fmt.Errorf("bulk: %s already holds %s from another build; use an empty directory", dir, e.Name())
			}
		}
	}
	return nil
}

// Add adds one entry. Keys may come in any order; the writer copies both
// slices before it returns. It returns an error after Finish (ErrFinished)
// or Abort (ErrAborted), for a key or value of 4 GiB or more, or when a
// spill fails (the writer has then cleaned up and is finished). A duplicate
// key is reported by Finish, or by the Add whose spill finds it.
func (w *Writer) Add(key, value []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if len(key) > math.MaxUint32 || len(value) > math.MaxUint32 || len(key)+len(value) > math.MaxUint32 {
		return fmt.Errorf("bulk: entry of %d key and %d value bytes too large (limit 4 GiB)", len(key), len(value))
	}
	n := len(key) + len(value)
	var r ref
	if n > w.chunkSize/4 {
		// A large entry gets an allocation of its own, dropped at the next
		// spill.
		c := make([]byte, 0, n)
		w.bigs = append(w.bigs, append(append(c, key...), value...))
		r.chunk = bigChunk | uint32(len(w.bigs)-1)
	} else {
		if w.cur >= len(w.chunks) || len(w.chunks[w.cur])+n > cap(w.chunks[w.cur]) {
			w.nextChunk()
		}
		c := w.chunks[w.cur]
		r.chunk, r.off = uint32(w.cur), uint32(len(c))
		w.chunks[w.cur] = append(append(c, key...), value...)
	}
	r.klen, r.vlen = uint32(len(key)), uint32(len(value))
	r.prefix = keyPrefix(key)
	w.refs = append(w.refs, r)
	w.used += int64(n) + entryOverhead
	w.entries.Add(1)
	w.bytes.Add(int64(n))
	if w.used >= w.budget {
		if err := w.spill(); err != nil {
			w.fail()
			return err
		}
	}
	return nil
}

// nextChunk makes w.cur a chunk with room for a small entry: the next
// reusable chunk of chunkSize bytes, or a new one.
func (w *Writer) nextChunk() {
	if w.cur++; w.cur < len(w.chunks) {
		return
	}
	w.chunks = append(w.chunks, make([]byte, 0, w.chunkSize))
	w.cur = len(w.chunks) - 1
}

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

func (w *Writer) entry(r ref) []byte {
	if r.chunk&bigChunk != 0 {
		return w.bigs[r.chunk&^bigChunk]
	}
	return w.chunks[r.chunk]
}

func (w *Writer) key(r ref) []byte {
	c := w.entry(r)
	return c[r.off : r.off+r.klen : r.off+r.klen]
}

func (w *Writer) value(r ref) []byte {
	c := w.entry(r)
	s := r.off + r.klen
	return c[s : s+r.vlen : s+r.vlen]
}

// keyPrefix returns the first 8 bytes of key as a big-endian number,
// zero-padded: keys whose prefixes differ compare as their prefixes do.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

// sortRefs sorts the in-memory entries by key: by their 8-byte prefixes,
// then, for equal prefixes, by the whole keys.
func (w *Writer) sortRefs() {
	slices.SortFunc(w.refs, func(a, b ref) int {
		if a.prefix != b.prefix {
			if a.prefix < b.prefix {
				return -1
			}
			return 1
		}
		return bytes.Compare(w.key(a), w.key(b))
	})
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

// reset empties the in-memory buffer, keeping its chunks for reuse and
// dropping its large entries.
func (w *Writer) reset() {
	for i := range w.chunks {
		w.chunks[i] = w.chunks[i][:0]
	}
	w.cur = 0
	w.bigs = nil
	w.refs = w.refs[:0]
	w.used = 0
}

// release drops the in-memory buffer entirely.
func (w *Writer) release() {
	w.chunks, w.bigs, w.refs, w.used, w.cur = nil, nil, nil, 0, 0
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

// Stats returns the writer's progress. It is safe to call from any
// goroutine at any time.
func (w *Writer) Stats() Stats {
	return Stats{
		Phase:   Phase(w.phase.Load()),
		Entries: w.entries.Load(),
		Bytes:   w.bytes.Load(),
		Runs:    w.nruns.Load(),
		Written: w.written.Load(),
		Tables:  w.ntables.Load(),
	}
}

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
