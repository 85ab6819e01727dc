package lsmdb

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// What RocksDB's log reader makes of the next physical record
// (Reader::ReadPhysicalRecord's results in db/log_reader.cc).
type physKind uint8

const (
	physRecord    physKind = iota // a record that passed its checks
	physEOF                       // the end of the file, at a record's start
	physBadHeader                 // the file ends inside a header
	physOld                       // a recyclable record of another log number
	physZero                      // type 0, length 0: the block's rest skipped
	physBadLen                    // the length overruns the block read
	physBadCRC                    // checksum mismatch: the block's rest skipped
)

func recyclableType(t byte) bool {
	return t >= recordRecyclableFull && t <= recordRecyclableLast ||
		t == recordRecyclableTSSize || t == recordRecyclablePredWAL
}

// readMore moves to the next block, as RocksDB's Reader::ReadMore: the
// bytes left in the block read last are its trailer. At the end of the
// file it says whether the end cut a header short.
func (r *LogReader) readMore() (physKind, bool) {
	if !r.eof {
		start := r.end // a block boundary: every read before was a whole block
		r.off = start
		r.end = min(start+logBlockSize, len(r.Data))
		r.eof = r.end-start < logBlockSize
		return 0, true
	}
	if r.off < r.end {
		r.off = r.end
		return physBadHeader, false
	}
	return physEOF, false
}

// physical reads the next physical record as RocksDB's
// Reader::ReadPhysicalRecord does. A record of the file's previous life
// is left unread: it ends the log.
func (r *LogReader) physical() (kind physKind, typ byte, payload []byte, at int) {
	for {
		if r.end-r.off < logHeaderSize {
			if k, more := r.readMore(); !more {
				return k, 0, nil, r.off
			}
			continue
		}
		h := r.Data[r.off:r.end]
		n := int(binary.LittleEndian.Uint16(h[4:]))
		typ = h[6]
		hs := logHeaderSize
		if recyclableType(typ) {
			hs = recyclableHeaderLen
			if len(h) < hs {
				if k, more := r.readMore(); !more {
					return k, typ, nil, r.off
				}
				continue
			}
			// RocksDB 7.8 checks the log number before the length, RocksDB
			// 8.9+ after it (#11979): either way the log ends here, but a
			// length too long for the block is a corruption in 8.9+. A
			// record of another life is whole in its block, so the order
			// only matters on damaged bytes. The u32 compares with the
			// whole file number, as RocksDB compares it.
			if uint64(binary.LittleEndian.Uint32(h[7:])) != r.Number {
				return physOld, typ, nil, r.off
			}
		}
		at = r.off
		if hs+n > len(h) {
			r.off = r.end // RocksDB drops the buffer
			return physBadLen, typ, nil, at
		}
		if typ == recordZero && n == 0 {
			r.off = r.end
			return physZero, typ, nil, at
		}
		crc := crc32.Checksum(h[6:hs+n], castagnoli)
		if codec.MaskCRC(crc) != binary.LittleEndian.Uint32(h) {
			r.off = r.end
			return physBadCRC, typ, nil, at
		}
		r.off += hs + n
		return physRecord, typ, h[hs : hs+n], at
	}
}

// tornError is a corruption error that is also ErrTornTail.
type tornError struct{ *format.CorruptError }

func (e tornError) Unwrap() []error { return []error{e.CorruptError, ErrTornTail} }

// nextRocks is Next for RocksDB's logs: Reader::ReadRecord of RocksDB's
// db/log_reader.cc in the recovery mode Mode names, each reported
// corruption an error.
func (r *LogReader) nextRocks() (rec []byte, recOff int64, ok bool, err error) {
	if r.err != nil {
		return nil, 0, false, r.err
	}
	wal := r.Mode == RocksDBWAL
	fail := func(at int, format_ string, args ...any) ([]byte, int64, bool, error) {
		r.err = format.Corruptf(SectionLog, int64(at), format_, args...)
		return nil, 0, false, r.err
	}
	torn := func(at int, format_ string, args ...any) ([]byte, int64, bool, error) {
		r.err = tornError{format.Corruptf(SectionLog, int64(at), format_, args...).(*format.CorruptError)}
		return nil, 0, false, r.err
	}
	unsupported := func(at int, what string) ([]byte, int64, bool, error) {
		r.err = fmt.Errorf("%w: %s (record type %d at offset %d)", ErrUnsupportedLog, what, r.Data[at+6], at)
		return nil, 0, false, r.err
	}
	var scratch []byte // a buffer of this record's own: records stay valid
	inFrag, start := false, 0
	for {
		kind, typ, payload, at := r.physical()
		switch kind {
		case physRecord:
			if recyclableType(typ) {
				if r.records && !r.recycled {
					// RocksDB 9.4+ refuses it too (#12643); 7.8 reads it.
					return fail(at, "recyclable record of type %d in a log whose first record is not", typ)
				}
				r.recycled = true
			}
			switch typ {
			case recordFull, recordRecyclableFull:
				// RocksDB's writers once left an empty first fragment at a
				// block's end before a whole record: only a first fragment
				// with bytes is an error.
				if inFrag && len(scratch) > 0 {
					return fail(at, "whole record inside a fragmented one begun at offset %d", start)
				}
				r.records = true
				return payload, int64(at), true, nil
			case recordFirst, recordRecyclableFirst:
				if inFrag && len(scratch) > 0 {
					return fail(at, "first fragment inside a record begun at offset %d", start)
				}
				scratch = append(scratch[:0], payload...)
				inFrag, start = true, at
			case recordMiddle, recordRecyclableMiddle, recordLast, recordRecyclableLast:
				if !inFrag {
					return fail(at, "fragment of type %d without a first fragment", typ)
				}
				scratch = append(scratch, payload...)
				if typ == recordLast || typ == recordRecyclableLast {
					r.records = true
					return scratch, int64(start), true, nil
				}
			case recordSetCompression:
				return unsupported(at, "a compressed write-ahead log (wal_compression)")
			case recordTimestampSize, recordRecyclableTSSize:
				return unsupported(at, "user-defined timestamps in the log's column families")
			case recordPredecessorWAL, recordRecyclablePredWAL:
				// What WAL verification (track_and_verify_wals) checks, not
				// read here. RocksDB drops the bytes gathered so far and
				// stays in the fragmented record, as done here.
				scratch = scratch[:0]
			default:
				if typ&recordSafeToIgnore == 0 {
					return fail(at, "unknown record type %d", typ)
				}
				inFrag, scratch = false, scratch[:0]
			}
		case physEOF:
			if inFrag && wal {
				return torn(start, "the file ends inside a record of which %d bytes were read", len(scratch))
			}
			return nil, 0, false, nil
		case physBadHeader:
			if wal {
				return torn(at, "the file ends inside a record header")
			}
			return nil, 0, false, nil
		case physOld:
			if inFrag {
				if wal {
					return torn(start, "a record of the file's previous life (log number %d) at offset %d cuts this record short", binary.LittleEndian.Uint32(r.Data[at+7:]), at)
				}
				return nil, 0, false, nil
			}
			r.stale = true
			return nil, 0, false, nil
		case physZero:
			if inFrag {
				return fail(at, "zeroed space inside a record begun at offset %d", start)
			}
		case physBadLen:
			if r.eof {
				if wal {
					return torn(at, "the file ends inside a record of %d bytes", binary.LittleEndian.Uint16(r.Data[at+4:]))
				}
				return nil, 0, false, nil
			}
			if !wal && r.recycled {
				return nil, 0, false, nil // kTolerateCorruptedTailRecords in a recycled log
			}
			return fail(at, "record of %d bytes overruns its 32 KiB block", binary.LittleEndian.Uint16(r.Data[at+4:]))
		case physBadCRC:
			if !wal && r.recycled {
				return nil, 0, false, nil
			}
			return fail(at, "checksum mismatch in a record of %d bytes", binary.LittleEndian.Uint16(r.Data[at+4:]))
		}
	}
}
