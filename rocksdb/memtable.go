package rocksdb

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// memOp is one write replayed from a write-ahead log.
type memOp struct {
	key, value []byte // value: a range deletion's end key
	seq        uint64
	kind       Kind
}

// memBlockSize is the size at which the replayed writes' table cuts a
// data block.
const memBlockSize = 4 << 10

// newMemTable builds the in-memory table of a column family's replayed
// writes: every version in internal key order in data blocks of the
// table engine's layout, the range deletions fragmented, so that the
// memtable reads (versions, range deletions over its own older points,
// merges, seeks) through the same code as a table file. RocksDB keeps
// every version in its memtable too.
func newMemTable(name string, ops []memOp, c *cache.Cache) (*lsmtable.Table, error) {
	var points []memOp
	var dels []lsmtable.RangeDel
	for _, op := range ops {
		if op.kind == KindRangeDeletion {
			dels = append(dels, lsmtable.RangeDel{Start: op.key, End: op.value, Seq: op.seq})
			continue
		}
		points = append(points, op)
	}
	slices.SortFunc(points, func(a, b memOp) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		switch {
		case a.seq > b.seq:
			return -1
		case a.seq < b.seq:
			return 1
		}
		return 0
	})
	var data []byte
	type block struct {
		last []byte
		h    format.BlockHandle
	}
	var blocks []block
	var w codec.BlockWriter
	var ikey, last []byte
	flush := func() {
		b := w.Finish()
		h := format.BlockHandle{Offset: uint64(len(data)), Length: uint64(len(b))}
		data = append(data, b...)
		data = append(data, 0, 0, 0, 0, 0) // a trailer: raw, unchecked
		blocks = append(blocks, block{last: bytes.Clone(last), h: h})
		w.Reset()
	}
	for _, p := range points {
		ikey = append(ikey[:0], p.key...)
		ikey = binary.LittleEndian.AppendUint64(ikey, p.seq<<8|uint64(p.kind))
		w.Add(ikey, p.value)
		last = append(last[:0], ikey...)
		if w.EstimatedSize() >= memBlockSize {
			flush()
		}
	}
	if w.Entries() > 0 {
		flush()
	}
	init := func(t *lsmtable.Table) error {
		t.Codec = memCodec{}
		t.Kinds = pointKinds
		for _, b := range blocks {
			if err := t.Index.Append(b.last, b.h, uint64(len(data))); err != nil {
				return err
			}
		}
		t.Index.Finish()
		if len(dels) > 0 {
			t.Spans = lsmtable.Fragment(dels)
		}
		return nil
	}
	return lsmtable.New(bytes.NewReader(data), int64(len(data)), &lsmtable.Options{Cache: c, Name: name}, init)
}

// memCodec reads the in-memory table's blocks: raw, without checksums
// (they never leave memory).
type memCodec struct{}

func (memCodec) Check(section string, off int64, buf []byte) ([]byte, byte, error) {
	return buf[:len(buf)-format.BlockTrailerLen], 0, nil
}

func (memCodec) Decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	return stored, nil
}

func (memCodec) DecodedLen(typ byte, stored []byte) (int, bool) { return len(stored), true }
