package rocksdb

import (
	"errors"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
)

// replayLog calls fn with each write of a write-ahead log's batches, in
// log order. It follows RocksDB's default WAL recovery mode, which its
// read-only open uses (kPointInTimeRecovery, db/db_impl/
// db_impl_open.cc): the log's valid records up to its first damaged one
// (a bad checksum, a torn or impossible record, a batch that does not
// parse) are replayed, and the replay ends there: torn is true, and the
// later logs are not replayed. Other errors (reading the file) are
// returned.
func replayLog(data []byte, number uint64, fn func(op lsmdb.BatchOp)) (torn bool, err error) {
	r := lsmdb.LogReader{Data: data, Number: number, Mode: lsmdb.RocksDBWAL}
	var ops []lsmdb.BatchOp
	for {
		rec, off, ok, err := r.Next()
		if err != nil {
			if errors.Is(err, format.ErrCorrupt) {
				return true, nil
			}
			return false, err
		}
		if !ok {
			return r.Stale(), nil
		}
		// A batch applies whole or not at all.
		ops = ops[:0]
		if _, _, err := lsmdb.DecodeBatch(rec, off, func(op lsmdb.BatchOp) error { ops = append(ops, op); return nil }); err != nil {
			if errors.Is(err, format.ErrCorrupt) {
				return true, nil
			}
			return false, err
		}
		for _, op := range ops {
			fn(op)
		}
	}
}
