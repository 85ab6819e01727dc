package rocksdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/internal/rocksblob"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// ErrLocked is wrapped by the error OpenDB returns for a database a
// RocksDB process holds (its LOCK file): such a process rewrites and
// deletes files as it runs.
var ErrLocked = errors.New("rocksdb: database is locked by another process")

// ErrNoColumnFamily is wrapped by the error for a column family the
// database does not have.
var ErrNoColumnFamily = errors.New("rocksdb: no such column family")

// ErrLevelDB is wrapped by the error OpenDB returns for a LevelDB
// database directory: package leveldb reads it.
var ErrLevelDB = errors.New("rocksdb: a LevelDB database, not RocksDB's")

// DefaultColumnFamily is the name of the column family every database has.
const DefaultColumnFamily = "default"

// MergeOperator combines a key's merge operands with the value below them
// (RocksDB's MergeOperator::FullMergeV2).
type MergeOperator interface {
	// Name is the operator's name as RocksDB records it in OPTIONS files
	// (such as "StringAppendOperator").
	Name() string
	// FullMerge returns the key's value: base is the value below the
	// operands (hasBase false when there is none: the key was absent or
	// deleted), operands are oldest first.
	FullMerge(key, base []byte, hasBase bool, operands [][]byte) ([]byte, error)
}

// DBOptions configure OpenDB. The zero value (or nil) maps the tables,
// caches their blocks in reader.DefaultCache and knows no merge operator.
type DBOptions struct {
	Cache  *cache.Cache // the tables' decoded blocks; nil: reader.DefaultCache()
	NoMmap bool         // read the tables with ReadAt rather than map them
	// MergeOperators maps a column family's name to the operator its
	// merge operands read through; a key of a column family without one
	// whose visible versions include operands gives an *UnresolvedError.
	MergeOperators map[string]MergeOperator
	// OptionsMergeOperators gives a column family without an operator in
	// MergeOperators the built-in one its OPTIONS file names
	// (StringAppendOperator, its delimiter "," unless the file says
	// otherwise; UInt64AddOperator), if it names one.
	OptionsMergeOperators bool
}

// DB is a RocksDB database directory opened read-only: every column
// family's live view, as RocksDB's own read-only open gives it. It is safe
// for concurrent use.
type DB struct {
	dir      string
	lock     *lsmdb.Lock
	opts     DBOptions
	families []*dbFamily // default first, then by ID
	byName   map[string]*dbFamily
	lastSeq  uint64
	tables   []*lsmtable.LazyTable
	mems     []*lsmtable.Table
	logs     []uint64

	blobMu  sync.Mutex
	blobs   map[uint64]*rocksblob.File
	blobErr map[uint64]error
	closed  bool
}

// dbFamily is one column family's view.
type dbFamily struct {
	db      *DB
	id      uint32
	name    string
	op      MergeOperator
	levels  []*lsmtable.Level // newest first
	files   []FileInfo
	blobs   []uint64 // live blob file numbers
	mem     int      // entries replayed from the logs
	options map[string]string
}

// FileInfo describes one live table of a column family.
type FileInfo struct {
	Level                   int
	Number                  uint64 // the table is NNNNNN.sst
	Size                    uint64 // bytes, as the MANIFEST records it
	Smallest, Largest       []byte // internal keys
	SmallestSeq, LargestSeq uint64
}

// OpenDB opens the RocksDB database in dir read-only, as RocksDB's
// DB::OpenForReadOnly does, without writing to the directory: CURRENT
// names the MANIFEST, whose version edits give each column family's
// tables and blob files; the write-ahead logs not yet flushed into a
// column family's tables are replayed into its newest level. A torn last
// record ends the MANIFEST or a log, as RocksDB's recovery reads it
// (point-in-time recovery). Errors: ErrLocked for a database a RocksDB
// process holds; ErrLevelDB for a LevelDB directory; ErrUnsupported for a
// comparator this package cannot honour; errors wrapping format.ErrCorrupt
// naming the file and offset for damage (a table or blob file the
// MANIFEST names but the directory lacks wraps os.ErrNotExist too);
// os.ErrNotExist for a directory without CURRENT.
func OpenDB(dir string, o *DBOptions) (*DB, error) {
	db := &DB{dir: dir, byName: map[string]*dbFamily{}, blobs: map[uint64]*rocksblob.File{}, blobErr: map[uint64]error{}}
	if o != nil {
		db.opts = *o
	}
	lock, err := lsmdb.LockDir(dir, ErrLocked, "rocksdb")
	if err != nil {
		return nil, err
	}
	db.lock = lock
	if err := db.recover(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// inFile names path in a corruption error (or wraps another error).
func inFile(path string, err error) error {
	var ce *format.CorruptError
	if errors.As(err, &ce) && ce.File == "" {
		c := *ce
		c.File = path
		return &c
	}
	return fmt.Errorf("rocksdb: %s: %w", path, err)
}

func (db *DB) recover() error {
	current := filepath.Join(db.dir, "CURRENT")
	b, err := os.ReadFile(current)
	if err != nil {
		return fmt.Errorf("rocksdb: open %s: %w", db.dir, err)
	}
	name := strings.TrimSuffix(string(b), "\n")
	if len(name) == len(b) || !strings.HasPrefix(name, "MANIFEST-") || strings.ContainsAny(name, `/\`) {
		return &format.CorruptError{File: current, Section: format.SectionFile, Msg: fmt.Sprintf("%q does not name a MANIFEST-NNNNNN file on one line", b)}
	}
	manifest := filepath.Join(db.dir, name)
	data, err := os.ReadFile(manifest)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rocksdb: open %s: CURRENT names %s, which is missing: %w (%w)", db.dir, name, err, format.ErrCorrupt)
		}
		return fmt.Errorf("rocksdb: open %s: %w", db.dir, err)
	}
	vs := newVersionSet()
	r := lsmdb.LogReader{Data: data, Mode: lsmdb.RocksDBManifest}
	records, rocksTags := 0, false
	for {
		rec, off, ok, err := r.Next()
		if err != nil {
			return inFile(manifest, err)
		}
		if !ok {
			break
		}
		if e, err := lsmdb.DecodeEdit(rec, off); err == nil && e.RocksDBTag != 0 {
			rocksTags = true
		}
		if err := vs.record(rec, off); err != nil {
			return inFile(manifest, err)
		}
		records++
	}
	if records == 0 {
		return &format.CorruptError{File: manifest, Section: format.SectionFile, Msg: "no version edits"}
	}
	if err := vs.complete(); err != nil {
		return inFile(manifest, err)
	}

	ents, err := os.ReadDir(db.dir)
	if err != nil {
		return fmt.Errorf("rocksdb: open %s: %w", db.dir, err)
	}
	var logs []uint64
	tableExt := map[uint64]string{}
	hasOptions := false
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if strings.HasPrefix(e.Name(), "OPTIONS-") {
			hasOptions = true
		}
		base, ext, ok := strings.Cut(e.Name(), ".")
		num, err := strconv.ParseUint(base, 10, 64)
		if !ok || err != nil {
			continue
		}
		switch ext {
		case "log":
			logs = append(logs, num)
		case "sst", "ldb":
			if tableExt[num] == "" || ext == "sst" {
				tableExt[num] = "." + ext
			}
		}
	}
	if !rocksTags && !hasOptions {
		return fmt.Errorf("%w: %s: its MANIFEST holds only LevelDB's version edits and there is no OPTIONS file (package leveldb reads it; sst ... -leveldb DIR)", ErrLevelDB, db.dir)
	}
	db.lastSeq = vs.lastSeq
	options := readOptions(db.dir, names)

	// Column families: default first, then by ID.
	var ids []uint32
	for id := range vs.families {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	minLog := uint64(1<<64 - 1)
	for _, id := range ids {
		cf := vs.families[id]
		switch cf.comparator {
		case "", BytewiseComparator:
		default:
			return fmt.Errorf("%w: %s: column family %q uses comparator %q (this package reads databases of %q)", ErrUnsupported, db.dir, cf.name, cf.comparator, BytewiseComparator)
		}
		minLog = min(minLog, cf.logNumber)
		f := &dbFamily{db: db, id: id, name: cf.name, op: db.opts.MergeOperators[cf.name], options: options[cf.name]}
		if f.op == nil && db.opts.OptionsMergeOperators {
			f.op = builtinOperator(f.options["merge_operator"])
		}
		db.families = append(db.families, f)
		db.byName[cf.name] = f
	}

	// The logs not yet flushed, oldest first, each record applied to the
	// column families whose tables do not hold it yet.
	sort.Slice(logs, func(i, j int) bool { return logs[i] < logs[j] })
	ops := map[uint32][]memOp{}
	var replay walReplay
	for _, num := range logs {
		if num < minLog {
			continue
		}
		path := filepath.Join(db.dir, fmt.Sprintf("%06d.log", num))
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("rocksdb: open %s: %w", db.dir, err)
		}
		db.logs = append(db.logs, num)
		keep := func(op lsmdb.BatchOp) bool {
			cf, ok := vs.families[op.CF]
			return ok && num >= cf.logNumber // else a dropped family's, or in its tables
		}
		apply := func(op lsmdb.BatchOp) {
			ops[op.CF] = append(ops[op.CF], memOp{key: op.Key, value: op.Value, seq: op.Seq, kind: op.Kind})
		}
		if err := replay.log(data, num, keep, apply); err != nil {
			return inFile(path, err)
		}
	}
	db.lastSeq = max(db.lastSeq, replay.lastSeq)
	if replay.damagedAt != 0 {
		// The replay ended at damage in a log that a column family's
		// tables have already gone past: what that family holds is newer
		// than what the logs could give, and RocksDB refuses the open
		// ("SST file is ahead of WALs", db/db_impl/db_impl_open.cc).
		for _, id := range ids {
			cf := vs.families[id]
			if cf.logNumber > replay.damagedAt && cf.hasFiles() {
				path := filepath.Join(db.dir, fmt.Sprintf("%06d.log", replay.damagedAt))
				return &format.CorruptError{File: path, Section: lsmdb.SectionLog, Msg: fmt.Sprintf("the log is damaged, and column family %q's tables hold writes after it (log number %d): its tables are ahead of the logs", cf.name, cf.logNumber)}
			}
		}
	}

	topts := &TableOptions{Cache: db.opts.Cache, NoMmap: db.opts.NoMmap}
	for _, f := range db.families {
		cf := vs.families[f.id]
		if mops := ops[f.id]; len(mops) > 0 {
			mt, err := newMemTable(fmt.Sprintf("%s: column family %q: the logs", db.dir, f.name), mops, db.opts.Cache)
			if err != nil {
				return err
			}
			db.mems = append(db.mems, mt)
			f.mem = len(mops)
			smallest, largest := memBounds(mops)
			f.levels = append(f.levels, &lsmtable.Level{Tables: []*lsmtable.LazyTable{lsmtable.Opened(mt, smallest, largest)}, Resolve: f.show, Spans: mt.Spans != nil})
		}
		levels, err := cf.levels()
		if err != nil {
			return inFile(manifest, err)
		}
		for level, files := range levels {
			var run *lsmtable.Level
			for _, nf := range files {
				ext, ok := tableExt[nf.Number]
				if !ok {
					return fmt.Errorf("rocksdb: open %s: table %06d.sst of column family %q, level %d, named by %s, is missing: %w (%w)", db.dir, nf.Number, f.name, level, name, os.ErrNotExist, format.ErrCorrupt)
				}
				path := filepath.Join(db.dir, fmt.Sprintf("%06d%s", nf.Number, ext))
				lt := &lsmtable.LazyTable{
					Path:     path,
					Smallest: nf.Smallest[:len(nf.Smallest)-lsmtable.TrailerLen],
					Largest:  nf.Largest[:len(nf.Largest)-lsmtable.TrailerLen],
					Open: func() (*lsmtable.Table, error) {
						t, err := OpenTable(path, topts)
						if err != nil {
							return nil, err
						}
						if t.reverse {
							t.Close()
							return nil, fmt.Errorf("%w: %s: a %s table in a bytewise column family", ErrUnsupported, path, t.comparator)
						}
						if t.core.Spans != nil {
							t.core.Spans = t.core.Spans.Clip(fileBounds(nf))
						}
						return t.core, nil
					},
				}
				db.tables = append(db.tables, lt)
				f.files = append(f.files, FileInfo{Level: level, Number: nf.Number, Size: nf.Size, Smallest: nf.Smallest, Largest: nf.Largest, SmallestSeq: nf.SmallestSeq, LargestSeq: nf.LargestSeq})
				if level == 0 || run == nil {
					run = &lsmtable.Level{Resolve: f.show, Spans: true}
					f.levels = append(f.levels, run)
				}
				run.Tables = append(run.Tables, lt)
				if level == 0 {
					run = nil
				}
			}
		}
		for num, b := range cf.blobs {
			if b.garbageCount < b.count {
				f.blobs = append(f.blobs, num) // else all garbage: RocksDB drops the file
			}
		}
		sort.Slice(f.blobs, func(i, j int) bool { return f.blobs[i] < f.blobs[j] })
	}
	return nil
}

// memBounds returns the smallest and largest user keys of the replayed
// writes, range deletions' ends included.
func memBounds(ops []memOp) (smallest, largest []byte) {
	for i, op := range ops {
		hi := op.key
		if op.kind == KindRangeDeletion {
			hi = op.value
		}
		if i == 0 || bytes.Compare(op.key, smallest) < 0 {
			smallest = op.key
		}
		if i == 0 || bytes.Compare(hi, largest) > 0 {
			largest = hi
		}
	}
	return bytes.Clone(smallest), bytes.Clone(largest)
}

// family returns the column family named name.
func (db *DB) family(name string) (*dbFamily, error) {
	f, ok := db.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (the database has %s)", ErrNoColumnFamily, name, strings.Join(db.ColumnFamilies(), ", "))
	}
	return f, nil
}

// ColumnFamilies returns the names of the database's live column
// families, "default" first, then by ID.
func (db *DB) ColumnFamilies() []string {
	out := make([]string, len(db.families))
	for i, f := range db.families {
		out[i] = f.name
	}
	return out
}

// Levels returns column family cf's live view as a stack of merge levels,
// newest first: the replayed logs, each level 0 table (newest first),
// then levels 1 and up. Read it with the options MergeOptions gives.
func (db *DB) Levels(cf string) ([]merge.Level, error) {
	f, err := db.family(cf)
	if err != nil {
		return nil, err
	}
	out := make([]merge.Level, len(f.levels))
	for i, l := range f.levels {
		out[i] = l
	}
	return out, nil
}

// MergeOptions returns the merge.Options for column family cf's levels:
// deletions hide keys, and merge operands and blob indexes read as
// RocksDB reads them (through the family's merge operator, from the
// blob files).
func (db *DB) MergeOptions(cf string) *merge.Options {
	f, ok := db.byName[cf]
	if !ok {
		return MergeOptions()
	}
	return &merge.Options{IsDeletion: IsDeletion, Resolve: f.resolve}
}

// NewIterator returns an iterator over column family cf's live view,
// within o's bounds (nil: unbounded).
func (db *DB) NewIterator(cf string, o *IterOptions) (*merge.Iterator, error) {
	levels, err := db.Levels(cf)
	if err != nil {
		return nil, err
	}
	mo := db.MergeOptions(cf)
	if o != nil {
		mo.LowerBound, mo.UpperBound = o.LowerBound, o.UpperBound
	}
	return merge.NewIterator(levels, mo), nil
}

// Get returns key's value in column family cf, a slice the caller owns;
// reader.ErrNotFound if it is absent or deleted.
func (db *DB) Get(cf string, key []byte) ([]byte, error) {
	levels, err := db.Levels(cf)
	if err != nil {
		return nil, err
	}
	return merge.Get(levels, key, db.MergeOptions(cf))
}

// LastSequence returns the database's last sequence number: the
// MANIFEST's, or the last write replayed from the logs.
func (db *DB) LastSequence() uint64 { return db.lastSeq }

// Files returns column family cf's live tables, level by level.
func (db *DB) Files(cf string) ([]FileInfo, error) {
	f, err := db.family(cf)
	if err != nil {
		return nil, err
	}
	return append([]FileInfo(nil), f.files...), nil
}

// BlobFiles returns the numbers of column family cf's live blob files
// (NNNNNN.blob).
func (db *DB) BlobFiles(cf string) ([]uint64, error) {
	f, err := db.family(cf)
	if err != nil {
		return nil, err
	}
	return append([]uint64(nil), f.blobs...), nil
}

// LogEntries returns the number of writes to column family cf replayed
// from the logs.
func (db *DB) LogEntries(cf string) int {
	if f, ok := db.byName[cf]; ok {
		return f.mem
	}
	return 0
}

// Verify checks every live table (Table.Verify) and blob file (every
// record's checksums). It returns the number of table entries checked
// and the first error.
func (db *DB) Verify() (entries int64, err error) {
	for _, lt := range db.tables {
		t, err := lt.Get()
		if err != nil {
			return entries, err
		}
		n, err := t.Verify()
		entries += n
		if err != nil {
			return entries, err
		}
	}
	for _, f := range db.families {
		for _, num := range f.blobs {
			bf, err := db.blobFile(num, f.id)
			if err != nil {
				return entries, err
			}
			if _, err := bf.Verify(); err != nil {
				return entries, err
			}
		}
	}
	return entries, nil
}

// Close closes the tables and blob files opened and releases the LOCK
// file. Iterators must be closed first.
func (db *DB) Close() error {
	var err error
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	for _, lt := range db.tables {
		if t := lt.Closing(); t != nil {
			keep(t.Close())
		}
	}
	for _, m := range db.mems {
		keep(m.Close())
	}
	db.blobMu.Lock()
	for _, bf := range db.blobs {
		keep(bf.Close())
	}
	db.blobs, db.closed = nil, true
	db.blobMu.Unlock()
	db.tables, db.mems = nil, nil
	if db.lock != nil {
		keep(db.lock.Release())
		db.lock = nil
	}
	return err
}

// blobFile returns blob file num of column family cf, opened once.
func (db *DB) blobFile(num uint64, cf uint32) (*rocksblob.File, error) {
	db.blobMu.Lock()
	defer db.blobMu.Unlock()
	if db.closed {
		return nil, fmt.Errorf("rocksdb: %s: %w", db.dir, ErrClosed)
	}
	if f, ok := db.blobs[num]; ok {
		return f, nil
	}
	if err, ok := db.blobErr[num]; ok {
		return nil, err
	}
	path := filepath.Join(db.dir, fmt.Sprintf("%06d.blob", num))
	f, err := rocksblob.Open(path, &rocksblob.Options{Number: num, CheckColumnFamily: true, ColumnFamilyID: cf})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("rocksdb: blob file %s is missing: %w (%w)", path, err, format.ErrCorrupt)
		}
		db.blobErr[num] = err
		return nil, err
	}
	db.blobs[num] = f
	return f, nil
}

// show is a level's Resolver: a value as it is, an entity's default
// column, and marks for what only the whole stack can resolve (merge
// operands, blob indexes), resolved by resolve once the view shows them.
func (f *dbFamily) show(t *lsmtable.Table, user []byte, seq uint64, kind Kind, value []byte) ([]byte, error) {
	switch kind {
	case KindValue:
		return value, nil
	case KindMerge:
		return mergeMark[:], nil
	case KindBlobIndex:
		return blobMark[:], nil
	case KindWideColumnEntity:
		v, blob, err := DefaultColumn(value)
		if err != nil {
			return nil, t.Named(err)
		}
		if blob {
			return blobMark[:], nil
		}
		return v, nil
	case KindValuePreferredSeqno:
		if len(value) < 8 {
			return nil, t.Named(format.Corruptf(format.SectionDataBlock, 0, "key %q: a value with a preferred sequence number of %d bytes", user, len(value)))
		}
		return value[:len(value)-8], nil
	}
	return nil, t.Named(format.Corruptf(format.SectionDataBlock, 0, "key %q @%d: kind %s has no value", user, seq, kind))
}

// resolve is the view's Resolve: a mark becomes the key's value, read as
// RocksDB's read path does (db/merge_helper.cc, the blob reads of
// db/version_set.cc): from the newest visible version down through the
// levels, merge operands gathered until a value, a deletion, a range
// deletion or the end, then merged by the family's operator; a blob
// index read from its blob file.
func (f *dbFamily) resolve(key, value []byte) ([]byte, error) {
	if _, ok := markKind(value); !ok {
		return value, nil
	}
	var operands [][]byte
	var base []byte
	hasBase := false
	done := false
	for j := 0; j < len(f.levels) && !done; j++ {
		if j > 0 && len(operands) > 0 {
			hidden, err := f.hiddenBelow(j, key)
			if err != nil {
				return nil, err
			}
			if hidden {
				break
			}
		}
		for _, lt := range f.levels[j].Tables {
			if bytes.Compare(key, lt.Smallest) < 0 || bytes.Compare(key, lt.Largest) > 0 || done {
				continue
			}
			t, err := lt.Get()
			if err != nil {
				return nil, err
			}
			it := t.NewIter(nil)
			for ok := it.SeekGE(key); ok && bytes.Equal(it.Key(), key); ok = it.Next() {
				if t.Covered(key, it.Seq()) {
					done = true
					break
				}
				v := it.Value()
				switch k := it.Kind(); k {
				case KindMerge:
					operands = append(operands, bytes.Clone(v))
					continue
				case KindValue:
					base, hasBase = bytes.Clone(v), true
				case KindValuePreferredSeqno:
					if len(v) >= 8 {
						base, hasBase = bytes.Clone(v[:len(v)-8]), true
					}
				case KindBlobIndex:
					if base, err = f.blobValue(key, v); err != nil {
						it.Close()
						return nil, err
					}
					hasBase = true
				case KindWideColumnEntity:
					dv, blob, err := DefaultColumn(v)
					if err == nil && blob {
						dv, err = f.blobValue(key, dv)
					}
					if err != nil {
						it.Close()
						return nil, t.Named(err)
					}
					base, hasBase = bytes.Clone(dv), true
				default:
					if !k.IsDeletionKind() {
						it.Close()
						return nil, t.Named(format.Corruptf(format.SectionDataBlock, 0, "key %q: kind %s", key, k))
					}
				}
				done = true
				break
			}
			if err := it.Close(); err != nil {
				return nil, err
			}
		}
	}
	if len(operands) == 0 {
		if !hasBase {
			return nil, reader.ErrNotFound
		}
		return base, nil
	}
	if f.op == nil {
		return nil, &UnresolvedError{Key: bytes.Clone(key), Kind: KindMerge}
	}
	for i, j := 0, len(operands)-1; i < j; i, j = i+1, j-1 {
		operands[i], operands[j] = operands[j], operands[i]
	}
	return f.op.FullMerge(key, base, hasBase, operands)
}

// hiddenBelow reports whether a range deletion of a level newer than j
// covers key: level j's versions of it are then deleted.
func (f *dbFamily) hiddenBelow(j int, key []byte) (bool, error) {
	for _, l := range f.levels[:j] {
		_, err := l.SpanAt(key)
		if err == nil {
			return true, nil
		}
		if err != reader.ErrNotFound {
			return false, err
		}
	}
	return false, nil
}

// blobValue reads the value a blob index points to.
func (f *dbFamily) blobValue(key, index []byte) ([]byte, error) {
	idx, err := rocksblob.DecodeIndex(index)
	if err != nil {
		return nil, fmt.Errorf("rocksdb: %s: key %q: %w", f.db.dir, key, err)
	}
	if idx.Type == rocksblob.TypeInlinedTTL {
		return bytes.Clone(idx.Inlined), nil
	}
	bf, err := f.db.blobFile(idx.FileNumber, f.id)
	if err != nil {
		return nil, err
	}
	return bf.Value(key, idx, nil)
}

// fileBounds returns the user key range [lo, hi) a table's range
// deletions apply in, from the internal keys its MANIFEST entry gives:
// from the smallest key's user key, to the largest's user key, itself
// included unless the largest is a range deletion's end (sequence number
// 2^56-1, kind 0xF), which RocksDB writes as an exclusive bound.
func fileBounds(nf lsmdb.NewFile) (lo, hi []byte) {
	lo = nf.Smallest[:len(nf.Smallest)-lsmtable.TrailerLen]
	n := len(nf.Largest) - lsmtable.TrailerLen
	user := nf.Largest[:n]
	if binary.LittleEndian.Uint64(nf.Largest[n:]) == lsmtable.MaxSequence<<8|uint64(KindRangeDeletion) {
		return lo, user
	}
	return lo, append(bytes.Clone(user), 0) // the least key above user
}
