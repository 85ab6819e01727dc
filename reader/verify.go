package reader

import (
	"bytes"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
)

// Verify reads every section and every data block of the table and checks
// every checksum, then the table's internal consistency: data blocks tile
// the data section in order, keys increase strictly across the table, each
// separator key in the index lies between its block's last key and the
// next block's first key, the filter matches every key, and the counts,
// sizes and smallest/largest keys agree with the properties. In a Version2
// table it also checks that every entry is stored whole and that the hash
// index finds every key at its entry, with no other occupied slot. In a
// Version3 table it checks every partition's checksums and that each key
// lies in the range its partition's top-level key gives. It returns
// the first problem found, wrapping format.ErrCorrupt, or ErrClosed.
func (r *Reader) Verify() (err error) {
	if !r.acquire() {
		return ErrClosed
	}
	defer r.release()
	if r.mapped != nil {
		defer restoreFault(protect())
		defer r.recoverFault(&err)
		r.beginScan()
		defer r.endScan()
	}
	return r.verify()
}

func (r *Reader) verify() error {
	if err := r.loadFilter(); err != nil {
		return err
	}
	s := scratch{}
	defer s.setPin(cache.Handle{})
	defer s.indexPin.Release()
	index, err := r.indexBlock(&s.indexPin)
	if err != nil {
		return err
	}
	hashed := r.props.HashIndexSize != 0
	var x *format.HashIndex
	if hashed {
		var local format.HashIndex
		var pin cache.Handle
		defer pin.Release()
		if x, err = r.hashIndex(&local, &pin); err != nil {
			return err
		}
	}
	idx := &s.index
	indexOff := int64(r.footer.Index.Offset)
	defer idx.release()
	if err := r.initIndexIter(idx, index); err != nil {
		return err
	}
	p := &r.props
	var (
		nextOffset            uint64
		blocks, entries       uint64
		keyBytes, valueBytes  uint64
		prevKey, prevSep      []byte
		havePrev, havePrevSep bool
		first                 = true
		part                  = -1   // a Version3 table's current partition, by first block
		top, prevTop          []byte // its top-level key, and the previous partition's
	)
	for ok := idx.First(); ok; ok = idx.Next() {
		// Verify re-reads every checksum, even of blocks already trusted.
		if _, ok := idx.RestartIndex(); ok {
			r.forgetVerified(idx.block())
		}
		contents, h, err := r.blockAt(&s, &idx.BlockIter, idx.base)
		if err != nil {
			return err
		}
		if h.Offset != nextOffset {
			return format.Corruptf(format.SectionIndex, indexOff, "data block %d starts at %d, previous block ends at %d", blocks, h.Offset, nextOffset)
		}
		nextOffset = h.End()
		if hashed && blocks < uint64(x.NumBlocks()) && x.BlockHandle(int(blocks)) != h {
			return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "data block %d is at %+v, the hash index says %+v", blocks, h, x.BlockHandle(int(blocks)))
		}
		if hashed && x.DecodedOffsets() && blocks < uint64(x.NumBlocks()) {
			if n := x.DecodedStart(int(blocks)+1) - x.DecodedStart(int(blocks)); n != uint64(len(contents)) {
				return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "data block %d decodes to %d bytes, the hash index says %d", blocks, len(contents), n)
			}
		}
		if r.parted && idx.base != part {
			part = idx.base
			prevTop = append(prevTop[:0], top...)
			top = append(top[:0], idx.top.Key()...)
		}
		d := &s.data
		if err := d.Init(format.SectionDataBlock, int64(h.Offset), contents); err != nil {
			return err
		}
		n := 0
		for ok := d.First(); ok; ok = d.Next() {
			k := d.Key()
			if havePrevSep && bytes.Compare(k, prevSep) <= 0 {
				return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "first key %q is not after the previous block's separator %q", k, prevSep)
			}
			havePrevSep = false
			if r.parted && (bytes.Compare(k, top) > 0 || part > 0 && bytes.Compare(k, prevTop) <= 0) {
				return format.Corruptf(format.SectionTopIndex, indexOff, "key %q of data block %d lies outside its partition's key range (%q, %q]", k, blocks, prevTop, top)
			}
			if havePrev && bytes.Compare(k, prevKey) <= 0 {
				return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "key %q does not follow %q", k, prevKey)
			}
			if first {
				if !bytes.Equal(k, p.SmallestKey) {
					return format.Corruptf(format.SectionProperties, int64(r.footer.Properties.Offset), "smallest key %q, table starts with %q", p.SmallestKey, k)
				}
				first = false
			}
			if r.policy != nil && !r.mayContain(k) {
				return format.Corruptf(format.SectionFilter, int64(r.footer.Filter.Offset), "filter does not match key %q", k)
			}
			if hashed {
				if err := r.verifyHashed(x, k, int(blocks), d.Offset(), contents, h); err != nil {
					return err
				}
			}
			prevKey = append(prevKey[:0], k...)
			havePrev = true
			keyBytes += uint64(len(k))
			valueBytes += uint64(len(d.Value()))
			n++
		}
		if err := d.Err(); err != nil {
			return err
		}
		if n == 0 {
			return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "data block %d is empty", blocks)
		}
		sep := idx.Key()
		if bytes.Compare(sep, prevKey) < 0 {
			return format.Corruptf(format.SectionIndex, indexOff, "separator %q of block %d is below its last key %q", sep, blocks, prevKey)
		}
		prevSep = append(prevSep[:0], sep...)
		havePrevSep = true
		entries += uint64(n)
		blocks++
	}
	if err := idx.Err(); err != nil {
		return err
	}
	propsOff := int64(r.footer.Properties.Offset)
	switch {
	case nextOffset != r.dataEnd:
		return format.Corruptf(format.SectionDataBlock, int64(nextOffset), "data blocks end at %d, data section at %d", nextOffset, r.dataEnd)
	case blocks != p.NumDataBlocks:
		return format.Corruptf(format.SectionProperties, propsOff, "%d data blocks, properties say %d", blocks, p.NumDataBlocks)
	case entries != p.NumEntries:
		return format.Corruptf(format.SectionProperties, propsOff, "%d entries, properties say %d", entries, p.NumEntries)
	case keyBytes != p.RawKeyBytes || valueBytes != p.RawValueBytes:
		return format.Corruptf(format.SectionProperties, propsOff, "%d key and %d value bytes, properties say %d and %d", keyBytes, valueBytes, p.RawKeyBytes, p.RawValueBytes)
	case entries > 0 && !bytes.Equal(prevKey, p.LargestKey):
		return format.Corruptf(format.SectionProperties, propsOff, "largest key %q, table ends with %q", p.LargestKey, prevKey)
	case hashed && x.Occupied() != entries:
		return format.Corruptf(format.SectionHashIndex, int64(p.DataSize), "%d occupied slots for %d entries", x.Occupied(), entries)
	}
	return nil
}

// verifyHashed checks that the entry with key k at byte offset off of data
// block i (contents, at handle h) stands alone and that the hash index
// leads to it.
func (r *Reader) verifyHashed(x *format.HashIndex, k []byte, i, off int, contents []byte, h format.BlockHandle) error {
	ek, _, err := format.EntryAt(contents, int64(h.Offset), uint32(off))
	if err != nil {
		return err
	}
	if !bytes.Equal(ek, k) {
		return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "entry at block offset %d does not decode alone", off)
	}
	probe := x.Probe(format.KeyHash(k))
	for {
		b, o, ok, err := probe.Next()
		if err != nil {
			return err
		}
		if !ok {
			return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "no slot leads to key %q (data block %d, offset %d)", k, i, off)
		}
		want := uint64(off)
		switch {
		case x.FileOffsets():
			want += h.Offset
		case x.DecodedOffsets():
			want += x.DecodedStart(i)
		}
		if b == i && o == want {
			return nil
		}
	}
}
