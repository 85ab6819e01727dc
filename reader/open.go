package reader

import (
	"fmt"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// open reads and checks the footer and properties through r.src, then
// chooses the reader's layers. It runs under the fault guard: a mapped
// file may shrink while it is read.
func (r *Reader) open(opts *Options) (err error) {
	defer restoreFault(protect())
	defer r.recoverFault(&err)
	r.refs.Store(1)
	if r.size < footer.Size {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer: not an sstable", r.size, footer.Size)
	}
	var pub *cache.Cache
	if opts != nil {
		pub = opts.Cache
	}
	if pub == nil {
		if pub, err = DefaultCache(); err != nil {
			return fmt.Errorf("sstable: open: block cache: %w", err)
		}
	}
	c := blockcache.FromPublic(pub)
	sections, err := c.NewTable(numSections)
	if err != nil {
		return fmt.Errorf("sstable: open: block cache: %w", err)
	}

	// The footer and properties: from the mapping, or from the tail a
	// reader without one reads in one ReadAt, into memory the cache
	// lends (kept by keepTail when it holds data blocks or partitions).
	var tail []byte
	var tailOff int64
	var tailPin blockcache.Handle
	defer func() { tailPin.Release() }()
	var ra *readAtSource
	switch src := r.src.(type) {
	case *mmapSource:
		src.sections, src.cache = sections, c
		r.guarded = true
		tailOff = r.size - footer.Size
		tail = src.mapped[tailOff:]
	case *readAtSource:
		src.sections, src.cache, ra = sections, c, src
		tailLen := int64(DefaultTailSize)
		if opts != nil && opts.TailSize != 0 {
			tailLen = max(int64(opts.TailSize), footer.Size)
		}
		tailLen = min(tailLen, r.size)
		var buf []byte
		if p, ok := sections.Reserve(slotTail, int(tailLen)); ok {
			tailPin, buf = p, p.Bytes()[:0]
		}
		tailOff = r.size - tailLen
		if tail, err = src.read(format.SectionFooter, tailOff, int(tailLen), buf); err != nil {
			return err
		}
	}
	if r.footer, err = footer.Decode(tail[len(tail)-footer.Size:], r.size); err != nil {
		return err
	}
	f := &r.footer
	if err := r.checkFooter(); err != nil {
		return err
	}
	raw := tailPart(tail, tailOff, f.Properties)
	if raw == nil {
		raw, err = r.propertiesBlock(ra)
		if err != nil {
			return err
		}
	}
	if err := r.checkProperties(raw); err != nil {
		return err
	}
	r.chooseLayers(opts, tail, tailOff)
	if ra != nil {
		end := r.dataEnd
		if r.parts != nil {
			end = f.Index.Offset // the partitions end where the top-level index starts
		}
		ra.keepTail(tailPin, tailOff, end)
	}
	if err := r.boundKeys(); err != nil {
		return err
	}
	return r.spans.fillBounds()
}

// boundKeys fills in the smallest and largest keys the properties block
// left out (format.MaxPropertiesKeyLen: a key of any size is stored once,
// in its data block) from the table's first and last entries, so that
// Properties has both keys whole. It reads the first and last data blocks,
// only for tables that need it.
func (r *Reader) boundKeys() error {
	p := &r.props
	if p.NumEntries == 0 || p.SmallestKey != nil && p.LargestKey != nil {
		return nil
	}
	it := r.NewIterator()
	defer it.Close()
	for _, b := range []struct {
		key     *[]byte
		omitted uint64
		pos     func() bool
		name    string
	}{
		{&p.SmallestKey, p.SmallestKeyOmitted, it.First, "smallest"},
		{&p.LargestKey, p.LargestKeyOmitted, it.Last, "largest"},
	} {
		if *b.key != nil {
			continue
		}
		if !b.pos() {
			if err := it.Err(); err != nil {
				return err
			}
			return format.Corruptf(format.SectionProperties, int64(r.footer.Properties.Offset), "%d entries, but the %s key the properties leave out is not in the data", p.NumEntries, b.name)
		}
		if uint64(len(it.Key())) != b.omitted {
			return format.Corruptf(format.SectionProperties, int64(r.footer.Properties.Offset), "%s key of %d bytes, the properties say %d", b.name, len(it.Key()), b.omitted)
		}
		*b.key = append([]byte{}, it.Key()...)
	}
	return it.Close()
}

// propertiesBlock returns the properties block's bytes and trailer when
// they lie outside the tail: read through ra, or from the mapping.
func (r *Reader) propertiesBlock(ra *readAtSource) ([]byte, error) {
	h := r.footer.Properties
	if ra != nil {
		return ra.readBlock(format.SectionProperties, h, nil)
	}
	if h.Length > uint64(r.size) || h.End() > uint64(r.size) {
		return nil, format.Corruptf(format.SectionProperties, int64(h.Offset), "block length %d exceeds the file", h.Length)
	}
	m := r.src.(*mmapSource).mapped
	return m[h.Offset:h.End():h.End()], nil
}

// checkFooter checks that the footer's sections follow each other: the
// filter section, the index block, the properties, the footer.
func (r *Reader) checkFooter() error {
	f := &r.footer
	footerOff := uint64(r.size - footer.Size)
	switch {
	case f.Index.Offset != f.Filter.End():
		return format.Corruptf(format.SectionFooter, int64(footerOff), "index block at %d does not follow the filter section ending at %d", f.Index.Offset, f.Filter.End())
	case f.Version != format.Version5 && f.Properties.Offset != f.Index.End():
		return format.Corruptf(format.SectionFooter, int64(footerOff), "properties at %d do not follow the index block ending at %d", f.Properties.Offset, f.Index.End())
	case f.Version == format.Version5 && f.Properties.Offset < f.Index.End():
		return format.Corruptf(format.SectionFooter, int64(footerOff), "properties at %d start before the index block ends at %d", f.Properties.Offset, f.Index.End())
	case f.Properties.End() != footerOff:
		return format.Corruptf(format.SectionFooter, int64(footerOff), "properties end at %d, not at the footer", f.Properties.End())
	}
	return nil
}

// checkProperties decodes the properties block (raw, its bytes and
// trailer) and checks them against the footer and each other.
func (r *Reader) checkProperties(raw []byte) error {
	f := &r.footer
	stored, typ, err := codec.CheckBlock(format.SectionProperties, int64(f.Properties.Offset), raw)
	if err != nil {
		return err
	}
	contents, err := codec.DecodeBlock(format.SectionProperties, int64(f.Properties.Offset), stored, typ, maxPropertiesLen, nil)
	if err != nil {
		return err
	}
	if r.props, err = codec.DecodeProperties(contents, int64(f.Properties.Offset)); err != nil {
		return err
	}
	p := &r.props
	propsOff := int64(f.Properties.Offset)
	r.dataEnd = p.DataSize
	if len(p.Dictionary) > 0 {
		if r.dict, err = codec.NewZstdDict(format.SectionProperties, propsOff, p.Dictionary); err != nil {
			return err
		}
	}
	switch {
	case p.FormatVersion != f.Version:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d disagrees with the footer's %d", p.FormatVersion, f.Version)
	case f.Version == format.Version1 && p.HashIndexSize != 0:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with a %d-byte hash index", f.Version, p.HashIndexSize)
	case f.Version == format.Version3 && p.NumDataBlocks == 0:
		return format.Corruptf(format.SectionProperties, propsOff, "format version 3 (partitioned) table without data blocks")
	case p.Partitioned && f.Version != format.Version4 && f.Version != format.Version5:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with the partitioned record of version 4", f.Version)
	case p.Partitioned && p.NumDataBlocks == 0:
		return format.Corruptf(format.SectionProperties, propsOff, "partitioned table without data blocks")
	case (f.Version == format.Version2 || f.Version >= format.Version4 || p.HashIndexSize != 0) && p.HashIndexSize < format.BlockTrailerLen+codec.HashIndexHeaderLen:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with a hash index of %d bytes", f.Version, p.HashIndexSize)
	case p.DataSize > f.Filter.Offset || p.HashIndexSize != f.Filter.Offset-p.DataSize:
		return format.Corruptf(format.SectionProperties, propsOff, "data size %d and hash index size %d disagree with the filter offset %d", p.DataSize, p.HashIndexSize, f.Filter.Offset)
	case p.NumDataBlocks > p.DataSize/format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "%d data blocks cannot fit in %d bytes", p.NumDataBlocks, p.DataSize)
	case p.FilterSize != f.Filter.Length+format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "filter size %d disagrees with the footer's %d", p.FilterSize, f.Filter.Length+format.BlockTrailerLen)
	case p.IndexSize != f.Index.Length+format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "index size %d disagrees with the footer's %d", p.IndexSize, f.Index.Length+format.BlockTrailerLen)
	case p.MaxBlockSize > uint64(maxSnappyDecoded(r.dataEnd)):
		return format.Corruptf(format.SectionProperties, propsOff, "max block size %d is impossible for %d bytes of data", p.MaxBlockSize, r.dataEnd)
	case (f.Version == format.Version5) != (p.NumSpanFragments != 0):
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with %d span fragments: spans are version 5's, and version 5 has spans", f.Version, p.NumSpanFragments)
	case p.SpanBlockSize != f.Properties.Offset-f.Index.End():
		return format.Corruptf(format.SectionProperties, propsOff, "span block size %d disagrees with the %d bytes between the index block and the properties", p.SpanBlockSize, f.Properties.Offset-f.Index.End())
	case f.Version == format.Version5 && (p.SpanBlockSize < format.BlockTrailerLen+4 || p.HashIndexSize == 0 || p.NumSpanFragments > p.SpanBlockSize/4):
		return format.Corruptf(format.SectionProperties, propsOff, "format version 5 table with a span block of %d bytes for %d fragments and a hash index of %d bytes", p.SpanBlockSize, p.NumSpanFragments, p.HashIndexSize)
	}
	return nil
}

// chooseLayers picks the reader's index and filter for the table's
// format version, policy and splitter, and for its source, and sets up
// its span layer; this is the one place where those choices are made. A
// reader without a mapping then copies the sections that lie in the tail
// it read (tail, from file offset tailOff) into the cache, unchecked:
// they are checked on first use, and damage found in them reported
// then, as for a section read later.
func (r *Reader) chooseLayers(opts *Options, tail []byte, tailOff int64) {
	p, f := &r.props, &r.footer
	ra, _ := r.src.(*readAtSource)
	r.policy, r.bloom = lookupPolicy(p.FilterPolicy, opts)
	p.FilterUnknown = r.policy == nil && p.FilterPolicy != ""
	if p.Splitter != "" {
		r.splitter = lookupSplitter(p.Splitter, opts)
		if r.splitter == nil {
			// The filter and hash index hold prefixes this reader cannot
			// compute: use neither.
			p.SplitterUnknown = true
			r.policy, r.bloom = nil, false
		}
	}
	parted := f.Version == format.Version3 || p.Partitioned
	v4 := f.Version == format.Version4 || f.Version == format.Version5 // version 5 is version 4 with spans
	var bc *blockCache
	switch src := r.src.(type) {
	case *mmapSource:
		bc = &src.blockCache
		bc.noTable = p.Compression == format.NoCompression // raw blocks are read in place
		bc.admit = true
		bc.owner = src.sections
	case *readAtSource:
		bc = &src.blockCache
		bc.owner = src.sections
	}
	bc.n, bc.maxBlock, bc.dataEnd, bc.indexOff = int(p.NumDataBlocks), int(p.MaxBlockSize), p.DataSize, int64(f.Index.Offset)
	bc.dict = r.dict

	// The filter: one section, a filter per partition, or none. Get
	// probes it before the index (getFilter) only in a one-level table
	// without a hash index: a partitioned index probes the filter of the
	// partition it reads (partedIndex), and a hash index probes the
	// filter itself, after asking for its slot (hashedIndex).
	var meta []*section // the sections a reader without a mapping loads together
	var ps *partitions
	var whole *wholeFilter // a one-level table's filter, when the reader knows its policy
	if parted {
		ps = &partitions{src: r.src, sections: bc.owner, splitter: r.splitter, numBlocks: p.NumDataBlocks, start: p.DataSize + p.HashIndexSize}
		ps.top = section{name: format.SectionIndex, h: f.Index, slot: slotIndex, check: ps.checkTop}
		r.parts = ps
		meta = append(meta, &ps.top)
	}
	switch {
	case parted && r.policy == nil:
		r.filter = noFilter{}
	case parted:
		r.filter = &partedFilter{ps: ps, policy: r.policy, bloom: r.bloom}
	case r.policy == nil:
		r.filter = noFilter{whole: newWholeFilter(r.src, f.Filter, nil, false, p.FilterPolicy)}
	default:
		whole = newWholeFilter(r.src, f.Filter, r.policy, r.bloom, p.FilterPolicy)
		r.filter, r.getFilter = whole, whole
		meta = append(meta, &whole.sec)
	}

	// The index: the index block, or partitions under a top-level index;
	// through the hash index where it pays. Over a ReaderAt, a one-level
	// table's hash index is used when it is in the tail; a partitioned
	// table's never: its lookups read one partition, as without a hash
	// index (Options.TailSize).
	if parted {
		r.index = &partedIndex{ps: ps, policy: r.policy, bloom: r.bloom}
	} else {
		bi := newBlockIndex(r.src, f.Index, p.NumDataBlocks)
		r.index = bi
		meta = append(meta, &bi.sec)
	}
	if p.HashIndexSize != 0 {
		r.hash = newHashTable(r.src, p.DataSize, p.HashIndexSize, p.NumDataBlocks)
		r.hash.v4, r.hash.withFilter = v4, v4 && parted
		useHash := !p.SplitterUnknown && (ra == nil || !parted && uint64(r.size)-p.DataSize <= uint64(len(tail)))
		switch {
		case useHash && v4:
			// Get probes the filter, then the slots.
			r.index = &compactIndex{index: r.index, src: r.src, ht: r.hash, splitter: r.splitter, props: &r.props}
			meta = append(meta, &r.hash.sec)
			if parted && r.policy != nil {
				r.getFilter = r.filter // the key's partition's, for a reader that holds no copy
			}
			if ra == nil && r.policy != nil {
				r.held = &heldFilter{policy: r.policy, bloom: r.bloom, whole: whole}
			}
		case useHash:
			// A mapped partitioned table's hash index probes no filter,
			// for Get nor for SeekPrefixGE: the key's filter partition
			// would cost a search of the top-level keys and a partition's
			// check on top of its cache line, while the slots' tags (8
			// bits or more) reject an absent key at the cache line the
			// probe has already asked for. Measured (go test -bench
			// 'Get/hash-parted', medians of 5-6 alternated runs on a
			// shared 2-core machine): probing the filter made Gets of
			// 100k-entry tables 19-28% slower for present keys and 26-63%
			// slower for absent ones.
			r.index = &hashedIndex{index: r.index, src: r.src, ht: r.hash, splitter: r.splitter, filter: whole}
			r.getFilter = nil // the hash index probes the filter itself
			meta = append(meta, &r.hash.sec)
		}
	}
	if ra != nil {
		ra.meta = meta
		ra.copyTail(tail, tailOff)
	}

	// The spans: a version 5 table's span block, between the index block
	// and the properties (checkProperties checked its size), kept from
	// the tail by a reader without a mapping when it lies there.
	var spanBlock format.BlockHandle
	if p.SpanBlockSize != 0 {
		spanBlock = format.BlockHandle{Offset: f.Index.End(), Length: p.SpanBlockSize - format.BlockTrailerLen}
	}
	r.spans.init(r.src, &r.props, int64(f.Properties.Offset), spanBlock)
	if ra != nil {
		r.spans.keepTail(tail, tailOff)
	}
}
