package lsmtable

import (
	"github.com/sstkit/sstable/format"
)

// Verify reads the whole table and checks what reads of it rely on:
// every data block's checksum and entries; keys that are internal keys
// (or plain keys, Index.SetPlain) in strictly increasing order, each block's keys above the separator
// before it and at or below its own; and the filter matching every user
// key of its blocks (a filter that misses a key would make Get miss it).
// It returns the number of entries checked, and the first error found,
// wrapping format.ErrCorrupt and naming the table, the section and the
// offset.
func (t *Table) Verify() (entries int64, err error) {
	it := t.NewIter(nil)
	defer it.Close()
	if it.err != nil {
		return 0, it.err
	}
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	if err := t.VerifyBlocks(); err != nil {
		return 0, err
	}
	var prev []byte
	for i := 0; i < t.Index.Len(); i++ {
		if !it.loadBlock(i, false, false) {
			return entries, it.err
		}
		off := int64(t.Index.handles[i].Offset)
		sep := t.Index.Key(i)
		var prevSep []byte
		if i > 0 {
			prevSep = t.Index.Key(i - 1)
		}
		for ok := it.blk.First(); ok; ok = it.blk.Next() {
			if !it.settle() {
				return entries, it.err
			}
			k := it.blk.Key()
			if prev != nil && t.Index.Compare(prev, k) >= 0 {
				return entries, t.Named(format.Corruptf(format.SectionDataBlock, off, "key %q does not sort after the key before it", k))
			}
			if prevSep != nil && t.Index.Compare(k, prevSep) <= 0 {
				return entries, t.Named(format.Corruptf(format.SectionDataBlock, off, "key %q does not sort after the separator %q of the block before it", k, prevSep))
			}
			if t.Index.Compare(k, sep) > 0 {
				return entries, t.Named(format.Corruptf(format.SectionDataBlock, off, "key %q sorts after the block's separator %q in the index", k, sep))
			}
			if t.Filter != nil && !t.Filter.MayContain(uint64(off), it.user) || t.KeyFilter != nil && !t.KeyFilter(it.user) {
				return entries, t.Named(format.Corruptf(SectionFilter, off, "the filter for the data block at offset %d does not match its key %q", off, it.user))
			}
			prev = append(prev[:0], k...)
			entries++
		}
		if err := it.blk.Err(); err != nil {
			return entries, t.Named(err)
		}
	}
	return entries, nil
}

// SectionFilter names the filter block in corruption errors.
const SectionFilter = "filter block"

// VerifyBlocks is a hook for the format's own checks of what Verify does
// not read through the index (meta blocks, filter partitions); nil: none.
func (t *Table) VerifyBlocks() error {
	if t.VerifyMeta == nil {
		return nil
	}
	return t.Named(t.VerifyMeta())
}
