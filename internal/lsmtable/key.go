package lsmtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Kind says what an internal key records (LevelDB's and RocksDB's
// ValueType, db/dbformat.h). Packages leveldb and rocksdb name the
// values they read.
type Kind uint8

// The kinds this engine names; a format package says which a table may
// hold (Table.Kinds).
const (
	KindDeletion              Kind = 0x0
	KindValue                 Kind = 0x1
	KindMerge                 Kind = 0x2
	KindSingleDeletion        Kind = 0x7
	KindRangeDeletion         Kind = 0xF
	KindBlobIndex             Kind = 0x11
	KindDeletionWithTimestamp Kind = 0x14
	KindWideColumnEntity      Kind = 0x16
	KindValuePreferredSeqno   Kind = 0x18
)

// String returns the kind's name: "value", "delete", "single-delete",
// "merge", "range-delete", "blob-index", "delete-with-timestamp",
// "entity", "value-preferred-seqno", or "kind N" for another byte.
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

// IsDeletionKind reports whether k deletes its user key's older versions.
func (k Kind) IsDeletionKind() bool {
	return k == KindDeletion || k == KindSingleDeletion || k == KindDeletionWithTimestamp
}

// KindsMask returns the Table.Kinds mask of ks.
func KindsMask(ks ...Kind) uint64 {
	var m uint64
	for _, k := range ks {
		m |= 1 << k
	}
	return m
}

// MaxSequence is the largest sequence number, 2^56-1: a sequence number
// takes the trailer's top 56 bits.
const MaxSequence = 1<<56 - 1

// TrailerLen is the length of an internal key's trailer.
const TrailerLen = 8

// seekKind is the kind byte of a seek key: above every kind, so that the
// seek key sorts before every version at its sequence number.
const seekKind = 0xff

// SplitKey splits an internal key into its user key and trailer; ok is
// false when ikey is shorter than a trailer or its kind is not in kinds.
func SplitKey(ikey []byte, kinds uint64) (user []byte, seq uint64, kind Kind, ok bool) {
	n := len(ikey) - TrailerLen
	if n < 0 {
		return nil, 0, 0, false
	}
	t := binary.LittleEndian.Uint64(ikey[n:])
	kind = Kind(t & 0xff)
	if kind >= 64 || kinds&(1<<kind) == 0 {
		return nil, 0, 0, false
	}
	return ikey[:n:n], t >> 8, kind, true
}

// CompareKeys orders internal keys as LevelDB's and RocksDB's
// InternalKeyComparator does: user key ascending (descending when
// reverse: RocksDB's ReverseBytewiseComparator), then trailer
// (seq<<8 | kind) descending. Keys shorter than a trailer sort by their
// bytes (they never reach here from a checked block).
func CompareKeys(a, b []byte, reverse bool) int {
	na, nb := len(a)-TrailerLen, len(b)-TrailerLen
	if na < 0 || nb < 0 {
		return bytes.Compare(a, b)
	}
	if c := bytes.Compare(a[:na], b[:nb]); c != 0 {
		if reverse {
			return -c
		}
		return c
	}
	ta, tb := binary.LittleEndian.Uint64(a[na:]), binary.LittleEndian.Uint64(b[nb:])
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

// compareUser orders user keys in the table's order.
func compareUser(a, b []byte, reverse bool) int {
	if reverse {
		return bytes.Compare(b, a)
	}
	return bytes.Compare(a, b)
}

// AppendSeekKey appends the internal key that sorts before every version
// of user at or below seq: user, then trailer seq<<8 | 0xff.
func AppendSeekKey(dst, user []byte, seq uint64) []byte {
	dst = append(dst, user...)
	return binary.LittleEndian.AppendUint64(dst, seq<<8|seekKind)
}

// appendSeekKey appends the table's seek key for user at or below seq:
// AppendSeekKey's, or user itself in a table of plain keys, whose every
// entry is at sequence number 0 and so at or below any seq.
func (t *Table) appendSeekKey(dst, user []byte, seq uint64) []byte {
	if t.Index.plain {
		return append(dst, user...)
	}
	return AppendSeekKey(dst, user, seq)
}
