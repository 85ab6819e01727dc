// Package ldbtest writes LevelDB tables and database files for tests of
// package leveldb and the fuzz targets: the layout of LevelDB's
// table/table_builder.cc, db/log_writer.cc and db/version_edit.cc, with
// knobs LevelDB lacks (block size in bytes, compression per block,
// compressed index and metaindex as goleveldb writes them, no filter).
// It is test support, not a product: it writes what it is given, sorted
// or not.
package ldbtest

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Entry is one internal key and its value.
type Entry struct {
	Key   []byte // user key
	Seq   uint64
	Kind  byte // 1 value, 0 deletion
	Value []byte
}

// InternalKey returns e's internal key: the user key, then seq<<8|kind.
func (e Entry) InternalKey() []byte {
	return binary.LittleEndian.AppendUint64(append([]byte(nil), e.Key...), e.Seq<<8|uint64(e.Kind))
}

// Options shape a table.
type Options struct {
	BlockSize        int    // cut a data block once it reaches this many bytes; 0: 4096
	Snappy           bool   // snappy-compress blocks that shrink by 12.5% (LevelDB's rule)
	CompressAll      bool   // with Snappy, compress every block but the filter, as goleveldb does
	NoFilter         bool   // write no filter block
	FilterName       string // the metaindex key; "": "filter.leveldb.BuiltinBloomFilter2"
	ShortSeparators  bool   // shorten index separators as LevelDB does; false: last keys
	RestartInterval  int    // 0: 16
	EmptyMetaRestart bool   // an empty metaindex block gets LevelDB's restart point at 0
	// Plain writes the keys as given, with no trailer (Entry.Seq and Kind
	// unused), as LevelDB's TableBuilder does when given plain keys; the
	// filter then covers the whole keys.
	Plain bool
	// Zlib compresses blocks as Mojang's LevelDB does instead of snappy:
	// 2 a zlib stream, 4 raw deflate; 0: snappy. Blocks are compressed
	// under Snappy's rules.
	Zlib byte
}

type writer struct {
	o   Options
	buf []byte
}

func (w *writer) block(contents []byte, compress bool) format.BlockHandle {
	typ := format.BlockTypeRaw
	stored := contents
	if compress && w.o.Snappy {
		c, ctyp := snappy.Encode(nil, contents), format.BlockTypeSnappy
		if w.o.Zlib != 0 {
			c, ctyp = deflate(contents, w.o.Zlib == 2), w.o.Zlib
		}
		if w.o.CompressAll || len(c) < len(contents)-len(contents)/8 {
			stored, typ = c, ctyp
		}
	}
	h := format.BlockHandle{Offset: uint64(len(w.buf)), Length: uint64(len(stored))}
	w.buf = codec.AppendTrailer(append(w.buf, stored...), stored, typ)
	return h
}

// deflate returns src as one zlib stream (wrapped) or raw deflate stream.
func deflate(src []byte, wrapped bool) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	if wrapped {
		w = zlib.NewWriter(&b)
	} else {
		w, _ = flate.NewWriter(&b, flate.DefaultCompression) // a valid level: no error
	}
	w.Write(src) // a bytes.Buffer does not fail
	w.Close()
	return b.Bytes()
}

// WriteTable returns a LevelDB table holding entries, in the order given.
func WriteTable(entries []Entry, o Options) []byte {
	w := &writer{o: o}
	if o.BlockSize <= 0 {
		o.BlockSize = 4096
	}
	policy := filterblock.LevelDBBloom(10)
	gen := policy.NewGenerator()
	var filters []byte
	var filterOffs []uint32
	// LevelDB's FilterBlockBuilder: one filter per 2 KiB of block offsets,
	// generated for the keys of the blocks starting in its range.
	var pending [][]byte
	startBlock := func(off uint64) {
		for uint64(len(filterOffs)) < off>>11 {
			filterOffs = append(filterOffs, uint32(len(filters)))
			if len(pending) > 0 {
				for _, k := range pending {
					gen.Add(k)
				}
				filters = gen.Generate(filters)
				pending = pending[:0]
			}
		}
	}
	bw := codec.BlockWriter{RestartInterval: o.RestartInterval}
	var index codec.BlockWriter
	index.RestartInterval = 1
	var last []byte
	var pendingHandle *format.BlockHandle
	addIndex := func(next []byte) {
		sep := last
		if o.ShortSeparators {
			sep = separator(last, next, o.Plain)
		}
		index.Add(sep, codec.AppendHandle(nil, *pendingHandle))
		pendingHandle = nil
	}
	flush := func() {
		if bw.Entries() == 0 {
			return
		}
		h := w.block(append([]byte(nil), bw.Finish()...), true)
		bw.Reset()
		pendingHandle = &h
		startBlock(uint64(len(w.buf)))
	}
	for _, e := range entries {
		ik := e.InternalKey()
		if o.Plain {
			ik = e.Key
		}
		if pendingHandle != nil {
			addIndex(ik)
		}
		pending = append(pending, e.Key)
		bw.Add(ik, e.Value)
		last = ik
		if bw.EstimatedSize() >= o.BlockSize {
			flush()
		}
	}
	flush()
	if pendingHandle != nil {
		addIndex(nil)
	}
	meta := codec.BlockWriter{RestartInterval: 1}
	if !o.NoFilter {
		if len(pending) > 0 {
			filterOffs = append(filterOffs, uint32(len(filters)))
			for _, k := range pending {
				gen.Add(k)
			}
			filters = gen.Generate(filters)
		}
		fb := filters
		arrayStart := uint32(len(fb))
		for _, off := range filterOffs {
			fb = binary.LittleEndian.AppendUint32(fb, off)
		}
		fb = binary.LittleEndian.AppendUint32(fb, arrayStart)
		fb = append(fb, 11)
		fh := w.block(fb, false)
		name := o.FilterName
		if name == "" {
			name = "filter.leveldb.BuiltinBloomFilter2"
		}
		meta.Add([]byte(name), codec.AppendHandle(nil, fh))
	}
	metaContents := meta.Finish()
	if meta.Entries() == 0 && o.EmptyMetaRestart {
		metaContents = []byte{0, 0, 0, 0, 1, 0, 0, 0}
	}
	mh := w.block(append([]byte(nil), metaContents...), true)
	ih := w.block(append([]byte(nil), index.Finish()...), true)
	footer := codec.AppendHandle(nil, mh)
	footer = codec.AppendHandle(footer, ih)
	footer = append(footer, make([]byte, 40-len(footer))...)
	footer = binary.LittleEndian.AppendUint64(footer, 0xdb4775248b80fb57)
	return append(w.buf, footer...)
}

// separator returns LevelDB's FindShortestSeparator of two internal keys
// (db/dbformat.cc over util/comparator.cc): a shorter user key between
// them with the largest trailer, or start itself. next nil: the short
// successor of start's user key. plain: of two plain keys
// (util/comparator.cc alone), with no trailer.
func separator(start, next []byte, plain bool) []byte {
	tl := 8
	if plain {
		tl = 0
	}
	us := start[:len(start)-tl]
	var tmp []byte
	if next == nil {
		for i, c := range us {
			if c != 0xff {
				tmp = append(append([]byte(nil), us[:i]...), c+1)
				break
			}
		}
	} else {
		ul := next[:len(next)-tl]
		n := 0
		for n < len(us) && n < len(ul) && us[n] == ul[n] {
			n++
		}
		if n < min(len(us), len(ul)) {
			if c := us[n]; c < 0xff && c+1 < ul[n] {
				tmp = append(append([]byte(nil), us[:n]...), c+1)
			}
		}
	}
	if plain && tmp != nil {
		return tmp // BytewiseComparator's own rules: no need to be shorter
	}
	if tmp == nil || len(tmp) >= len(us) || string(tmp) <= string(us) {
		return start
	}
	return binary.LittleEndian.AppendUint64(tmp, (1<<56-1)<<8|1)
}

// Log writes LevelDB log records (db/log_writer.cc).
type Log struct{ Buf []byte }

// Add appends one record, cut into fragments at 32 KiB block boundaries.
func (l *Log) Add(rec []byte) {
	first := true
	for {
		left := 32<<10 - len(l.Buf)%(32<<10)
		if left < 7 {
			l.Buf = append(l.Buf, make([]byte, left)...)
			left = 32 << 10
		}
		n := min(len(rec), left-7)
		last := n == len(rec)
		typ := byte(1)
		switch {
		case first && !last:
			typ = 2
		case !first && last:
			typ = 4
		case !first:
			typ = 3
		}
		crc := crc32.Update(crc32.Checksum([]byte{typ}, crc32.MakeTable(crc32.Castagnoli)), crc32.MakeTable(crc32.Castagnoli), rec[:n])
		l.Buf = binary.LittleEndian.AppendUint32(l.Buf, codec.MaskCRC(crc))
		l.Buf = binary.LittleEndian.AppendUint16(l.Buf, uint16(n))
		l.Buf = append(l.Buf, typ)
		l.Buf = append(l.Buf, rec[:n]...)
		rec, first = rec[n:], false
		if last {
			return
		}
	}
}

// Batch encodes a write batch (db/write_batch.cc) starting at seq.
func Batch(seq uint64, ops []Entry) []byte {
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ops)))
	for _, e := range ops {
		b = append(b, e.Kind)
		b = binary.AppendUvarint(b, uint64(len(e.Key)))
		b = append(b, e.Key...)
		if e.Kind == 1 {
			b = binary.AppendUvarint(b, uint64(len(e.Value)))
			b = append(b, e.Value...)
		}
	}
	return b
}

// TableFile is one table of a database: its level and entries.
type TableFile struct {
	Level   int
	Number  uint64
	Entries []Entry // sorted in internal key order
}

// WriteDB writes a database directory: the tables (NNNNNN.ldb), a
// MANIFEST-000001 of one version edit naming them, CURRENT, and a log
// 000002.log holding batches (nil: no log).
func WriteDB(dir string, tables []TableFile, batches [][]Entry, firstSeq uint64, o Options) error {
	var edit []byte
	str := func(tag uint64, s []byte) {
		edit = binary.AppendUvarint(edit, tag)
		edit = binary.AppendUvarint(edit, uint64(len(s)))
		edit = append(edit, s...)
	}
	num := func(tag, v uint64) {
		edit = binary.AppendUvarint(edit, tag)
		edit = binary.AppendUvarint(edit, v)
	}
	str(1, []byte("leveldb.BytewiseComparator"))
	num(2, 2)
	num(3, 1000)
	maxSeq := firstSeq
	for _, t := range tables {
		data := WriteTable(t.Entries, o)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.ldb", t.Number)), data, 0o644); err != nil {
			return err
		}
		if len(t.Entries) == 0 {
			continue
		}
		edit = binary.AppendUvarint(edit, 7)
		edit = binary.AppendUvarint(edit, uint64(t.Level))
		edit = binary.AppendUvarint(edit, t.Number)
		edit = binary.AppendUvarint(edit, uint64(len(data)))
		sm, lg := t.Entries[0].InternalKey(), t.Entries[len(t.Entries)-1].InternalKey()
		edit = binary.AppendUvarint(edit, uint64(len(sm)))
		edit = append(edit, sm...)
		edit = binary.AppendUvarint(edit, uint64(len(lg)))
		edit = append(edit, lg...)
		for _, e := range t.Entries {
			maxSeq = max(maxSeq, e.Seq)
		}
	}
	num(4, maxSeq)
	var m Log
	m.Add(edit)
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST-000001"), m.Buf, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644); err != nil {
		return err
	}
	if batches == nil {
		return nil
	}
	var l Log
	seq := maxSeq + 1
	for _, b := range batches {
		l.Add(Batch(seq, b))
		seq += uint64(len(b))
	}
	return os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644)
}
