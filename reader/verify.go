package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// Verify reads every section and every data block of the table and checks
// every checksum, then the table's internal consistency: data blocks tile
// the data section in order, keys increase strictly across the table, each
// separator key in the index lies between its block's last key and the
// next block's first key, the filter matches every key, and the counts,
// sizes and smallest/largest keys agree with the properties. In a Version2
// table it also checks that every entry is stored whole and that the hash
// index finds every key at its entry, with no other occupied slot; in a
// Version4 table, that every entry decodes from its offset and its block's
// first key, that the hash index finds it, and that the whole filter a
// partitioned table's hash index section carries matches every key. In a
// table with a splitter the reader knows, it checks that prefixes never
// decrease, that the filter matches every prefix, and that the hash index
// finds each distinct prefix at its first entry (a reader that does not
// know the splitter checks neither filter nor hash index slots). In a
// Version3 table it checks every partition's checksums, that each
// partition's top-level key is its last key, and that each partition's
// filter matches every key (or prefix) of the partition. In a Version5
// table it reads the span block again and checks its checksum, that its
// fragments are sorted, do not overlap, each have a start below its end
// and at least one value, and that their count and bounds agree with the
// properties. It returns
// the first problem found, wrapping format.ErrCorrupt, or an error
// wrapping ErrClosed (or a failed read), naming the table as the
// Reader's errors do.
func (r *Reader) Verify() error {
	if !r.acquire() {
		return r.errClosed
	}
	defer r.release()
	v := verifier{r: r}
	return r.named(v.guarded())
}

// verifier is Verify's walk over the whole table: it has each layer
// check what it loads up front (filter.check, spanLayer.verify), then
// reads every data block through the index, re-reading every checksum,
// and checks the keys against the index, the filters, the hash index
// and the properties. It reads the Reader's layers and properties and
// changes none of them; the Reader keeps only Verify, which pins it and
// names the error. (The decoded hash index is passed to hashed, not kept
// here: as a field, its local copy would escape to the heap.)
type verifier struct {
	r *Reader
}

// guarded is run under the fault guard.
func (v *verifier) guarded() (err error) {
	r := v.r
	defer restoreFault(protect())
	defer r.recoverFault(&err)
	r.src.beginScan()
	defer r.src.endScan()
	return v.run()
}

// run walks the table; see Verify for what it checks.
func (v *verifier) run() error {
	r := v.r
	if err := r.filter.check(); err != nil {
		return err
	}
	if err := r.spans.verify(); err != nil {
		return err
	}
	s := scratch{}
	defer s.setPin(blockcache.Handle{})
	defer s.indexPin.Release()
	idx := &s.index
	defer idx.release()
	if err := r.index.initIter(idx, &s.indexPin); err != nil {
		return err
	}
	hashed := r.hash != nil
	var x *codec.HashIndex
	if hashed {
		var local codec.HashIndex
		var pin blockcache.Handle
		defer pin.Release()
		var err error
		if x, err = r.hash.get(&local, &pin); err != nil {
			return err
		}
	}
	indexOff := int64(r.footer.Index.Offset)
	p := &r.props
	var (
		nextOffset            uint64
		blocks, entries       uint64
		keyBytes, valueBytes  uint64
		prevKey, prevSep      []byte
		havePrev, havePrevSep bool
		first                 = true
		prefixes              uint64 // distinct prefixes (keys, without a splitter)
		slotsChecked          = hashed && !p.SplitterUnknown
		part                  = -1   // a Version3 table's current partition, by first block
		partNo                int    // and by number
		top, prevTop          []byte // its top-level key, and the previous partition's
		partFilter            []byte // its filter
		filterPin             blockcache.Handle
	)
	defer func() { filterPin.Release() }()
	// endPartition checks that the partition that ends has its last key
	// as its top-level key.
	endPartition := func() error {
		if part >= 0 && !bytes.Equal(prevKey, top) {
			return format.Corruptf(format.SectionTopIndex, indexOff, "partition of data blocks from %d ends with key %q, its top-level key is %q", part, prevKey, top)
		}
		return nil
	}
	for ok := idx.First(); ok; ok = idx.Next() {
		// Verify re-reads every checksum, even of blocks already trusted.
		if _, ok := idx.RestartIndex(); ok {
			r.src.forget(idx.block(), false)
		}
		contents, h, err := idx.dataBlock(&s)
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
		if r.parts != nil && idx.base != part {
			if err := endPartition(); err != nil {
				return err
			}
			part = idx.base
			prevTop = append(prevTop[:0], top...)
			top = append(top[:0], idx.top.Key()...)
			partNo, _ = idx.top.RestartIndex()
			// Checked on first use (which the iterator made); Verify
			// checks again.
			r.src.forget(partNo, true)
			filterPin.Release()
			filterPin = blockcache.Handle{}
			if partFilter, _, err = r.parts.get(partNo, &filterPin, nil); err != nil {
				return err
			}
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
			if r.parts != nil && (bytes.Compare(k, top) > 0 || part > 0 && bytes.Compare(k, prevTop) <= 0) {
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
			pk := k[:r.split(k)]
			newPrefix := true
			if r.splitter != nil && havePrev {
				switch c := bytes.Compare(pk, prevKey[:r.split(prevKey)]); {
				case c == 0:
					newPrefix = false
				case c < 0:
					return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "key %q has a smaller prefix under splitter %q than the previous key %q", k, r.props.Splitter, prevKey)
				}
			}
			if newPrefix {
				prefixes++
			}
			hk := codec.KeyHash(pk)
			if r.parts != nil && r.policy != nil && !probe(r.policy, r.bloom, partFilter, pk, hk) {
				return format.Corruptf(format.SectionFilterPartition, int64(r.parts.parts[partNo].Offset), "filter partition does not match key %q", k)
			}
			if !r.filter.mayContain(pk, hk) {
				return format.Corruptf(format.SectionFilter, int64(r.footer.Filter.Offset), "filter does not match key %q", k)
			}
			if hashed && x.Filter() != nil && r.policy != nil && !probe(r.policy, r.bloom, x.Filter(), pk, hk) {
				return format.Corruptf(format.SectionHashIndex, int64(r.props.DataSize), "the whole filter in the hash index section does not match key %q", k)
			}
			if hashed {
				if err := v.hashed(x, k, pk, newPrefix && slotsChecked, int(blocks), d.Offset(), contents, h); err != nil {
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
	if err := endPartition(); err != nil {
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
	case slotsChecked && x.Occupied() != prefixes:
		return format.Corruptf(format.SectionHashIndex, int64(p.DataSize), "%d occupied slots for %d entries (%d distinct prefixes)", x.Occupied(), entries, prefixes)
	}
	return nil
}

// hashed checks that the entry with key k at byte offset off of data
// block i (contents, at handle h) stands alone and, if slot, that the hash
// index x leads to it from the hash of hk (the key, or its prefix).
func (v *verifier) hashed(x *codec.HashIndex, k, hk []byte, slot bool, i, off int, contents []byte, h format.BlockHandle) error {
	var head, ek []byte
	var err error
	if x.FirstKeyShared() {
		// Version 4: the entry decodes from its offset and the block's
		// first key.
		end, err := codec.EntriesEnd(contents, int64(h.Offset))
		if err != nil {
			return err
		}
		head, ek, _, err = codec.EntryParts(contents[:end], int64(h.Offset), uint32(off))
	} else {
		ek, _, err = codec.EntryAt(contents, int64(h.Offset), uint32(off))
	}
	if err != nil {
		return err
	}
	if len(head)+len(ek) != len(k) || !bytes.Equal(head, k[:len(head)]) || !bytes.Equal(ek, k[len(head):]) {
		return format.Corruptf(format.SectionDataBlock, int64(h.Offset), "entry at block offset %d does not decode alone", off)
	}
	if !slot {
		return nil
	}
	probe := x.Probe(codec.KeyHash(hk))
	for {
		b, o, ok, err := probe.Next()
		if err != nil {
			return err
		}
		if !ok {
			return format.Corruptf(format.SectionHashIndex, int64(v.r.props.DataSize), "no slot leads to key %q (data block %d, offset %d)", k, i, off)
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
