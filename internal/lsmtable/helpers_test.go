package lsmtable

import (
	"encoding/binary"
	"io"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// The engine's own tests open tables written by internal/ldbtest in
// LevelDB's layout, through this minimal format: the 48-byte footer's
// index handle, CRC-32C trailers, raw or snappy blocks, no filter.

type TableOptions = Options

type ldbCodec struct{}

func (ldbCodec) Check(section string, off int64, buf []byte) ([]byte, byte, error) {
	return codec.CheckBlock(section, off, buf)
}

func (ldbCodec) Decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	return codec.DecodeBlock(section, off, stored, typ, MaxBlockLen, dst[:0])
}

func (ldbCodec) DecodedLen(typ byte, stored []byte) (int, bool) {
	n, err := snappy.DecodedLen(stored)
	return n, typ == format.BlockTypeSnappy && err == nil
}

func ldbInit(t *Table) error {
	t.Codec = ldbCodec{}
	t.Kinds = KindsMask(KindDeletion, KindValue)
	buf, err := t.Read(t.Size()-48, 48, nil)
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint64(buf[40:]) != 0xdb4775248b80fb57 {
		return format.Corruptf(format.SectionFooter, t.Size()-8, "not a LevelDB table")
	}
	_, n := codec.DecodeHandle(buf)
	idx, m := codec.DecodeHandle(buf[n:])
	if n <= 0 || m <= 0 {
		return format.Corruptf(format.SectionFooter, t.Size()-48, "bad handles")
	}
	contents, _, err := t.ReadBlock(format.SectionIndex, idx)
	if err != nil {
		return err
	}
	var it codec.BlockIter
	if err := it.Init(format.SectionIndex, int64(idx.Offset), contents); err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		h, _ := codec.DecodeHandle(it.Value())
		if err := t.Index.Append(it.Key(), h, uint64(t.Size()-48)); err != nil {
			return err
		}
	}
	t.Index.Finish()
	return it.Err()
}

func OpenTable(path string, o *Options) (*Table, error) {
	opts := Options{ReadAhead: true}
	if o != nil {
		opts = *o
		opts.ReadAhead = true
	}
	return Open(path, &opts, ldbInit)
}

func NewTable(r io.ReaderAt, size int64, o *Options) (*Table, error) {
	opts := Options{ReadAhead: true}
	if o != nil {
		opts = *o
		opts.ReadAhead = true
	}
	return New(r, size, &opts, ldbInit)
}
