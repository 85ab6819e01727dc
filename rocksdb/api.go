package rocksdb

// This file declares the package's API; the implementation lands beside
// it. (Skeleton: every method reports errNotYet until then.)

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
)

var errNotYet = errors.New("rocksdb: not implemented yet")

// Kind says what an internal key records (RocksDB's ValueType,
// db/dbformat.h).
type Kind uint8

// The kinds RocksDB writes into a table.
const (
	KindDeletion              Kind = 0x0
	KindValue                 Kind = 0x1
	KindMerge                 Kind = 0x2
	KindSingleDeletion        Kind = 0x7
	KindRangeDeletion         Kind = 0xF // only in the range deletion block
	KindBlobIndex             Kind = 0x11
	KindDeletionWithTimestamp Kind = 0x14
	KindWideColumnEntity      Kind = 0x16
	KindValuePreferredSeqno   Kind = 0x18
)

// String returns the kind's name as `sst scan` prints it: "value",
// "delete", "single-delete", "merge", "range-delete", "blob-index",
// "delete-with-timestamp", "entity", "value-preferred-seqno", or
// "kind N".
func (k Kind) String() string {
	switch k {
	case KindDeletion:
		return "delete"
	case KindValue:
		return "value"
	case KindMerge:
		return "merge"
	case KindSingleDeletion:
		return "single-delete"
	case KindRangeDeletion:
		return "range-delete"
	case KindBlobIndex:
		return "blob-index"
	case KindDeletionWithTimestamp:
		return "delete-with-timestamp"
	case KindWideColumnEntity:
		return "entity"
	case KindValuePreferredSeqno:
		return "value-preferred-seqno"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// MaxSequence is the largest sequence number, 2^56-1.
const MaxSequence = 1<<56 - 1

// ErrNotTable is wrapped (beside format.ErrCorrupt) by the error for a
// file that ends in neither RocksDB's nor LevelDB's magic number.
var ErrNotTable = errors.New("rocksdb: not a RocksDB block-based table")

// ErrClosed is returned by a Table's methods after Close.
var ErrClosed = errors.New("rocksdb: table closed")

// ErrUnsupported is wrapped by the error for a table this package cannot
// read correctly: a comparator other than bytewise or reverse bytewise,
// user-defined timestamps, an unknown compression type (xpress, custom
// types 0x80 and up), an unknown checksum type. The message names it.
var ErrUnsupported = errors.New("rocksdb: unsupported table feature")

// ErrUnresolved is wrapped by *UnresolvedError.
var ErrUnresolved = errors.New("rocksdb: value needs more than this table to resolve")

// UnresolvedError is the error for a user key whose newest version this
// package cannot turn into a value alone: a merge operand (which needs
// the database's merge operator and older versions) or a blob index
// (which needs the blob file). errors.Is(err, ErrUnresolved) holds.
type UnresolvedError struct {
	Key  []byte // the user key
	Seq  uint64 // the version's sequence number
	Kind Kind   // KindMerge or KindBlobIndex
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("rocksdb: key %q @%d is a %s: its value needs the database's %s", e.Key, e.Seq, e.Kind, map[Kind]string{KindMerge: "merge operator and older versions", KindBlobIndex: "blob file"}[e.Kind])
}

// Unwrap returns ErrUnresolved.
func (e *UnresolvedError) Unwrap() error { return ErrUnresolved }

// TableOptions configure OpenTable and NewTable. The zero value (or nil)
// maps the file and caches decoded blocks in reader.DefaultCache.
type TableOptions struct {
	Cache  *cache.Cache // decoded data blocks; nil: reader.DefaultCache()
	NoMmap bool         // OpenTable reads with ReadAt rather than map the file
	Name   string       // names the table in errors; OpenTable uses the path
}

// Table is one open RocksDB block-based table, safe for concurrent use.
type Table struct{}

// OpenTable opens the table at path.
func OpenTable(path string, o *TableOptions) (*Table, error) { return nil, errNotYet }

// NewTable opens the table of size bytes read through r.
func NewTable(r io.ReaderAt, size int64, o *TableOptions) (*Table, error) {
	return nil, errNotYet
}

// Entry is one version of a user key.
type Entry struct {
	Key   []byte // the user key
	Seq   uint64 // the sequence number (the global one of an ingested file)
	Kind  Kind
	Value []byte // the stored value, a copy the caller owns
}

// Get returns the newest version of user key key at or below seq,
// deletions included (Kind says); reader.ErrNotFound when none. For a
// merge operand or a blob index the Entry is returned with an
// *UnresolvedError.
func (t *Table) Get(key []byte, seq uint64) (Entry, error) { return Entry{}, errNotYet }

// IterOptions bound an iterator by user key: LowerBound inclusive,
// UpperBound exclusive, nil unbounded.
type IterOptions struct {
	LowerBound, UpperBound []byte
}

// TableIterator walks a table's internal entries in the table's order.
type TableIterator struct{}

// NewIter returns an unpositioned iterator over the table's point entries.
func (t *Table) NewIter(o *IterOptions) *TableIterator { return &TableIterator{} }

// First moves to the first entry.
func (it *TableIterator) First() bool { return false }

// Last moves to the last entry.
func (it *TableIterator) Last() bool { return false }

// Next moves to the next entry.
func (it *TableIterator) Next() bool { return false }

// Prev moves to the previous entry.
func (it *TableIterator) Prev() bool { return false }

// SeekGE moves to the newest version of the first user key at or above key.
func (it *TableIterator) SeekGE(key []byte) bool { return false }

// SeekGEAt moves to the first entry at or after (key, seq).
func (it *TableIterator) SeekGEAt(key []byte, seq uint64) bool { return false }

// SeekLT moves to the oldest version of the last user key below key.
func (it *TableIterator) SeekLT(key []byte) bool { return false }

// SetBounds changes the bounds and leaves the iterator unpositioned.
func (it *TableIterator) SetBounds(lower, upper []byte) {}

// Valid reports whether the iterator is on an entry.
func (it *TableIterator) Valid() bool { return false }

// Key returns the current user key.
func (it *TableIterator) Key() []byte { return nil }

// Seq returns the current sequence number.
func (it *TableIterator) Seq() uint64 { return 0 }

// Kind returns the current kind.
func (it *TableIterator) Kind() Kind { return 0 }

// Value returns the current stored value.
func (it *TableIterator) Value() []byte { return nil }

// InternalKey returns the current internal key as stored.
func (it *TableIterator) InternalKey() []byte { return nil }

// Err returns the error that stopped the iterator.
func (it *TableIterator) Err() error { return errNotYet }

// Close releases the iterator; it returns Err.
func (it *TableIterator) Close() error { return nil }

// RangeDeletion is one range deletion as the table stores it: the user
// keys in [Start, End) deleted as of Seq.
type RangeDeletion struct {
	Start, End []byte
	Seq        uint64
}

// RangeDeletions returns the table's range deletions in the order of its
// range deletion block (start key, then sequence number descending).
func (t *Table) RangeDeletions() ([]RangeDeletion, error) { return nil, errNotYet }

// Property is one entry of the rocksdb.properties block.
type Property struct {
	Name  string // RocksDB's name, such as "rocksdb.num.entries"
	Value []byte // the raw value: a varint for numeric properties
}

// Properties returns every entry of the table's properties block, in the
// block's order.
func (t *Table) Properties() []Property { return nil }

// TableInfo describes a table's layout, as read at open.
type TableInfo struct {
	Size          int64
	FormatVersion uint32
	Checksum      string // "none", "crc32c", "xxhash", "xxhash64", "xxh3"
	Magic         uint64
	DataBlocks    int
	IndexType     string // "binary-search", "hash-search", "two-level", "binary-search-with-first-key"
	Filter        string // the filter Get consults, "" for none
	Comparator    string
	Compression   string
	GlobalSeqno   uint64
	MetaBlocks    []string
	Index         format.BlockHandle
	Metaindex     format.BlockHandle
}

// Info returns the table's layout.
func (t *Table) Info() TableInfo { return TableInfo{} }

// Verify reads the whole table and checks it; it returns the entries checked.
func (t *Table) Verify() (int64, error) { return 0, errNotYet }

// Close releases the table.
func (t *Table) Close() error { return nil }

// Level returns the table as a merge level: each user key's newest
// version, a deletion (or a point under a newer range deletion of the
// same table) as a value IsDeletion recognises, and the table's range
// deletions as spans hiding older levels. A table whose comparator is
// not bytewise is refused (ErrUnsupported).
func (t *Table) Level() (merge.Level, error) { return nil, errNotYet }

// IsDeletion reports whether a level's value is this package's deletion
// mark; MergeOptions sets it.
func IsDeletion(value []byte) bool { return false }

// MergeOptions returns merge.Options for a stack of this package's
// levels.
func MergeOptions() *merge.Options { return &merge.Options{IsDeletion: IsDeletion} }
