package rocksdb

import (
	"errors"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/merge"
)

// errNotYet marks the database reader's parts still being built.
var errNotYet = errors.New("rocksdb: database reading is not implemented yet")

// ErrLocked is returned by OpenDB for a database a RocksDB process holds
// (its LOCK file): such a process rewrites and deletes files as it runs.
var ErrLocked = errors.New("rocksdb: database is locked by another process")

// ErrNoColumnFamily is wrapped by the error for a column family the
// database does not have.
var ErrNoColumnFamily = errors.New("rocksdb: no such column family")

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
	// merge operands read through; a column family without one gives an
	// *UnresolvedError for a key whose visible versions include operands.
	MergeOperators map[string]MergeOperator
}

// DB is a RocksDB database directory opened read-only: every column
// family's live view, as RocksDB's own read-only open gives it.
type DB struct{}

// OpenDB opens the RocksDB database in dir read-only.
func OpenDB(dir string, o *DBOptions) (*DB, error) { return nil, errNotYet }

// ColumnFamilies returns the names of the database's live column
// families, "default" first, then by ID.
func (db *DB) ColumnFamilies() []string { return nil }

// Levels returns column family cf's live view as a stack of merge levels,
// newest first: the replayed logs, each level 0 table, then levels 1 and
// up.
func (db *DB) Levels(cf string) ([]merge.Level, error) { return nil, errNotYet }

// MergeOptions returns the merge.Options for column family cf's levels.
func (db *DB) MergeOptions(cf string) *merge.Options { return MergeOptions() }

// NewIterator returns an iterator over column family cf's live view.
func (db *DB) NewIterator(cf string, o *IterOptions) (*merge.Iterator, error) {
	return nil, errNotYet
}

// Get returns key's value in column family cf, reader.ErrNotFound if it
// is absent or deleted.
func (db *DB) Get(cf string, key []byte) ([]byte, error) { return nil, errNotYet }

// LastSequence returns the database's last sequence number.
func (db *DB) LastSequence() uint64 { return 0 }

// Verify reads every live table and blob file and checks them.
func (db *DB) Verify() (int64, error) { return 0, errNotYet }

// Close releases the database.
func (db *DB) Close() error { return nil }

// StringAppendOperator returns RocksDB's string append operator (its
// utilities/merge_operators/string_append): the base and the operands
// joined with delim.
func StringAppendOperator(delim string) MergeOperator { return nil }

// UInt64AddOperator returns RocksDB's uint64 add operator
// (utilities/merge_operators/uint64add.cc): little-endian fixed64 values
// summed.
func UInt64AddOperator() MergeOperator { return nil }
