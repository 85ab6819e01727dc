// Package lsmdb reads the database files LevelDB and RocksDB share: the
// log format of the MANIFEST and the write-ahead logs, the write batches
// the write-ahead logs hold, and the LOCK file.
package lsmdb

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// LevelDB's log format (doc/log_format.md), used by the MANIFEST and the
// write-ahead logs: 32 KiB blocks of records, each a 7-byte header
// (masked CRC-32C of the type byte and the data, u16 length, type) then
// its data. A record that does not fit in a block's rest is cut into a
// first, middle and last fragment; a block's last 6 or fewer bytes are
// zero padding.
//
// RocksDB (db/log_format.h) adds recyclable records, types 5 to 8, for
// logs written into the file of an older log (recycle_log_file_num): an
// 11-byte header whose checksum also covers a u32 log number after the
// type, so that the older log's records left after the new ones are
// known for what they are. A recyclable log pads a block's last 10 or
// fewer bytes.
const (
	logBlockSize        = 32 << 10
	logHeaderSize       = 7
	recyclableHeaderLen = 11

	recordZero   = 0 // preallocated space; skipped to the block's end
	recordFull   = 1
	recordFirst  = 2
	recordMiddle = 3
	recordLast   = 4

	// RocksDB's types.
	recordRecyclableFull    = 5
	recordRecyclableFirst   = 6
	recordRecyclableMiddle  = 7
	recordRecyclableLast    = 8
	recordSetCompression    = 9   // WAL compression (wal_compression) follows
	recordTimestampSize     = 10  // user-defined timestamp sizes (RocksDB 8.3+)
	recordRecyclableTSSize  = 11  // the same, recyclable
	recordPredecessorWAL    = 130 // the previous log's number, size and last sequence number (RocksDB 9.11+)
	recordRecyclablePredWAL = 131
	recordSafeToIgnore      = 0x80 // RocksDB 9.11+ skips an unknown type with this bit

	// LevelDB 1.23's reader returns its own codes kEof (5) and kBadRecord
	// (6) beside the record types, and so takes a checksummed record of
	// type 5 for the log's end and one of type 6 for a bad record
	// (db/log_reader.h).
	levelDBEOF       = 5
	levelDBBadRecord = 6
)

// LogMode says whose log a LogReader reads and how its recovery treats a
// damaged or torn log.
type LogMode uint8

const (
	// LevelDBLog reads LevelDB's logs, record types 1 to 4, as LevelDB's
	// recovery does: a record cut short by the end of the file (a write
	// torn by a crash, fragmented or not) ends the log, dropped whole; a
	// checksum mismatch, an impossible length, an unknown type, zeroed
	// space or fragments out of order is an error, as it is for LevelDB
	// with paranoid_checks (and for the MANIFEST always). With Dropped
	// set, such damage is skipped instead, as LevelDB 1.23 skips it in
	// its write-ahead logs with paranoid_checks off, its default.
	LevelDBLog LogMode = iota

	// RocksDBManifest reads a RocksDB MANIFEST as RocksDB's VersionSet
	// does: RocksDB's record types, in the log reader's
	// kTolerateCorruptedTailRecords mode (db/log_reader.cc) with every
	// reported corruption failing the open. A record cut short by the end
	// of the file ends the log silently (a header cut short, a body cut
	// short in the file's last block, fragments without their last); a
	// checksum mismatch, a length overrunning a block before the last, an
	// unknown type or fragments out of order is an error.
	RocksDBManifest

	// RocksDBWAL reads a RocksDB write-ahead log as DB::Open and
	// DB::OpenForReadOnly do in the WAL recovery mode
	// kPointInTimeRecovery, DBOptions' default from RocksDB 6.x to 11.x:
	// every problem the log reader reports ends the log's replay there,
	// the records before it kept. Next returns those problems as errors
	// wrapping format.ErrCorrupt, the tail a crash tears (a header or
	// body cut short by the end of the file, fragments without their
	// last) wrapping ErrTornTail too, for the caller to stop at. A
	// recyclable record whose log number is not the file's, a record of
	// the file's previous life, ends the log without an error (Stale
	// says so).
	RocksDBWAL
)

// ErrTornTail marks, beside format.ErrCorrupt, the errors of a RocksDBWAL
// LogReader for a log's last record cut short by the end of the file or
// by a record of the file's previous life: what a crash in the middle of
// a write leaves. RocksDB's point-in-time recovery treats them as any
// other corruption (the log's replay ends there, and later logs replay
// only if their sequence numbers follow on).
var ErrTornTail = errors.New("lsmdb: log ends inside a record, torn by a crash")

// ErrUnsupportedLog is wrapped by the errors of a RocksDB LogReader for
// logs written with options this package does not read: compressed
// write-ahead logs (wal_compression) and user-defined timestamp sizes.
var ErrUnsupportedLog = errors.New("lsmdb: log written with an option this reader does not support")

// SectionLog names a log file's records in corruption errors.
const SectionLog = "log record"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// LogReader reads the records of one log file held in memory.
type LogReader struct {
	Data []byte

	// Number is the log file's number, which RocksDB's recyclable records
	// carry; only RocksDB modes read it.
	Number uint64

	// Mode is LevelDBLog (the zero value), RocksDBManifest or RocksDBWAL.
	Mode LogMode

	// Dropped, when set in LevelDBLog mode, makes damage no error: the
	// reader drops what LevelDB 1.23's log::Reader drops (db/log_reader.cc,
	// ReadRecord), calls Dropped with an error wrapping format.ErrCorrupt
	// where LevelDB's reader reports a corruption, and reads on. A
	// checksum mismatch or a length overrunning a block before the
	// file's last partial one drops the rest of its 32 KiB block (the
	// length may be the damaged byte); a record begun and not ended
	// before such damage, before a new whole or first fragment, or
	// before zeroed space, is dropped; middle and last fragments without
	// a first, and records of unknown types, are dropped. As in LevelDB's
	// reader, whose codes for the end of the log and a bad record are 5
	// and 6, a record of type 5 ends the log and one of type 6 is
	// dropped silently (with the record in fragments, if any).
	Dropped func(err error)

	off int    // next physical record's offset
	rec []byte // the record being assembled from fragments

	// RocksDB modes: the buffer RocksDB's reader holds, [off, end) of the
	// block read last; eof when that block is the file's last, shorter
	// than a block.
	end      int
	eof      bool
	recycled bool // a recyclable record was read (RocksDB's recycled_)
	records  bool // a record was returned
	stale    bool
	err      error
}

// Stale reports whether a RocksDB log ended at a recyclable record of
// another log number: a record of the file's previous life, after this
// life's records. RocksDB 7.8 to 9.0 end the log there as at its end;
// RocksDB 9.1 and later (#12403) note it as a possible corruption for
// point-in-time recovery, as if the log were torn: later logs replay only
// if their sequence numbers follow on.
func (r *LogReader) Stale() bool { return r.stale }

// Next returns the next whole record and its file offset (that of its
// first fragment); ok false at the log's end. The record aliases Data,
// or a buffer of its own when it was cut into fragments: it stays valid
// after later calls. What ends the log and what is an error depends on
// Mode (see LevelDBLog, RocksDBManifest, RocksDBWAL); errors wrap
// format.ErrCorrupt, or ErrUnsupportedLog, and a RocksDB mode's reader
// returns its first error again on later calls.
func (r *LogReader) Next() (rec []byte, recOff int64, ok bool, err error) {
	if r.Mode != LevelDBLog {
		return r.nextRocks()
	}
	r.rec = nil
	inFragments := false
	start := 0
	lenient := r.Dropped != nil
	// drop reports damage at off, and drops the record in fragments, if
	// any, as LevelDB's reader does when ReadPhysicalRecord returns
	// kBadRecord in the middle of a record.
	drop := func(off int, msg string, args ...any) {
		r.Dropped(format.Corruptf(SectionLog, int64(off), msg, args...))
		if inFragments {
			r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: damage in its fragments at offset %d", len(r.rec), off))
			inFragments, r.rec = false, r.rec[:0]
		}
	}
	for {
		blockStart := r.off - r.off%logBlockSize
		blockLeft := logBlockSize - r.off%logBlockSize
		if blockLeft < logHeaderSize {
			r.off += blockLeft // trailer padding
			continue
		}
		if r.off+logHeaderSize > len(r.Data) {
			return nil, 0, false, nil // the end, or a header torn by a crash
		}
		h := r.Data[r.off : r.off+logHeaderSize]
		n := int(binary.LittleEndian.Uint16(h[4:]))
		typ := h[6]
		// LevelDB's reader reads 32 KiB at a time: a length overrunning
		// what it read is a torn write in the file's last, partial block,
		// damage in any other.
		left := min(blockLeft, len(r.Data)-r.off)
		if lenient && logHeaderSize+n > left {
			if len(r.Data)-blockStart < logBlockSize {
				return nil, 0, false, nil
			}
			drop(r.off, "record of %d bytes overruns its 32 KiB block: the block's last %d bytes dropped", n, left)
			r.off += left
			continue
		}
		if typ == recordZero && n == 0 && (lenient || binary.LittleEndian.Uint32(h) == 0) {
			// Zeroed, preallocated space (LevelDB skips it whatever the
			// checksum bytes hold): the block's rest.
			if inFragments && !lenient {
				return nil, 0, false, format.Corruptf(SectionLog, int64(r.off), "zeroed space inside a record begun at offset %d", start)
			}
			if inFragments {
				r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: zeroed space in its fragments at offset %d", len(r.rec), r.off))
				inFragments, r.rec = false, r.rec[:0]
			}
			r.off += blockLeft
			if r.off >= len(r.Data) {
				return nil, 0, false, nil
			}
			continue
		}
		if logHeaderSize+n > blockLeft {
			return nil, 0, false, format.Corruptf(SectionLog, int64(r.off), "record of %d bytes overruns its 32 KiB block", n)
		}
		if r.off+logHeaderSize+n > len(r.Data) {
			return nil, 0, false, nil // a record torn by a crash: the log ends before it
		}
		payload := r.Data[r.off+logHeaderSize : r.off+logHeaderSize+n]
		crc := crc32.Update(crc32.Checksum(h[6:7], castagnoli), castagnoli, payload)
		if codec.MaskCRC(crc) != binary.LittleEndian.Uint32(h) {
			if !lenient {
				return nil, 0, false, format.Corruptf(SectionLog, int64(r.off), "checksum mismatch in a record of %d bytes", n)
			}
			// The length may be what is damaged: the block's rest goes.
			drop(r.off, "checksum mismatch in a record of %d bytes: the block's last %d bytes dropped", n, left)
			r.off += left
			continue
		}
		off := r.off
		r.off += logHeaderSize + n
		switch typ {
		case recordFull:
			if inFragments {
				if !lenient {
					return nil, 0, false, format.Corruptf(SectionLog, int64(off), "whole record inside a fragmented one begun at offset %d", start)
				}
				if len(r.rec) > 0 { // LevelDB's writers once left an empty first fragment
					r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: a whole record at offset %d before its last fragment", len(r.rec), off))
				}
			}
			return payload, int64(off), true, nil
		case recordFirst:
			if inFragments {
				if !lenient {
					return nil, 0, false, format.Corruptf(SectionLog, int64(off), "first fragment inside a record begun at offset %d", start)
				}
				if len(r.rec) > 0 {
					r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: a first fragment at offset %d before its last fragment", len(r.rec), off))
				}
			}
			inFragments, start = true, off
			r.rec = append(r.rec[:0], payload...)
		case recordMiddle, recordLast:
			if !inFragments {
				if !lenient {
					return nil, 0, false, format.Corruptf(SectionLog, int64(off), "fragment of type %d without a first fragment", typ)
				}
				r.Dropped(format.Corruptf(SectionLog, int64(off), "fragment of type %d (%d bytes) without a first fragment dropped", typ, n))
				continue
			}
			r.rec = append(r.rec, payload...)
			if typ == recordLast {
				return r.rec, int64(start), true, nil
			}
		case levelDBEOF:
			if !lenient {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "unknown record type %d", typ)
			}
			return nil, 0, false, nil
		case levelDBBadRecord:
			if !lenient {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "unknown record type %d", typ)
			}
			if inFragments {
				r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: a record of type %d in its fragments at offset %d", len(r.rec), typ, off))
				inFragments, r.rec = false, r.rec[:0]
			}
		default:
			if !lenient {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "unknown record type %d", typ)
			}
			r.Dropped(format.Corruptf(SectionLog, int64(off), "record of unknown type %d (%d bytes) dropped", typ, n))
			if inFragments {
				r.Dropped(format.Corruptf(SectionLog, int64(start), "record of %d bytes dropped: a record of unknown type in its fragments at offset %d", len(r.rec), off))
				inFragments, r.rec = false, r.rec[:0]
			}
		}
	}
}
