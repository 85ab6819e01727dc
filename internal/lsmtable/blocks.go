package lsmtable

import (
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
)

// blockBuf holds what keeps a data block's contents valid: a pin on its
// cached copy, or buffers of the caller's own.
type blockBuf struct {
	pin    blockcache.Handle
	stored []byte // read through ReadAt
	dec    []byte // decoded outside the cache
}

func (b *blockBuf) release() {
	b.pin.Release()
	b.pin = blockcache.Handle{}
}

// dataBlock returns data block i's contents, valid until b's next use or
// release, and whether they alias the file's mapping. A mapped raw block
// is read in place, its checksum checked on first use; every other block
// is decoded (or, read through ReadAt, copied) into the cache, or into
// b's buffers when the cache does not take it or fill is false (a scan
// moving between blocks, Verify: LevelDB's ReadOptions.fill_cache).
func (t *Table) dataBlock(i int, b *blockBuf, fill bool) ([]byte, bool, error) {
	b.release()
	h := t.Index.handles[i]
	if t.mapped != nil && t.verified[i].Load() {
		return t.mapped[h.Offset : h.Offset+h.Length : h.Offset+h.Length], true, nil
	}
	if p, ok := t.cache.Get(i); ok {
		b.pin = p
		return p.Bytes(), false, nil
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
	if n > 0 && fill {
		p, ok = t.reserve(i, n)
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
				// copy: decoding it on every Get cost Bedrock tables of
				// 160 KiB blocks 0.7-1.3 ms a Get.
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
	var contents []byte
	if typ == format.BlockTypeRaw {
		contents = dst[:copy(dst, stored)]
	} else if contents, err = t.Codec.Decode(format.SectionDataBlock, int64(h.Offset), stored, typ, dst); err != nil || len(contents) != n || &contents[0] != &dst[0] {
		p.Release()
		if err == nil {
			err = format.Corruptf(format.SectionDataBlock, int64(h.Offset), "block decodes to %d bytes where its header says %d", len(contents), n)
		}
		return nil, false, err
	}
	t.cache.Publish(i, p, 0)
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
