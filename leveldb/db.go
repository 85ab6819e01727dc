package leveldb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/merge"
)

// ErrLocked is wrapped by the error OpenDB returns for a database that
// another process (LevelDB, goleveldb) has open: it holds the LOCK file.
var ErrLocked = errors.New("leveldb: database is locked by another process")

// ErrComparator is wrapped by the error OpenDB returns for a database
// whose MANIFEST names a comparator other than BytewiseComparator.
var ErrComparator = errors.New("leveldb: unsupported comparator")

// Options configure OpenDB. The zero value (or nil) maps the tables and
// caches decoded blocks in reader.DefaultCache.
type Options struct {
	// Cache holds the tables' decoded blocks. nil: reader.DefaultCache().
	Cache *cache.Cache
	// NoMmap reads the tables with ReadAt rather than mapping them.
	NoMmap bool
	// ReadAhead lets forward scans decode the tables' next data blocks
	// on a second goroutine (TableOptions.ReadAhead, the package doc's
	// Scans). Off by default.
	ReadAhead bool
	// SkipLogDamage replays the write-ahead logs as LevelDB 1.23 does
	// with paranoid_checks off, its default: a damaged log record (a
	// checksum mismatch, a length past its block, an unknown type,
	// fragments out of order, a write batch that does not decode) is
	// skipped, with what LevelDB's log reader drops around it (see
	// lsmdb's LogReader.Dropped: at a checksum mismatch, the rest of the
	// record's 32 KiB block), and the replay goes on; DB.LogDamage says
	// what was skipped. By default such damage fails OpenDB with an error
	// wrapping format.ErrCorrupt, as with LevelDB's paranoid_checks: the
	// view never silently lacks a write that reached the log. Either way
	// a record torn by a crash at a log's end is dropped silently, and
	// the MANIFEST is read strictly, as LevelDB reads it. A batch that
	// fails part way keeps its records before the bad one, as LevelDB's
	// keeps them.
	SkipLogDamage bool
}

// maxLogDamage bounds the errors DB.LogDamage keeps.
const maxLogDamage = 100

// DB is a LevelDB database opened read-only: a consistent view of it as
// of OpenDB. It is safe for concurrent use.
type DB struct {
	dir     string
	lock    *lsmdb.Lock
	files   []FileInfo
	tables  []*lsmtable.LazyTable
	levels  []merge.Level
	lastSeq uint64
	mem     *memLevel // the writes replayed from the logs; in levels unless empty

	logDamage  []error // the first maxLogDamage places SkipLogDamage skipped
	logDamageN int     // all of them
}

// OpenDB opens the LevelDB database in directory dir read-only: it reads
// CURRENT, the MANIFEST it names and the write-ahead logs the MANIFEST
// has not seen flushed, and takes a shared lock on the LOCK file (see the
// package documentation). Tables are opened on first use, each once. It
// returns an error wrapping ErrLocked for a database another process has
// open, ErrComparator for a comparator other than BytewiseComparator,
// format.ErrCorrupt (naming the file and offset) for damage in CURRENT,
// the MANIFEST or a log, and os.ErrNotExist alone when dir holds no
// database (no CURRENT file). A file the database names and dir lacks,
// the MANIFEST that CURRENT names or a live table the MANIFEST names, is
// damage too: the error wraps both os.ErrNotExist and format.ErrCorrupt.
func OpenDB(dir string, o *Options) (*DB, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	lock, err := lsmdb.LockDir(dir, ErrLocked, "leveldb")
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, lock: lock, mem: &memLevel{dir: dir}}
	if err := db.recover(&opts); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) recover(opts *Options) error {
	current := filepath.Join(db.dir, "CURRENT")
	b, err := os.ReadFile(current)
	if err != nil {
		return fmt.Errorf("leveldb: open %s: %w", db.dir, err)
	}
	name := strings.TrimSuffix(string(b), "\n")
	if len(name) == len(b) || !strings.HasPrefix(name, "MANIFEST-") || strings.ContainsAny(name, `/\`) {
		return &format.CorruptError{File: current, Section: format.SectionFile, Msg: fmt.Sprintf("%q does not name a MANIFEST-NNNNNN file on one line", b)}
	}
	manifest := filepath.Join(db.dir, name)
	data, err := os.ReadFile(manifest)
	if errors.Is(err, os.ErrNotExist) {
		// CURRENT names it: the database is damaged, as when a table the
		// MANIFEST names is missing (LevelDB: "CURRENT points to a
		// non-existent file").
		return fmt.Errorf("leveldb: open %s: %s, named by CURRENT, is missing: %w (%w)", db.dir, name, err, format.ErrCorrupt)
	}
	if err != nil {
		return fmt.Errorf("leveldb: open %s: %w", db.dir, err)
	}
	var v version
	r := lsmdb.LogReader{Data: data}
	records := 0
	for {
		rec, off, ok, err := r.Next()
		if err == nil && ok {
			err = v.apply(rec, off)
		}
		if err != nil {
			return inFile(manifest, err)
		}
		if !ok {
			break
		}
		records++
	}
	if records == 0 {
		return &format.CorruptError{File: manifest, Section: format.SectionFile, Msg: "no version edits"}
	}
	if err := v.complete(); err != nil {
		return inFile(manifest, err)
	}
	if v.comparator != "" && v.comparator != BytewiseComparator {
		return fmt.Errorf("%w: %s names comparator %q; only %s is read", ErrComparator, manifest, v.comparator, BytewiseComparator)
	}
	if db.files, err = v.live(); err != nil {
		return inFile(manifest, err)
	}
	db.lastSeq = v.lastSeq

	// The directory's logs and tables.
	ents, err := os.ReadDir(db.dir)
	if err != nil {
		return fmt.Errorf("leveldb: open %s: %w", db.dir, err)
	}
	var logs []uint64
	tableExt := map[uint64]string{}
	for _, e := range ents {
		base, ext, ok := strings.Cut(e.Name(), ".")
		num, err := strconv.ParseUint(base, 10, 64)
		if !ok || err != nil {
			continue
		}
		switch ext {
		case "log":
			if num >= v.logNumber || num == v.prevLogNumber && num != 0 {
				logs = append(logs, num)
			}
		case "ldb":
			tableExt[num] = ".ldb"
		case "sst":
			if tableExt[num] == "" {
				tableExt[num] = ".sst"
			}
		}
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i] < logs[j] })
	rp := replay{lastSeq: db.lastSeq}
	for _, num := range logs {
		path := filepath.Join(db.dir, fmt.Sprintf("%06d.log", num))
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("leveldb: open %s: %w", db.dir, err)
		}
		r := lsmdb.LogReader{Data: data}
		if opts.SkipLogDamage {
			r.Dropped = func(err error) { db.noteLogDamage(inFile(path, err)) }
		}
		for {
			rec, off, ok, err := r.Next()
			if err == nil && ok {
				if err = rp.apply(rec, off); err != nil && opts.SkipLogDamage {
					// LevelDB's recovery ignores the batch's error, its
					// records before the error applied, and takes its
					// sequence numbers as used.
					db.noteLogDamage(inFile(path, err))
					rp.noteSeq(rec)
					err = nil
				}
			}
			if err != nil {
				return inFile(path, err)
			}
			if !ok {
				break
			}
		}
	}
	db.lastSeq = rp.lastSeq
	if len(rp.ops) > 0 {
		db.mem.entries = rp.level()
		db.levels = append(db.levels, db.mem)
	}

	// The tables, opened on first use.
	topts := &TableOptions{Cache: opts.Cache, NoMmap: opts.NoMmap, ReadAhead: opts.ReadAhead, Keys: KeysInternal} // a database holds internal keys
	var run *lsmtable.Level
	for i, f := range db.files {
		ext, ok := tableExt[f.Number]
		if !ok {
			// LevelDB reports this as corruption too ("missing files").
			return fmt.Errorf("leveldb: open %s: table %06d.ldb of level %d, named by %s, is missing: %w (%w)", db.dir, f.Number, f.Level, name, os.ErrNotExist, format.ErrCorrupt)
		}
		path := filepath.Join(db.dir, fmt.Sprintf("%06d%s", f.Number, ext))
		lt := &lsmtable.LazyTable{
			Path:     path,
			Smallest: f.Smallest[:len(f.Smallest)-lsmtable.TrailerLen],
			Largest:  f.Largest[:len(f.Largest)-lsmtable.TrailerLen],
			Open: func() (*lsmtable.Table, error) {
				t, err := OpenTable(path, topts)
				if err != nil {
					return nil, sizeMismatch(err, path, f.Size)
				}
				return t.core, nil
			},
		}
		db.tables = append(db.tables, lt)
		if f.Level == 0 || run == nil || db.files[i-1].Level != f.Level {
			run = &lsmtable.Level{}
			db.levels = append(db.levels, run)
		}
		run.Tables = append(run.Tables, lt)
		if f.Level == 0 {
			run = nil
		}
	}
	return nil
}

// sizeMismatch adds to err, the error opening the table at path, the
// size the MANIFEST records for it (want) when the file's differs: a
// table cut short or grown since LevelDB wrote it fails on its footer,
// and the sizes say why.
func sizeMismatch(err error, path string, want int64) error {
	st, serr := os.Stat(path)
	if serr != nil || st.Size() == want {
		return err
	}
	return fmt.Errorf("%w (the MANIFEST records %d bytes for %s; the file holds %d)", err, want, filepath.Base(path), st.Size())
}

// inFile names path in err: a *format.CorruptError gets it as its File.
func inFile(path string, err error) error {
	var ce *format.CorruptError
	if errors.As(err, &ce) && ce.File == "" {
		c := *ce
		c.File = path
		return &c
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Levels returns the database's live view as merge levels, newest first:
// the writes replayed from the logs (if any), level 0's tables newest
// first, one level each, then levels 1 to 6 (those holding tables). Each
// shows every user key's newest version, a deletion as a value
// IsDeletion recognises: read them with DB.MergeOptions' IsDeletion.
// Compact the whole view with CompactOptions.Bottom set (as sst build
// -leveldb does): a compaction that keeps deletions would write each as
// the one-byte value 0x00, which this module's tables read back as data.
// The slice is the caller's; the levels stay valid until Close.
func (db *DB) Levels() []merge.Level { return append([]merge.Level(nil), db.levels...) }

// MergeOptions returns new merge.Options for reading Levels: IsDeletion
// set, no bounds.
func (db *DB) MergeOptions() *merge.Options { return &merge.Options{IsDeletion: IsDeletion} }

// NewIterator returns an iterator over the live view, within o's bounds
// (nil: every key), which it copies as merge.NewIterator does: each live
// user key once, with its newest value, in bytes.Compare order. Close it
// before the DB; once the DB is closed its moves return false and Err an
// error wrapping ErrClosed.
func (db *DB) NewIterator(o *IterOptions) *merge.Iterator {
	mo := db.MergeOptions()
	if o != nil {
		mo.LowerBound, mo.UpperBound = o.LowerBound, o.UpperBound
	}
	levels := db.levels
	if len(levels) == 0 {
		// An empty database: the empty log level, so that a move after
		// Close reports it rather than an empty view.
		levels = []merge.Level{db.mem}
	}
	return merge.NewIterator(levels, mo)
}

// Get returns key's newest value, a slice the caller owns, or
// reader.ErrNotFound when key is absent or deleted. It consults each
// table's filter, newest level first, and stops at the first level that
// holds the key. After Close it returns an error wrapping ErrClosed.
func (db *DB) Get(key []byte) ([]byte, error) {
	if db.mem.closed.Load() {
		return nil, closedError{db.dir}
	}
	return merge.Get(db.levels, key, db.MergeOptions())
}

// LastSequence returns the sequence number of the newest write in the
// view.
func (db *DB) LastSequence() uint64 { return db.lastSeq }

// Files returns the live tables, as the MANIFEST lists them: level 0
// newest first, then levels 1 to 6 by key.
func (db *DB) Files() []FileInfo { return append([]FileInfo(nil), db.files...) }

// LogDamage returns what Options.SkipLogDamage skipped while replaying
// the write-ahead logs: the number of places, and the errors of the
// first 100, each wrapping format.ErrCorrupt and naming the log file and
// offset. Without SkipLogDamage it returns 0, nil: damage failed OpenDB.
func (db *DB) LogDamage() (n int, errs []error) {
	return db.logDamageN, append([]error(nil), db.logDamage...)
}

func (db *DB) noteLogDamage(err error) {
	if db.logDamageN++; len(db.logDamage) < maxLogDamage {
		db.logDamage = append(db.logDamage, err)
	}
}

// LogEntries returns the number of user keys replayed from the logs.
func (db *DB) LogEntries() int { return len(db.mem.entries) }

// Verify checks every live table (Table.Verify) and that each holds only
// keys within the range the MANIFEST gives it. It returns the number of
// table entries checked and the first error.
func (db *DB) Verify() (entries int64, err error) {
	if db.mem.closed.Load() {
		return 0, closedError{db.dir}
	}
	for i, lt := range db.tables {
		t, err := lt.Get()
		if err != nil {
			return entries, err
		}
		n, err := t.Verify()
		entries += n
		if err != nil {
			return entries, err
		}
		f := db.files[i]
		it := t.NewIter(nil)
		var bad error
		if it.First() && lsmtable.CompareKeys(it.InternalKey(), f.Smallest, false) < 0 {
			bad = format.Corruptf(format.SectionDataBlock, 0, "first key %q sorts before the MANIFEST's smallest %q", it.InternalKey(), f.Smallest)
		} else if it.Last() && lsmtable.CompareKeys(it.InternalKey(), f.Largest, false) > 0 {
			bad = format.Corruptf(format.SectionDataBlock, 0, "last key %q sorts after the MANIFEST's largest %q", it.InternalKey(), f.Largest)
		}
		if err := it.Close(); err != nil {
			return entries, err
		}
		if bad != nil {
			return entries, t.Named(bad)
		}
	}
	return entries, nil
}

// Close closes the tables opened and releases the LOCK file. Iterators
// must be closed first: afterwards every read of the DB (Get, Verify,
// NewIterator), of its iterators and of its Levels returns an error
// wrapping ErrClosed, as a second Close does.
func (db *DB) Close() error {
	if db.mem.closed.Swap(true) {
		return closedError{db.dir}
	}
	var err error
	for _, lt := range db.tables {
		if t := lt.Closing(); t != nil {
			if e := t.Close(); err == nil {
				err = e
			}
		}
	}
	db.tables = nil
	if db.lock != nil {
		if e := db.lock.Release(); err == nil {
			err = e
		}
		db.lock = nil
	}
	return err
}
