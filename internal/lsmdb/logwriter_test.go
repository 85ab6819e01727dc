package lsmdb

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// testLog writes a log as LevelDB's and RocksDB's log::Writer do
// (db/log_writer.cc, AddRecord): records cut into fragments at block
// ends, a block's rest padded with zeros when a header does not fit,
// recyclable headers carrying the log number when recycle is set.
type testLog struct {
	data    []byte
	number  uint32
	recycle bool
	starts  []int // each logical record's offset (its first fragment's)
	ends    []int // each logical record's end
}

func (w *testLog) headerLen() int {
	if w.recycle {
		return recyclableHeaderLen
	}
	return logHeaderSize
}

// add appends a logical record, returning its offset.
func (w *testLog) add(rec []byte) int {
	hs := w.headerLen()
	start := -1
	first := true
	for {
		left := logBlockSize - len(w.data)%logBlockSize
		if left < hs {
			w.data = append(w.data, make([]byte, left)...)
		}
		avail := logBlockSize - len(w.data)%logBlockSize - hs
		n := min(len(rec), avail)
		last := n == len(rec)
		var typ byte
		switch {
		case first && last:
			typ = recordFull
		case first:
			typ = recordFirst
		case last:
			typ = recordLast
		default:
			typ = recordMiddle
		}
		if w.recycle {
			typ += recordRecyclableFull - recordFull
		}
		if start < 0 {
			start = len(w.data)
		}
		w.physical(typ, rec[:n])
		rec, first = rec[n:], false
		if last {
			break
		}
	}
	w.starts = append(w.starts, start)
	w.ends = append(w.ends, len(w.data))
	return start
}

// physical appends one physical record of type typ, checksummed.
func (w *testLog) physical(typ byte, payload []byte) {
	h := make([]byte, 7, recyclableHeaderLen)
	binary.LittleEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6] = typ
	if recyclableType(typ) {
		h = binary.LittleEndian.AppendUint32(h, w.number)
	}
	crc := crc32.Update(crc32.Checksum(h[6:], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h, codec.MaskCRC(crc))
	w.data = append(append(w.data, h...), payload...)
}

// testBatch builds a write batch as RocksDB's WriteBatch does
// (db/write_batch.cc): the tags of the default column family for ID 0,
// the column-family tags otherwise.
type testBatch struct {
	rep   []byte
	count uint32
}

func newTestBatch(seq uint64) *testBatch {
	return &testBatch{rep: binary.LittleEndian.AppendUint64(make([]byte, 0, 64), seq)[:12]}
}

func (b *testBatch) bytes() []byte {
	binary.LittleEndian.PutUint32(b.rep[8:], b.count)
	return b.rep
}

func (b *testBatch) str(s string) {
	b.rep = binary.AppendUvarint(b.rep, uint64(len(s)))
	b.rep = append(b.rep, s...)
}

// cfTags maps a key kind to the tag of its column-family variant.
var cfTags = map[lsmtable.Kind]byte{
	lsmtable.KindDeletion: tagCFDeletion, lsmtable.KindValue: tagCFValue, lsmtable.KindMerge: tagCFMerge,
	lsmtable.KindSingleDeletion: tagCFSingleDeletion, lsmtable.KindRangeDeletion: tagCFRangeDeletion,
	lsmtable.KindBlobIndex: tagCFBlobIndex, lsmtable.KindWideColumnEntity: tagCFWideColumnEntity,
	lsmtable.KindValuePreferredSeqno: tagCFValuePreferredSeqno,
}

// key adds a record writing a key; value is ignored for deletions.
func (b *testBatch) key(cf uint32, kind lsmtable.Kind, key, value string) *testBatch {
	if cf == 0 {
		b.rep = append(b.rep, byte(kind))
	} else {
		b.rep = append(b.rep, cfTags[kind])
		b.rep = binary.AppendUvarint(b.rep, uint64(cf))
	}
	b.str(key)
	if kind != lsmtable.KindDeletion && kind != lsmtable.KindSingleDeletion {
		b.str(value)
	}
	b.count++
	return b
}

// marker adds a record that writes no key, with its strings.
func (b *testBatch) marker(kind lsmtable.Kind, strs ...string) *testBatch {
	b.rep = append(b.rep, byte(kind))
	for _, s := range strs {
		b.str(s)
	}
	return b
}
