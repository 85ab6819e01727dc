package lsmdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

func opString(op BatchOp) string {
	return fmt.Sprintf("cf%d %#x %q %q @%d", op.CF, uint8(op.Kind), op.Key, op.Value, op.Seq)
}

func decodeAll(rec []byte, skip func(op BatchOp) bool) (ops []string, first, next uint64, err error) {
	first, next, err = DecodeBatch(rec, 100, func(op BatchOp) error {
		ops = append(ops, opString(op))
		if skip != nil && skip(op) {
			return SkipRecord
		}
		return nil
	})
	return ops, first, next, err
}

// Sequence numbers as RocksDB's MemTableInserter gives them: one per
// record writing a key, none for log data, markers and an applied
// range deletion of an empty range.
func TestDecodeBatchSequence(t *testing.T) {
	b := newTestBatch(1000)
	b.key(0, lsmtable.KindValue, "a", "1")
	b.key(2, lsmtable.KindDeletion, "b", "")
	b.marker(KindLogData, "blob")
	b.key(1, lsmtable.KindMerge, "c", "+")
	b.key(3, lsmtable.KindRangeDeletion, "d", "d") // deletes nothing
	b.key(300, lsmtable.KindSingleDeletion, "e", "")
	b.marker(KindNoop)
	b.key(0, lsmtable.KindRangeDeletion, "f", "g")
	b.key(1, lsmtable.KindWideColumnEntity, "h", "\x00\x01\x00\x01x")
	b.key(0, lsmtable.KindBlobIndex, "", "idx")
	b.key(7, lsmtable.KindValuePreferredSeqno, "i", "v\x01\x02\x03\x04\x05\x06\x07\x08")
	rec := b.bytes()
	want := []string{
		`cf0 0x1 "a" "1" @1000`,
		`cf2 0x0 "b" "" @1001`,
		`cf0 0x3 "" "blob" @1002`,
		`cf1 0x2 "c" "+" @1002`,
		`cf3 0xf "d" "d" @1003`,
		`cf300 0x7 "e" "" @1003`,
		`cf0 0xd "" "" @1004`,
		`cf0 0xf "f" "g" @1004`,
		`cf1 0x16 "h" "\x00\x01\x00\x01x" @1005`,
		`cf0 0x11 "" "idx" @1006`,
		`cf7 0x18 "i" "v\x01\x02\x03\x04\x05\x06\a\b" @1007`,
	}
	ops, first, next, err := decodeAll(rec, nil)
	if err != nil || first != 1000 || next != 1008 || fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("got %v, first %d, next %d, %v\nwant %v, first 1000, next 1008", ops, first, next, err, want)
	}
	// The empty range deletion of a skipped column family takes a number.
	ops, _, next, err = decodeAll(rec, func(op BatchOp) bool { return op.CF == 3 })
	if err != nil || next != 1009 || ops[5] != `cf300 0x7 "e" "" @1004` {
		t.Fatalf("family 3 skipped: %v, next %d, %v; want e @1004, next 1009", ops, next, err)
	}
	// Tags and aliasing: keys and values alias the record, an empty key
	// is not nil.
	_, _, err = DecodeBatch(rec, 0, func(op BatchOp) error {
		if op.Key == nil && op.Kind != KindLogData && op.Kind != KindNoop {
			return fmt.Errorf("nil key in %s", opString(op))
		}
		if op.Tag != uint8(op.Kind) && (op.CF == 0 || op.Tag != cfTags[op.Kind]) {
			return fmt.Errorf("tag %#x for %s", op.Tag, opString(op))
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// Transaction markers take no number and count as no record; the XIDs
// and the commit timestamp are read.
func TestDecodeBatchMarkers(t *testing.T) {
	b := newTestBatch(5)
	b.marker(KindBeginPrepare)
	b.key(1, lsmtable.KindValue, "k", "v")
	b.marker(KindEndPrepare, "xid1")
	b.marker(KindCommit, "xid1")
	b.marker(KindRollback, "xid2")
	b.marker(KindBeginPersistedPrepare)
	b.marker(KindBeginUnprepare)
	b.marker(KindCommitWithTimestamp, "ts", "xid3")
	ops, _, next, err := decodeAll(b.bytes(), nil)
	want := `[cf0 0x9 "" "" @5 cf1 0x1 "k" "v" @5 cf0 0xa "" "xid1" @6 cf0 0xb "" "xid1" @6 cf0 0xc "" "xid2" @6 cf0 0x12 "" "" @6 cf0 0x13 "" "" @6 cf0 0x15 "ts" "xid3" @6]`
	if err != nil || next != 6 || fmt.Sprint(ops) != want {
		t.Errorf("got %v, next %d, %v\nwant %s", ops, next, err, want)
	}
}

// Damaged batches are corruption errors, found before fn sees any
// record of them, as RocksDB's recovery decodes a batch whole before it
// applies it.
func TestDecodeBatchErrors(t *testing.T) {
	good := newTestBatch(9).key(0, lsmtable.KindValue, "a", "1").key(1, lsmtable.KindValue, "b", "2").bytes()
	withTail := func(count uint32, tail ...byte) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[8:], count)
		return append(b, tail...)
	}
	huge := make([]byte, 12)
	binary.LittleEndian.PutUint64(huge, MaxSequence)
	binary.LittleEndian.PutUint32(huge[8:], 2)
	for _, tc := range []struct {
		name string
		rec  []byte
	}{
		{"short header", good[:11]},
		{"unknown tag", withTail(3, 0x42, 1, 'x')},
		{"deletion with timestamp tag", withTail(3, 0x14, 1, 'x')},
		{"key cut short", withTail(3, 0x1, 5, 'x')},
		{"value cut short", withTail(3, 0x1, 1, 'x', 2, 'y')},
		{"family ID cut short", withTail(3, tagCFValue, 0x80)},
		{"length of six bytes", withTail(3, 0x1, 0x80, 0x80, 0x80, 0x80, 0x80, 0)},
		{"count too high", withTail(3)},
		{"count too low", withTail(1)},
		{"log data cut short", withTail(2, byte(KindLogData), 3, 'x')},
		{"write time missing", withTail(3, byte(lsmtable.KindValuePreferredSeqno), 1, 'k', 7, 1, 2, 3, 4, 5, 6, 7)},
		{"sequence past 2^56", huge},
	} {
		ops, _, _, err := decodeAll(tc.rec, nil)
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Section != SectionBatch || ce.Offset != 100 || len(ops) != 0 {
			t.Errorf("%s: %d records then %v; want none, and a write batch corruption at 100", tc.name, len(ops), err)
		}
	}
	// What RocksDB's recovery does not take for a batch at all.
	for _, tc := range []struct {
		name    string
		rec     []byte
		noBatch bool
	}{
		{"short", good[:11], true},
		{"first past 2^56", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint64(nil, MaxSequence+1), 0), true},
		{"last past 2^56", huge, false},
		{"unknown tag", withTail(3, 0x42), false},
	} {
		if _, _, err := DecodeBatch(tc.rec, 0, func(BatchOp) error { return nil }); errors.Is(err, ErrNoBatch) != tc.noBatch || !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrNoBatch %v", tc.name, err, tc.noBatch)
		}
	}
	// A fifth length byte's bits past 32 are dropped, as RocksDB's
	// GetVarint32 drops them: 0x10 in the fifth byte is 1<<32, so 0.
	rec := withTail(3, 0x1, 0x80, 0x80, 0x80, 0x80, 0x10, 0)
	if ops, _, _, err := decodeAll(rec, nil); err != nil || len(ops) != 3 || ops[2] != `cf0 0x1 "" "" @11` {
		t.Errorf("five-byte length: %v, %v; want an empty key and value", ops, err)
	}
	// fn's error ends the decoding and comes back as is, with the number
	// of the record it refused.
	stop := errors.New("stop")
	n := 0
	_, next, err := DecodeBatch(good, 0, func(op BatchOp) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 || next != 10 {
		t.Errorf("fn's error: %v after %d records, next %d; want stop after 2, next 10", err, n, next)
	}
}
