package lsmdb

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// SectionBatch names a write batch, a write-ahead log's record, in
// corruption errors.
const SectionBatch = "write batch"

// MaxSequence is the largest sequence number: internal keys keep 56 bits
// for it (RocksDB's kMaxSequenceNumber, LevelDB's kMaxSequenceNumber).
const MaxSequence = 1<<56 - 1

// The kinds of a write batch's records that take no sequence number and
// never reach a table (RocksDB's db/dbformat.h, "WAL only"). BatchOp.Kind
// holds them beside the internal key kinds of package lsmtable.
const (
	KindLogData               lsmtable.Kind = 0x3  // WriteBatch::PutLogData's blob, in Value
	KindBeginPrepare          lsmtable.Kind = 0x9  // a prepared transaction begins (WriteCommitted)
	KindEndPrepare            lsmtable.Kind = 0xA  // it ends; its XID in Value
	KindCommit                lsmtable.Kind = 0xB  // the transaction of the XID in Value commits
	KindRollback              lsmtable.Kind = 0xC  // it rolls back
	KindNoop                  lsmtable.Kind = 0xD  // a placeholder, or a sub-batch boundary (seq_per_batch)
	KindBeginPersistedPrepare lsmtable.Kind = 0x12 // a prepared transaction begins (WritePrepared)
	KindBeginUnprepare        lsmtable.Kind = 0x13 // an unprepared one begins (WriteUnprepared)
	KindCommitWithTimestamp   lsmtable.Kind = 0x15 // a commit with its timestamp in Key, XID in Value
)

// The column-family variants of the record tags: a varint32 column
// family ID follows the tag (db/dbformat.h).
const (
	tagCFDeletion            = 0x4
	tagCFValue               = 0x5
	tagCFMerge               = 0x6
	tagCFSingleDeletion      = 0x8
	tagCFRangeDeletion       = 0xE
	tagCFBlobIndex           = 0x10
	tagCFWideColumnEntity    = 0x17
	tagCFValuePreferredSeqno = 0x19
)

// BatchOp is one record of a write batch.
type BatchOp struct {
	// CF is the column family's ID: 0, the default family, for a record
	// without one (and for every LevelDB record).
	CF uint32

	// Kind is an internal key kind (lsmtable.KindValue, KindDeletion,
	// KindSingleDeletion, KindMerge, KindRangeDeletion, KindBlobIndex,
	// KindWideColumnEntity, KindValuePreferredSeqno) for a record that
	// writes a key, whether its tag names a column family or not; or one
	// of the WAL-only kinds (KindLogData, KindNoop, the transaction
	// markers).
	Kind lsmtable.Kind

	// Key is the user key; a range deletion's begin key; the commit
	// timestamp of KindCommitWithTimestamp; nil for the other WAL-only
	// kinds.
	Key []byte

	// Value is the value; a merge operand; a blob index; a serialized
	// wide-column entity; a value then its fixed64 write time (unix
	// seconds) for KindValuePreferredSeqno, as a table stores it with a
	// sequence number in its place; a range deletion's end key
	// (exclusive); KindLogData's blob; a transaction marker's XID. Nil
	// for deletions, no-ops and the markers that begin a transaction.
	Value []byte

	// Tag is the record's tag byte: Kind, or its column-family variant
	// (which LevelDB does not have).
	Tag uint8

	// Seq is the record's sequence number. A record that takes none has
	// the number the next record that does would take: only records that
	// write a key, and take a number, raise the last sequence number.
	Seq uint64
}

// SkipRecord is returned by a DecodeBatch callback for a record it does
// not apply: one of a column family dropped since, or whose tables
// already hold the log's records (the log's number is below the family's
// log number). RocksDB's recovery skips those, and its numbering differs
// in one case, see DecodeBatch.
var SkipRecord = errors.New("lsmdb: write batch record skipped")

// ErrNoBatch marks, beside format.ErrCorrupt, DecodeBatch's errors for a
// log record that RocksDB's recovery does not take for a write batch at
// all: one shorter than the 12-byte header ("log record too small"), or
// whose first sequence number is past MaxSequence (checked from RocksDB
// 8.9, #11985). Recovery reports them as damaged log records: point-in-time
// recovery ends the log's replay there, the open goes on.
var ErrNoBatch = errors.New("lsmdb: log record holds no write batch")

// BatchHeaderLen is the length of a write batch's header: its fixed64
// sequence number and fixed32 count.
const BatchHeaderLen = 12

// DecodeBatch decodes a write batch, a write-ahead log's record at file
// offset off (LevelDB's and RocksDB's db/write_batch.cc): a fixed64
// sequence number, a fixed32 count, then records, each a tag byte, a
// varint32 column family ID for the tags that carry one, then the
// varint32-length-prefixed strings of its kind. It calls fn with each
// record in order and returns the batch's first sequence number and the
// next: the number the next batch's first record should take (RocksDB's
// next_sequence, which point-in-time recovery compares with the next
// log's first batch after a corruption), one past the batch's last.
//
// Sequence numbers are those RocksDB's recovery gives (MemTableInserter
// with seq_per_batch off, as DB::Open and DB::OpenForReadOnly recover):
// the first, then one more for each record that writes a key, whether
// its column family is replayed or not; log data, no-ops and transaction
// markers take none. The exception: a range deletion whose begin and end
// keys are equal deletes nothing, and RocksDB drops it without a number
// when it applies it, but numbers it when the family's records are
// skipped. DecodeBatch gives such a record no number unless fn returns
// SkipRecord for it; fn must not apply it.
//
// RocksDB's recovery decodes a whole batch before it applies any record
// (WriteBatchInternal::UpdateProtectionInfo iterates it): a batch that
// does not decode fails DB::Open and DB::OpenForReadOnly with a
// Corruption status, in every WAL recovery mode. DecodeBatch likewise
// decodes the whole batch before it calls fn: fn sees no record of a
// batch that does not decode. Then RocksDB applies the records in order
// (MemTableInserter), and a record it refuses leaves the records before
// it applied and ends the replay (point-in-time recovery; the open goes
// on) or fails the open: fn likewise sees the records in order, and
// DecodeBatch returns the first error fn returns other than SkipRecord,
// as fn returned it, with the number the refused record had. What
// recovery refuses is fn's to refuse: a merge in a family without a
// merge operator (InvalidArgument, the replay ends), a range deletion
// whose end sorts before its begin in the family's comparator
// (InvalidArgument, the replay ends), a transaction's begin marker in a
// database opened without TransactionDB, as DB::OpenForReadOnly always is
// (NotSupported "WAL contains prepared transactions. Open with
// TransactionDB::Open()": the open fails; RocksDB builds with assertions
// abort on it instead).
//
// DecodeBatch's own errors wrap format.ErrCorrupt (section SectionBatch,
// offset off): a batch shorter than its header or numbered past
// MaxSequence (these wrap ErrNoBatch too), an unknown tag, a string or
// ID cut short, a count that is not the number of records writing a key,
// a last sequence number past MaxSequence (RocksDB does not check it).
// Keys and values alias rec.
func DecodeBatch(rec []byte, off int64, fn func(op BatchOp) error) (first, next uint64, err error) {
	if len(rec) < BatchHeaderLen {
		return 0, 0, noBatch(format.Corruptf(SectionBatch, off, "batch of %d bytes is shorter than its 12-byte header", len(rec)))
	}
	first = binary.LittleEndian.Uint64(rec)
	count := binary.LittleEndian.Uint32(rec[8:])
	if first > MaxSequence {
		return first, first, noBatch(format.Corruptf(SectionBatch, off, "sequence number %d is past 2^56", first))
	}
	if count > 0 && uint64(count-1) > MaxSequence-first {
		return first, first, format.Corruptf(SectionBatch, off, "sequence number %d and count %d run past 2^56", first, count)
	}
	// The whole batch first, as RocksDB's recovery decodes it before it
	// applies a record: fn sees no record of a batch that does not decode.
	found := uint32(0)
	for body := rec[BatchHeaderLen:]; len(body) > 0; {
		pos := len(rec) - len(body)
		op, rest, msg := decodeRecord(body)
		if msg != "" {
			return first, first, format.Corruptf(SectionBatch, off, "record %d at byte %d of the batch: %s", found, pos, msg)
		}
		if keyedKind(op.Kind) {
			found++
		}
		body = rest
	}
	if found != count {
		return first, first, format.Corruptf(SectionBatch, off, "batch holds %d records where its header says %d", found, count)
	}
	seq := first
	for body := rec[BatchHeaderLen:]; len(body) > 0; {
		op, rest, _ := decodeRecord(body)
		body = rest
		op.Seq = seq
		err := fn(op)
		skipped := err == SkipRecord
		if err != nil && !skipped {
			return first, seq, err
		}
		// RocksDB's DeleteRangeCF returns before inserting, and before
		// taking a number, when the keys compare equal.
		if keyedKind(op.Kind) && (op.Kind != lsmtable.KindRangeDeletion || skipped || string(op.Key) != string(op.Value)) {
			seq++
		}
	}
	return first, seq, nil
}

// DecodeBatchInOrder decodes a write batch as LevelDB's
// WriteBatch::Iterate does (db/write_batch.cc), for LevelDB's logs: each
// record goes to fn as soon as it decodes, numbered from the batch's
// first sequence number up, so that a record that does not decode, or
// that fn refuses, fails the batch after fn has seen the records before
// it (which LevelDB's recovery keeps with paranoid_checks off), and a
// count other than the header's fails it after every record. Every
// record counts and takes a number, as in LevelDB, whose batches hold
// puts and deletions only. Errors are DecodeBatch's, fn's returned as
// is.
func DecodeBatchInOrder(rec []byte, off int64, fn func(op BatchOp) error) error {
	if len(rec) < BatchHeaderLen {
		return noBatch(format.Corruptf(SectionBatch, off, "batch of %d bytes is shorter than its 12-byte header", len(rec)))
	}
	seq := binary.LittleEndian.Uint64(rec)
	count := binary.LittleEndian.Uint32(rec[8:])
	found := uint32(0)
	for body := rec[BatchHeaderLen:]; len(body) > 0; {
		pos := len(rec) - len(body)
		op, rest, msg := decodeRecord(body)
		if msg != "" {
			return format.Corruptf(SectionBatch, off, "record %d at byte %d of the batch: %s", found, pos, msg)
		}
		op.Seq = seq + uint64(found)
		if err := fn(op); err != nil {
			return err
		}
		found++
		body = rest
	}
	if found != count {
		return format.Corruptf(SectionBatch, off, "batch holds %d records where its header says %d", found, count)
	}
	return nil
}

// keyedKind reports whether a record of kind k writes a key, and so
// counts in its batch's header.
func keyedKind(k lsmtable.Kind) bool {
	switch k {
	case KindLogData, KindNoop, KindBeginPrepare, KindEndPrepare, KindCommit, KindRollback,
		KindBeginPersistedPrepare, KindBeginUnprepare, KindCommitWithTimestamp:
		return false
	}
	return true
}

// decodeRecord decodes the write batch record at the start of b
// (RocksDB's ReadRecordFromWriteBatch), or says what is wrong with it.
func decodeRecord(b []byte) (op BatchOp, rest []byte, msg string) {
	tag := b[0]
	b = b[1:]
	op = BatchOp{Kind: lsmtable.Kind(tag), Tag: tag}
	var ok bool
	switch tag {
	case tagCFDeletion, tagCFValue, tagCFMerge, tagCFSingleDeletion, tagCFRangeDeletion,
		tagCFBlobIndex, tagCFWideColumnEntity, tagCFValuePreferredSeqno:
		if op.CF, b, ok = varint32(b); !ok {
			return op, nil, "bad column family ID"
		}
		op.Kind = cfKindBase[tag]
	}
	switch op.Kind {
	case lsmtable.KindValue, lsmtable.KindMerge, lsmtable.KindRangeDeletion, lsmtable.KindBlobIndex,
		lsmtable.KindWideColumnEntity, lsmtable.KindValuePreferredSeqno:
		if op.Key, b, ok = batchString(b); !ok {
			return op, nil, "bad key"
		}
		if op.Value, b, ok = batchString(b); !ok {
			return op, nil, "bad value"
		}
		if op.Kind == lsmtable.KindValuePreferredSeqno && len(op.Value) < 8 {
			return op, nil, "a value with a write time shorter than the time"
		}
	case lsmtable.KindDeletion, lsmtable.KindSingleDeletion:
		if op.Key, b, ok = batchString(b); !ok {
			return op, nil, "bad key"
		}
	case KindLogData, KindEndPrepare, KindCommit, KindRollback:
		if op.Value, b, ok = batchString(b); !ok {
			return op, nil, "bad log data or transaction ID"
		}
	case KindCommitWithTimestamp:
		if op.Key, b, ok = batchString(b); !ok {
			return op, nil, "bad commit timestamp"
		}
		if op.Value, b, ok = batchString(b); !ok {
			return op, nil, "bad transaction ID"
		}
	case KindNoop, KindBeginPrepare, KindBeginPersistedPrepare, KindBeginUnprepare:
	default:
		// Also kTypeDeletionWithTimestamp (0x14), a key kind but never a
		// batch's tag.
		return op, nil, "unknown tag " + strconv.Itoa(int(tag))
	}
	return op, b, ""
}

// noBatchError is a corruption error that is also ErrNoBatch.
type noBatchError struct{ *format.CorruptError }

func (e noBatchError) Unwrap() []error { return []error{e.CorruptError, ErrNoBatch} }

func noBatch(err error) error { return noBatchError{err.(*format.CorruptError)} }

// cfKindBase maps a column-family tag to its record's kind.
var cfKindBase = [256]lsmtable.Kind{
	tagCFDeletion:            lsmtable.KindDeletion,
	tagCFValue:               lsmtable.KindValue,
	tagCFMerge:               lsmtable.KindMerge,
	tagCFSingleDeletion:      lsmtable.KindSingleDeletion,
	tagCFRangeDeletion:       lsmtable.KindRangeDeletion,
	tagCFBlobIndex:           lsmtable.KindBlobIndex,
	tagCFWideColumnEntity:    lsmtable.KindWideColumnEntity,
	tagCFValuePreferredSeqno: lsmtable.KindValuePreferredSeqno,
}

// varint32 decodes a varint32 as LevelDB's and RocksDB's GetVarint32
// (util/coding.h): at most 5 bytes, the bits past 32 of a fifth byte
// dropped.
func varint32(b []byte) (uint32, []byte, bool) {
	var v uint32
	for i := 0; i < 5 && i < len(b); i++ {
		c := b[i]
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

// batchString splits a varint32-length-prefixed string off b
// (GetLengthPrefixedSlice).
func batchString(b []byte) (s, rest []byte, ok bool) {
	n, b, ok := varint32(b)
	if !ok || uint64(n) > uint64(len(b)) {
		return nil, nil, false
	}
	return b[:n:n], b[n:], true
}
