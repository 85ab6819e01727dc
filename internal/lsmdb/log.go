// Package lsmdb reads the database files LevelDB and RocksDB share: the
// log format of the MANIFEST and the write-ahead logs, and the LOCK file.
package lsmdb

import (
	"encoding/binary"
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
const (
	logBlockSize  = 32 << 10
	logHeaderSize = 7

	recordZero   = 0 // preallocated space; skipped to the block's end
	recordFull   = 1
	recordFirst  = 2
	recordMiddle = 3
	recordLast   = 4
)

// SectionLog names a log file's records in corruption errors.
const SectionLog = "log record"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// LogReader reads the records of one log file held in memory.
type LogReader struct {
	Data []byte

	off int    // next physical record's offset
	rec []byte // the record being assembled from fragments
}

// Next returns the next whole record and its file offset (that of its
// first fragment); ok false at the log's end. The record aliases data,
// or a buffer of its own when it was cut into fragments: it stays valid
// after later calls. A record cut short by the
// end of the file (a write torn by a crash) ends the log, as LevelDB's
// recovery treats it; a checksum mismatch, an impossible length, an
// unknown type or fragments out of order is an error wrapping
// format.ErrCorrupt.
func (r *LogReader) Next() (rec []byte, recOff int64, ok bool, err error) {
	r.rec = nil
	inFragments := false
	start := 0
	for {
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
		if typ == recordZero && n == 0 && binary.LittleEndian.Uint32(h) == 0 {
			r.off += blockLeft // zeroed, preallocated space
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
			return nil, 0, false, format.Corruptf(SectionLog, int64(r.off), "checksum mismatch in a record of %d bytes", n)
		}
		off := r.off
		r.off += logHeaderSize + n
		switch typ {
		case recordFull:
			if inFragments {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "whole record inside a fragmented one begun at offset %d", start)
			}
			return payload, int64(off), true, nil
		case recordFirst:
			if inFragments {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "first fragment inside a record begun at offset %d", start)
			}
			inFragments, start = true, off
			r.rec = append(r.rec, payload...)
		case recordMiddle, recordLast:
			if !inFragments {
				return nil, 0, false, format.Corruptf(SectionLog, int64(off), "fragment of type %d without a first fragment", typ)
			}
			r.rec = append(r.rec, payload...)
			if typ == recordLast {
				return r.rec, int64(start), true, nil
			}
		default:
			return nil, 0, false, format.Corruptf(SectionLog, int64(off), "unknown record type %d", typ)
		}
	}
}
