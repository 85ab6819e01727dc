package rocksdb

import (
	"encoding/binary"
	"errors"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
)

// walReplay replays a database's write-ahead logs, oldest first, as
// RocksDB's read-only open does with its default WAL recovery mode
// (kPointInTimeRecovery, db/db_impl/db_impl_open.cc): a log's records up
// to its first damaged one (a bad checksum, a torn or impossible record)
// or to a stale record of a recycled log's previous life are replayed
// and the log ends there; after such damage a later log is replayed only from a
// batch whose sequence number follows on from the last one replayed, and
// otherwise the replay ends. A batch that does not decode under a valid
// checksum fails the open, as in RocksDB.
type walReplay struct {
	next      uint64 // the sequence number the next batch takes
	damaged   bool   // a log ended at damage: the next batch must follow on
	stopped   bool   // the replay has ended
	lastSeq   uint64 // the last sequence number replayed
	damagedAt uint64 // the number of the log whose damage ended the replay; 0 none
}

// log replays one log. keep decides whether a write applies (false: a
// dropped column family's, or one its tables already hold; the write
// still takes its sequence number); apply receives the ones that do.
func (w *walReplay) log(data []byte, number uint64, keep func(op lsmdb.BatchOp) bool, apply func(op lsmdb.BatchOp)) error {
	r := lsmdb.LogReader{Data: data, Number: number, Mode: lsmdb.RocksDBWAL}
	for !w.stopped {
		rec, off, ok, err := r.Next()
		if err != nil {
			if errors.Is(err, format.ErrCorrupt) {
				w.damaged, w.damagedAt = true, number
				return nil
			}
			return err
		}
		if !ok {
			// A stale record of a recycled log's previous life ends it as
			// its end would, as RocksDB 7.8 reads it (9.1 and later treat
			// it as damage for the rule above).
			return nil
		}
		if len(rec) >= 8 && w.damaged {
			if binary.LittleEndian.Uint64(rec) != w.next {
				w.stopped = true // a gap after the damage: nothing more replays
				return nil
			}
			w.damaged, w.damagedAt = false, 0
		}
		_, next, err := lsmdb.DecodeBatch(rec, off, func(op lsmdb.BatchOp) error {
			if op.Kind >= 64 || pointKinds&(1<<op.Kind) == 0 && op.Kind != KindRangeDeletion {
				return nil // a WAL-only record: log data, a no-op, a transaction marker
			}
			if !keep(op) {
				return lsmdb.SkipRecord
			}
			apply(op)
			return nil
		})
		if err != nil {
			if errors.Is(err, lsmdb.ErrNoBatch) {
				w.damaged, w.damagedAt = true, number // too short for a batch: the log ends here
				return nil
			}
			return err
		}
		if next > 0 {
			w.lastSeq = max(w.lastSeq, next-1)
		}
		w.next = next
	}
	return nil
}
