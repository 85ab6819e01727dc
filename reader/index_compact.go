package reader

import (
	"bytes"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// compactIndex looks keys up through the hash index of a format version 4
// table: a key's (or prefix's) hash leads through slots of 4 bytes or so
// to its data block and its offset there, and the entry decodes from that
// offset and the block's first entry, whose key it shares its first bytes
// with. Scans, and keys after their prefix's first entry, use the
// one-level or partitioned index it wraps. The table's filter is probed
// before (getAppend's, or the Reader's held copy).
type compactIndex struct {
	index    // the table's index block or partitions
	src      source
	ht       *hashTable
	splitter format.Splitter // nil without one: slots name whole keys
}

func (x *compactIndex) get(dst, key, fk []byte, h uint64, has bool) ([]byte, error) {
	var s *scratch
	t := &x.ht.kept
	if !x.ht.ready.Load() {
		// In the cache, or not loaded yet: decoded into, and pinned by,
		// a scratch.
		s = getScratch()
		var err error
		if t, err = x.ht.get(&s.hidx, &s.hidxPin); err != nil {
			putScratch(s)
			return dst, err
		}
	}
	probe := t.Probe(h)
	var firstErr error // see probeEnd
	for {
		i, off, ok, err := probe.Next()
		if err != nil || !ok {
			putScratch(s)
			return dst, probeEnd(firstErr, err)
		}
		bh := t.BlockHandle(i)
		ents, pin, fast := x.src.entries(i, bh, off)
		if !fast {
			if s == nil {
				s = getScratch()
			}
			contents, end, err := x.src.blockForEntry(s, i, bh, off)
			if err == nil && end < 0 {
				end, err = codec.EntriesEnd(contents, int64(bh.Offset))
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			ents = contents[:end:end]
		}
		head, tail, v, err := codec.EntryParts(ents, int64(bh.Offset), uint32(off))
		if err != nil {
			pin.Release()
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if x.splitter == nil {
			if len(head)+len(tail) == len(key) && bytes.Equal(key[:len(head)], head) && bytes.Equal(key[len(head):], tail) {
				if !has {
					dst = append(dst, v...) // before the block v lies in is released
				}
				pin.Release()
				putScratch(s)
				return dst, nil
			}
			pin.Release()
			continue
		}
		// With a splitter the slot names the prefix's first entry.
		if s == nil {
			s = getScratch()
		}
		s.key = append(append(s.key[:0], head...), tail...)
		if !hasPrefix(x.splitter, s.key, fk) {
			pin.Release()
			continue // another prefix's slot with the same tag
		}
		dst, later, err := prefixFirst(dst, s.key, key, v, has)
		pin.Release()
		putScratch(s)
		if later {
			return x.index.get(dst, key, fk, h, has)
		}
		return dst, err
	}
}
