package lsmdb

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// FuzzLogReader reads arbitrary bytes as a log in every mode: no panic,
// no endless loop, records in file order, errors that wrap
// format.ErrCorrupt (or ErrUnsupportedLog), RocksDB's two modes reading
// the same records (they differ only in what ends the log), and
// LevelDB's mode skipping damage (Dropped) reading a log the strict mode
// reads to its end the same.
func FuzzLogReader(f *testing.F) {
	// Small logs: the fuzzer slows down by orders of magnitude on inputs
	// of tens of KiB. The tests above cover fragments over blocks.
	for _, recycle := range []bool{false, true} {
		w := writeTestLog(9, recycle, [][]byte{[]byte("a"), make([]byte, 300), nil, []byte("last")})
		f.Add(w.data, uint64(9))
		f.Add(w.data[:len(w.data)-5], uint64(9))
		f.Add(w.data, uint64(8))
	}
	f.Fuzz(func(t *testing.T, data []byte, number uint64) {
		var rocks [2][][]byte
		for _, mode := range []LogMode{LevelDBLog, RocksDBManifest, RocksDBWAL} {
			r := &LogReader{Data: data, Number: number, Mode: mode}
			var recs [][]byte
			last := int64(-1)
			for i := 0; ; i++ {
				if i > len(data)/logHeaderSize+1 {
					t.Fatalf("mode %d: more records than the log has room for", mode)
				}
				rec, off, ok, err := r.Next()
				if err != nil {
					if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, ErrUnsupportedLog) {
						t.Fatalf("mode %d: %v wraps neither ErrCorrupt nor ErrUnsupportedLog", mode, err)
					}
					if mode != LevelDBLog {
						if _, _, ok2, err2 := r.Next(); ok2 || err2 != err {
							t.Fatalf("mode %d: after %v, Next gave ok=%v, %v", mode, err, ok2, err2)
						}
					}
					break
				}
				if !ok {
					break
				}
				if off <= last || off >= int64(len(data)) || len(rec) > len(data) {
					t.Fatalf("mode %d: record of %d bytes at %d after one at %d, in %d bytes", mode, len(rec), off, last, len(data))
				}
				last = off
				recs = append(recs, slices.Clone(rec))
			}
			if mode != LevelDBLog {
				rocks[mode-RocksDBManifest] = recs
			}
		}
		// LevelDB's mode skipping damage: where the strict mode reads the
		// log to its end, the same records, nothing dropped.
		strict, _, strictErr := readAll(&LogReader{Data: data})
		dropped := 0
		lenient, _, err := readAll(&LogReader{Data: data, Dropped: func(err error) {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("dropped: %v does not wrap ErrCorrupt", err)
			}
			if dropped++; dropped > len(data) {
				t.Fatalf("more damage dropped than the log has bytes")
			}
		}})
		if err != nil || len(lenient) > len(data)/logHeaderSize+1 {
			t.Fatalf("skipping damage: %d records, %v", len(lenient), err)
		}
		if strictErr == nil && (dropped > 0 || len(strict) != len(lenient)) {
			t.Fatalf("strict mode reads %d records, skipping %d, dropping %d", len(strict), len(lenient), dropped)
		}
		for i := range strict {
			if strictErr == nil && string(strict[i]) != string(lenient[i]) {
				t.Fatalf("record %d differs between the strict and skipping modes", i)
			}
		}
		if len(rocks[0]) != len(rocks[1]) {
			t.Fatalf("RocksDB modes read %d and %d records", len(rocks[0]), len(rocks[1]))
		}
		for i := range rocks[0] {
			if string(rocks[0][i]) != string(rocks[1][i]) {
				t.Fatalf("RocksDB modes differ at record %d", i)
			}
		}
	})
}

// FuzzDecodeBatch decodes arbitrary bytes as a write batch: no panic,
// sequence numbers from the first, rising by at most one a record, the
// header's count of records writing a key when it decodes, errors that
// wrap format.ErrCorrupt; with every record skipped, each record writing
// a key takes a number. DecodeBatchInOrder must read a batch of puts and
// deletions as DecodeBatch does.
func FuzzDecodeBatch(f *testing.F) {
	b := newTestBatch(5)
	b.key(0, lsmtable.KindValue, "k", "v").key(3, lsmtable.KindRangeDeletion, "a", "a").key(1, lsmtable.KindMerge, "m", "+")
	b.marker(KindLogData, "x").marker(KindBeginPrepare).marker(KindEndPrepare, "id").marker(KindNoop)
	b.key(2, lsmtable.KindWideColumnEntity, "e", "\x00\x01\x00\x01v").key(0, lsmtable.KindValuePreferredSeqno, "t", "value+12345678")
	f.Add(b.bytes())
	f.Add(newTestBatch(MaxSequence).key(0, lsmtable.KindDeletion, "d", "").bytes())
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, rec []byte) {
		// LevelDB's order of decoding: the same records and numbers where
		// every record is a put or a deletion (a LevelDB batch's).
		var all, inOrder []BatchOp
		_, _, errAll := DecodeBatch(rec, 7, func(op BatchOp) error { all = append(all, op); return nil })
		errInOrder := DecodeBatchInOrder(rec, 7, func(op BatchOp) error { inOrder = append(inOrder, op); return nil })
		if errInOrder != nil && !errors.Is(errInOrder, format.ErrCorrupt) {
			t.Fatalf("DecodeBatchInOrder: %v does not wrap ErrCorrupt", errInOrder)
		}
		leveldb := true
		for _, op := range all {
			leveldb = leveldb && op.Tag <= uint8(lsmtable.KindValue)
		}
		if errAll == nil && leveldb && (errInOrder != nil || len(inOrder) != len(all)) {
			t.Fatalf("DecodeBatch decodes %d records, DecodeBatchInOrder %d, %v", len(all), len(inOrder), errInOrder)
		}
		for i := range min(len(all), len(inOrder)) {
			a, b := all[i], inOrder[i]
			if errAll == nil && leveldb && (a.Kind != b.Kind || string(a.Key) != string(b.Key) || string(a.Value) != string(b.Value) || a.Seq != b.Seq) {
				t.Fatalf("record %d: DecodeBatch %+v, DecodeBatchInOrder %+v", i, a, b)
			}
		}
		for _, skip := range []bool{false, true} {
			var seqs []uint64
			keyed := uint32(0)
			first, next, err := DecodeBatch(rec, 7, func(op BatchOp) error {
				seqs = append(seqs, op.Seq)
				switch op.Kind {
				case KindLogData, KindNoop, KindBeginPrepare, KindEndPrepare, KindCommit, KindRollback,
					KindBeginPersistedPrepare, KindBeginUnprepare, KindCommitWithTimestamp:
				default:
					keyed++
				}
				if skip {
					return SkipRecord
				}
				return nil
			})
			if err != nil && !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("%v does not wrap ErrCorrupt", err)
			}
			if len(rec) < BatchHeaderLen || binary.LittleEndian.Uint64(rec) > MaxSequence {
				if !errors.Is(err, ErrNoBatch) || len(seqs) > 0 {
					t.Fatalf("no batch: %d records, %v", len(seqs), err)
				}
				continue
			}
			prev := first
			for _, s := range seqs {
				if s < prev || s > prev+1 {
					t.Fatalf("sequence numbers %v from %d", seqs, first)
				}
				prev = s
			}
			if next < prev || next > prev+1 || next > MaxSequence+1 {
				t.Fatalf("next %d after %v", next, seqs)
			}
			if err == nil {
				if keyed != binary.LittleEndian.Uint32(rec[8:]) {
					t.Fatalf("%d records writing a key, the header says %d", keyed, binary.LittleEndian.Uint32(rec[8:]))
				}
				if skip && next-first != uint64(keyed) {
					t.Fatalf("all skipped: %d numbers for %d records", next-first, keyed)
				}
			}
		}
	})
}
