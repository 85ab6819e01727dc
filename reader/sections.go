package reader

import (
	"bytes"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
)

// Sections of an unmapped reader (New, or Open with NoMmap) live in the
// cache, like its data blocks: the index block, the filter and the hash
// index, each in one slot of Reader.sections, pinned while a call uses
// them and read again, with their checksums, if evicted. A mapped reader
// reads them in place from the mapping.

// readSection returns the contents of the raw section at h, checked by
// its checksum and by check: from the cache for an unmapped reader (pinned
// by the returned Handle, read and cached on a miss), else from the
// mapping or, when the cache cannot take it, a buffer of its own. pre, if
// not nil, holds the section's bytes and trailer, already read: they are
// used (copied into the cache, or kept) instead of a read.
func (r *Reader) readSection(slot int, section string, h format.BlockHandle, check func([]byte) error, pre []byte) ([]byte, cache.Handle, error) {
	if r.mapped == nil {
		if pin, ok := r.sections.Get(slot); ok {
			// Cached with its trailer, as read.
			b := pin.Bytes()
			return b[:len(b)-format.BlockTrailerLen], pin, nil
		}
	}
	var buf []byte
	var pin cache.Handle
	if r.mapped == nil && h.Length <= uint64(r.size) {
		if p, ok := r.sections.Reserve(slot, int(h.Length)+format.BlockTrailerLen); ok {
			pin, buf = p, p.Bytes()[:0]
		}
	}
	contents, err := r.readRawSection(section, h, buf, pre)
	if err == nil {
		err = check(contents)
	}
	if err != nil {
		pin.Release()
		return nil, cache.Handle{}, err
	}
	if pin.Cached() {
		r.sections.Publish(slot, pin, 0)
	}
	return contents, pin, nil
}

// readRawSection reads the block at h into buf (or the mapping) and
// checks that it is stored raw with a good checksum.
func (r *Reader) readRawSection(section string, h format.BlockHandle, buf, pre []byte) ([]byte, error) {
	var raw []byte
	var err error
	switch {
	case pre != nil && buf != nil:
		raw = append(buf, pre...)
	case pre != nil:
		raw = bytes.Clone(pre) // kept: not pinning the rest of pre's buffer
	default:
		if raw, err = r.readBlock(section, h, buf); err != nil {
			return nil, err
		}
	}
	stored, typ, err := format.CheckBlock(section, int64(h.Offset), raw)
	if err != nil {
		return nil, err
	}
	if typ != format.BlockTypeRaw {
		return nil, format.Corruptf(section, int64(h.End())-format.BlockTrailerLen, "must be stored raw, has compression type %d", typ)
	}
	return stored, nil
}

// indexBlock returns the index block's contents, loading it if need be;
// release *pin when done with them.
func (r *Reader) indexBlock(pin *cache.Handle) ([]byte, error) {
	if err := r.loadIndex(); err != nil {
		return nil, err
	}
	if r.indexKept {
		return r.index, nil
	}
	b, p, err := r.readSection(slotIndex, format.SectionIndex, r.footer.Index, r.checkIndex, nil)
	*pin = p
	return b, err
}

// filterBits returns the filter, loading it if need be; release *pin when
// done with it.
func (r *Reader) filterBits(pin *cache.Handle) ([]byte, error) {
	if err := r.loadFilter(); err != nil {
		return nil, err
	}
	if r.filterKept {
		return r.filter, nil
	}
	b, p, err := r.readSection(slotFilter, format.SectionFilter, r.footer.Filter, r.checkFilter, nil)
	if err != nil {
		return nil, err
	}
	*pin = p
	if r.filterOff > len(b) { // cannot happen: checkFilter checked the same bytes
		return nil, format.Corruptf(format.SectionFilter, int64(r.footer.Filter.Offset), "filter starts at %d of %d bytes", r.filterOff, len(b))
	}
	return b[r.filterOff:], nil
}

// hashIndex sets *x to the hash index, loading it if need be; release
// *pin when done with it. It returns &r.hidx when the reader keeps it.
func (r *Reader) hashIndex(x *format.HashIndex, pin *cache.Handle) (*format.HashIndex, error) {
	if err := r.loadHashIndex(); err != nil {
		return nil, err
	}
	if r.hidxKept {
		return &r.hidx, nil
	}
	b, p, err := r.readSection(slotHashIndex, format.SectionHashIndex, r.hashIndexHandle(), r.checkHashIndex, nil)
	if err != nil {
		return nil, err
	}
	*pin = p
	if *x, err = r.decodeHashIndex(b); err != nil {
		return nil, err
	}
	return x, nil
}
