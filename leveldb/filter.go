package leveldb

import (
	"encoding/binary"
	"strings"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// Filter names in a LevelDB metaindex: "filter." and the policy's name.
const (
	// FilterLevelDB names LevelDB's built-in bloom filter (since 1.18).
	FilterLevelDB = "filter." + filterblock.LevelDBName
	// FilterGoLevelDB names goleveldb's, whose bits are the same.
	FilterGoLevelDB = "filter.leveldb.BuiltinBloomFilter"
)

// bloom probes LevelDB's filters; it reads the probe count from each
// filter, so its bits per key do not matter.
var bloom = filterblock.LevelDBBloom(10)

// filterBlock is a LevelDB filter block (table/filter_block.cc): filters
// one after another, then their little-endian u32 start offsets, the
// offset array's own start (u32), and the base lg byte. Filter i holds
// the user keys of the data blocks starting in [i<<lg, (i+1)<<lg).
type filterBlock struct {
	data    []byte // the whole block, kept on the heap
	offsets int    // start of the offset array
	num     int    // filters
	lg      uint8
}

// initFilter checks a filter block's contents, read at file offset off.
func (f *filterBlock) init(contents []byte, off int64) error {
	n := len(contents)
	if n < 5 {
		return format.Corruptf(SectionFilter, off, "filter block of %d bytes is shorter than its 5-byte tail", n)
	}
	lg := contents[n-1]
	start := binary.LittleEndian.Uint32(contents[n-5:])
	if lg > 40 {
		return format.Corruptf(SectionFilter, off+int64(n-1), "base lg %d is too large (LevelDB writes 11)", lg)
	}
	if uint64(start) > uint64(n-5) || (uint64(n-5)-uint64(start))%4 != 0 {
		return format.Corruptf(SectionFilter, off+int64(n-5), "offset array start %d does not fit a %d-byte filter block", start, n)
	}
	*f = filterBlock{data: contents, offsets: int(start), num: (n - 5 - int(start)) / 4, lg: lg}
	prev := uint32(0)
	for i := 0; i < f.num; i++ {
		o := binary.LittleEndian.Uint32(contents[f.offsets+4*i:])
		if o < prev || o > start {
			return format.Corruptf(SectionFilter, off+int64(f.offsets+4*i), "filter %d starts at %d, before filter %d or past the filters' end %d", i, o, i-1, start)
		}
		prev = o
	}
	return nil
}

// MayContain reports whether the data block at file offset blockOff may
// hold user key key. A block past the filters (which LevelDB never
// writes) may hold anything, as LevelDB treats it.
func (f *filterBlock) MayContain(blockOff uint64, key []byte) bool {
	i := blockOff >> f.lg
	if i >= uint64(f.num) {
		return true
	}
	start := binary.LittleEndian.Uint32(f.data[f.offsets+4*int(i):])
	end := uint32(f.offsets)
	if int(i)+1 < f.num {
		end = binary.LittleEndian.Uint32(f.data[f.offsets+4*int(i)+4:])
	}
	if start == end {
		return false // an empty filter: no key starts a block in its range
	}
	return bloom.MayContain(f.data[start:end], key)
}

// readMetaindex reads the metaindex block and, if it names LevelDB's
// bloom filter, the filter block.
func (t *Table) readMetaindex(core *lsmtable.Table) error {
	h := t.footer.metaindex
	contents, typ, err := core.ReadBlock(SectionMetaindex, h)
	if err != nil {
		return err
	}
	t.footer.metaindexType, t.footer.metaindexStored = typ, int(h.Length)
	var it codec.BlockIter
	if err := it.Init(SectionMetaindex, int64(h.Offset), contents); err != nil || lsmtable.EmptyBlock(contents) {
		return err
	}
	var filterHandle format.BlockHandle
	found := false
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key())
		t.metaNames = append(t.metaNames, name)
		if name != FilterLevelDB && name != FilterGoLevelDB || found {
			continue
		}
		fh, n := codec.DecodeHandle(it.Value())
		if n <= 0 || n != len(it.Value()) || !lsmtable.Inside(fh, uint64(core.Size()-FooterLen)) {
			return format.Corruptf(SectionMetaindex, int64(h.Offset), "%s: bad block handle", name)
		}
		filterHandle, found = fh, true
	}
	if err := it.Err(); err != nil {
		return err
	}
	if !found {
		return nil
	}
	contents, _, err = core.ReadBlock(SectionFilter, filterHandle)
	if err != nil {
		return err
	}
	t.filter = new(filterBlock)
	if err := t.filter.init(contents, int64(filterHandle.Offset)); err != nil {
		t.filter = nil
		return err
	}
	return nil
}

// filterName returns the metaindex name of the filter Get consults, or "".
func (t *Table) filterName() string {
	if t.filter == nil {
		return ""
	}
	for _, n := range t.metaNames {
		if n == FilterLevelDB || n == FilterGoLevelDB {
			return strings.TrimPrefix(n, "filter.")
		}
	}
	return ""
}
