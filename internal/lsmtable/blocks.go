package lsmtable

import (
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// blockBuf holds what keeps a data block's contents valid: a pin on its
// cached copy, or buffers of the caller's own.
type blockBuf struct {
	pin    blockcache.Handle
	side   side   // the cached block's side index, or nil
	stored []byte // read through ReadAt
	dec    []byte // decoded outside the cache

	// A block entering the cache: its layout, and its side index's
	// fences and offsets (sideEntries).
	scan   codec.BlockIter
	fences []uint32
	offs   []uint16
	known  []byte // the first bytes of the key a side index leads to (sideSeek)
}

func (b *blockBuf) release() {
	b.pin.Release()
	b.pin = blockcache.Handle{}
	b.side = nil
}

// dataBlock returns data block i's contents, valid until b's next use or
// release, and whether they alias the file's mapping; b.side is the
// cached block's side index, if it has one. A mapped raw block is read in
// place, its checksum checked on first use; every other block is decoded
// (or, read through ReadAt, copied) into the cache, behind room for its
// side index, or into b's buffers when the cache does not take it or
// fill is false (a scan moving between blocks, Verify: LevelDB's
// ReadOptions.fill_cache).
func (t *Table) dataBlock(i int, b *blockBuf, fill bool) ([]byte, bool, error) {
	b.release()
	h := t.Index.handles[i]
	if t.mapped != nil && t.verified[i].Load() {
		return t.mapped[h.Offset : h.Offset+h.Length : h.Offset+h.Length], true, nil
	}
	// GetAt starts loading the side index's first lines while it pins.
	if p, ok := t.cache.GetAt(i, 0); ok {
		b.pin = p
		bs := p.Bytes()
		if a := int(p.Aux()); a > 0 && a <= len(bs) {
			if s := side(bs[:a:a]); s.entries() > 0 {
				b.side = s
			}
			return bs[a:], false, nil
		}
		return bs, false, nil
	}
	buf, err := t.Read(int64(h.Offset), int(h.Length)+format.BlockTrailerLen, b.stored)
	if err != nil {
		return nil, false, err
	}
	if t.mapped == nil {
		b.stored = buf
	}
	stored, typ, err := t.Codec.Check(format.SectionDataBlock, int64(h.Offset), buf)
	if err != nil {
		return nil, false, err
	}
	if typ == format.BlockTypeRaw && t.mapped != nil {
		t.verified[i].Store(true)
		return stored, true, nil
	}
	n := len(stored)
	if typ != format.BlockTypeRaw {
		if m, ok := t.Codec.DecodedLen(typ, stored); ok && m <= MaxBlockLen {
			n = m
		} else {
			n = 0 // decode reports any error
		}
	}
	var p blockcache.Handle
	ok := false
	room := 0
	if n > 0 && fill {
		room = t.sideRoom(n)
		p, ok = t.reserve(i, room+n)
	}
	if !ok {
		contents, err := t.Codec.Decode(format.SectionDataBlock, int64(h.Offset), stored, typ, b.dec)
		if err != nil {
			return nil, false, err
		}
		if typ != format.BlockTypeRaw {
			b.dec = contents
			if n == 0 && fill && len(contents) > 0 {
				// A block whose size only decoding tells (Mojang's zlib
				// blocks, RocksDB's zlib and bzip2 before format_version
				// 2) goes to the cache once decoded, at the cost of a
				// copy, without a side index: decoding it on every Get
				// cost Bedrock tables of 160 KiB blocks 0.7-1.3 ms a Get.
				if p, ok := t.reserve(i, len(contents)); ok {
					dst := p.Bytes()[:len(contents)]
					copy(dst, contents)
					t.cache.Publish(i, p, 0)
					b.pin = p
					return dst, false, nil
				}
			}
		}
		return contents, false, nil
	}
	dst := p.Bytes()
	body := dst[room:]
	var contents []byte
	if typ == format.BlockTypeRaw {
		contents = body[:copy(body, stored)]
	} else if contents, err = t.Codec.Decode(format.SectionDataBlock, int64(h.Offset), stored, typ, body); err != nil || len(contents) != n || &contents[0] != &body[0] {
		p.Release()
		if err == nil {
			err = format.Corruptf(format.SectionDataBlock, int64(h.Offset), "block decodes to %d bytes where its header says %d", len(contents), n)
		}
		return nil, false, err
	}
	if room > 0 {
		b.side = t.buildSide(dst[:room:room], b, i, contents)
	}
	t.cache.Publish(i, p, uint32(room))
	b.pin = p
	return contents, false, nil
}

// reserve reserves n bytes of cache for data block i.
func (t *Table) reserve(i, n int) (blockcache.Handle, bool) {
	if t.mapped != nil {
		return t.cache.ReserveAdmitted(i, n) // a miss costs a decode, not a read
	}
	return t.cache.Reserve(i, n)
}

// MaxBlockLen bounds a decoded block, in bytes: writers cut blocks near
// their block size (4 KiB by default), and a key or value larger than
// that makes a block of its own; 1 GiB is beyond any of them.
const MaxBlockLen = 1 << 30
