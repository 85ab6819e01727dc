package rocksdb

import (
	"errors"
	"fmt"

	"github.com/sstkit/sstable/internal/lsmtable"
)

// Kind says what an internal key records (RocksDB's ValueType,
// db/dbformat.h). String gives the name `sst scan` prints.
type Kind = lsmtable.Kind

// The kinds RocksDB writes into a table's data blocks, and the range
// deletion's, which lives in its own block.
const (
	KindDeletion              = lsmtable.KindDeletion              // 0x0
	KindValue                 = lsmtable.KindValue                 // 0x1
	KindMerge                 = lsmtable.KindMerge                 // 0x2: a merge operand
	KindSingleDeletion        = lsmtable.KindSingleDeletion        // 0x7
	KindRangeDeletion         = lsmtable.KindRangeDeletion         // 0xF: only in the range deletion block
	KindBlobIndex             = lsmtable.KindBlobIndex             // 0x11: the value is in a blob file
	KindDeletionWithTimestamp = lsmtable.KindDeletionWithTimestamp // 0x14
	KindWideColumnEntity      = lsmtable.KindWideColumnEntity      // 0x16
	KindValuePreferredSeqno   = lsmtable.KindValuePreferredSeqno   // 0x18: the value, then a fixed64 sequence number or time
)

// pointKinds are the kinds a data block may hold.
var pointKinds = lsmtable.KindsMask(KindDeletion, KindValue, KindMerge, KindSingleDeletion,
	KindBlobIndex, KindDeletionWithTimestamp, KindWideColumnEntity, KindValuePreferredSeqno)

// MaxSequence is the largest sequence number, 2^56-1. Table.Get at
// MaxSequence finds the newest version.
const MaxSequence = lsmtable.MaxSequence

// ErrNotTable is wrapped (beside format.ErrCorrupt) by the error for a
// file that ends in neither RocksDB's block-based table magic number nor
// LevelDB's.
var ErrNotTable = errors.New("rocksdb: not a RocksDB block-based table")

// ErrClosed is wrapped by the errors of a Table's methods after Close.
var ErrClosed = lsmtable.ErrClosed

// ErrUnsupported is wrapped by the error for a table this package cannot
// read correctly: a comparator other than bytewise or reverse bytewise
// (user-defined timestamps among them), a compression type it cannot
// decode (xpress, custom types 0x80 and up), a checksum type it does not
// know, a table format other than block-based. The message names it.
var ErrUnsupported = errors.New("rocksdb: unsupported table feature")

// ErrUnresolved is wrapped by *UnresolvedError.
var ErrUnresolved = errors.New("rocksdb: value needs more than this table to resolve")

// UnresolvedError is the error for a user key whose newest version this
// package cannot turn into a value alone: a merge operand (which needs
// the database's merge operator and the older versions) or a blob index
// (which needs the blob file). errors.Is(err, ErrUnresolved) holds.
type UnresolvedError struct {
	Table string // the table's name; "" from a merged view
	Key   []byte // the user key
	Seq   uint64 // the version's sequence number; 0 from a merged view
	Kind  Kind   // KindMerge or KindBlobIndex
}

// Error says which version could not be resolved and what it needs.
func (e *UnresolvedError) Error() string {
	need := "the database's merge operator and the key's older versions"
	if e.Kind != KindMerge {
		need = "the blob file it points to"
	}
	if e.Table == "" {
		return fmt.Sprintf("rocksdb: key %q is a %s: its value needs %s", e.Key, e.Kind, need)
	}
	return fmt.Sprintf("rocksdb: %s: key %q @%d is a %s: its value needs %s", e.Table, e.Key, e.Seq, e.Kind, need)
}

// Unwrap returns ErrUnresolved.
func (e *UnresolvedError) Unwrap() error { return ErrUnresolved }
