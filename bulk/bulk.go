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
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/builder"
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

	// The fields below are SortedWriter's; Writer ignores them.

	// TableName names the tables: table n (1 for the first) is written to
	// dir joined with TableName(n), a base name (no path separator, not
	// ManifestName, not a temporary file's name: builder.IsTempFile),
	// such as a store's own file number. nil: "000001.sst",
	// "000002.sst", ... A name that exists in dir, or in the staging
	// directory, when its table is begun is an error: the writer
	// replaces no file.
	TableName func(n int) string
	// NoManifest writes no manifest.json, for a caller whose own record
	// of its tables (a store's manifest, a version edit) is the commit
	// point: each table goes straight to its name in dir, written by
	// builder.Create (a temporary file, fsynced, renamed to the name,
	// the directory fsynced: 2 fsyncs a table, where a manifest's staged
	// build takes 2 a table and 3 more), with no staging directory, and
	// dir need not be empty, only free of the tables' names. When
	// Finish returns, every table is durable under its name. A process
	// killed midway leaves the tables finished so far, complete, under
	// their names, and at most one temporary file (builder.IsTempFile):
	// the caller's record does not list them, and it removes them. A
	// failed Finish, a failed Add or AddSpan, and Abort remove every
	// table written, as with a manifest.
	NoManifest bool
	// EmptyTable makes Finish write one table with no entry and no span
	// when nothing was added, rather than no table: for a store that
	// replaces its inputs with a table whatever it holds. It needs
	// NoManifest (a manifest lists only tables with entries; one listing
	// none says the output is empty).
	EmptyTable bool
	// UserProperties, when set, is called once for each table, just
	// before the table is finished, with its TableInfo so far (Path,
	// Smallest, Largest, Entries, Deletions, Spans; Size is 0) and
	// returns the user properties to store in it
	// (builder.Builder.SetUserProperty, whose limits apply: a property
	// breaking one fails the writer, as a builder error does). nil: none.
	UserProperties func(t TableInfo) map[string][]byte
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
	// Deletions is the number of the table's entries added as deletions
	// (SortedWriter.AddDeletion: the tombstones a compaction above the
	// bottom keeps), which a store's compaction trigger may count;
	// absent from the manifest when 0.
	Deletions int64 `json:"deletions,omitempty"`
	// Size is the table's file size in bytes.
	Size int64 `json:"size"`
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
