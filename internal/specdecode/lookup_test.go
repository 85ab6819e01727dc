package specdecode

// Lookups as the specification describes them: through the hash index
// ("Hash index section"), and through the index block or the top-level
// index and a partition ("Index block", "Partitioned index and filter"),
// then a data block's restart points.

import (
	"bytes"
	"encoding/binary"
	"sort"
)

// getByHash looks key up through the hash index: the slots of its hash
// (of its prefix, with a splitter) name candidate entries, each decoded
// from its own offset. With a splitter the slot names the prefix's first
// entry, and the key, if present, follows it among the prefix's entries.
func (t *table) getByHash(key []byte) (value []byte, found bool, err error) {
	fk := t.prefix(key)
	var inner error
	_, err = t.probe(fk, func(l loc) bool {
		b := t.blocks[l.block]
		k, v, err := entryAt(b.contents[:b.end], uint64(l.off), t.version >= 4)
		if err != nil {
			inner = bad(secData, b.h.off+uint64(l.off), "entry a slot names: %v", err)
			return true
		}
		if t.split == nil {
			if bytes.Equal(k, key) {
				value, found = v, true
				return true
			}
			return false
		}
		if !bytes.Equal(t.prefix(k), fk) {
			return false // another prefix with the same tag
		}
		value, found, inner = t.scanPrefix(l, key)
		return true
	})
	if err == nil {
		err = inner
	}
	return value, found, err
}

// scanPrefix looks for key among the entries from l on, while they have
// key's prefix.
func (t *table) scanPrefix(l loc, key []byte) ([]byte, bool, error) {
	fk := t.prefix(key)
	start := -1
	for i, e := range t.blocks[l.block].entries {
		if e.off == l.off {
			start = i
		}
	}
	if start < 0 {
		return nil, false, bad(secHash, t.hash.slotsOff, "a slot names offset %d of block %d, where no entry starts", l.off, l.block)
	}
	for bi := l.block; bi < len(t.blocks); bi++ {
		for _, e := range t.blocks[bi].entries[start:] {
			if !bytes.Equal(t.prefix(e.key), fk) || bytes.Compare(e.key, key) > 0 {
				return nil, false, nil
			}
			if bytes.Equal(e.key, key) {
				return e.value, true, nil
			}
		}
		start = 0
	}
	return nil, false, nil
}

// getByIndex looks key up through the index: the first separator >= key
// names the only block that may hold it; in a partitioned table the first
// partition whose key is >= key holds that separator.
func (t *table) getByIndex(key []byte) ([]byte, bool, error) {
	lo, hi := 0, len(t.blocks)
	if t.partitioned {
		p := sort.Search(len(t.parts), func(i int) bool { return bytes.Compare(t.parts[i].key, key) >= 0 })
		if p == len(t.parts) {
			return nil, false, nil
		}
		lo = int(t.parts[p].firstBlock)
		if p+1 < len(t.parts) {
			hi = int(t.parts[p+1].firstBlock)
		}
	}
	i := lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(t.blocks[lo+i].sep, key) >= 0 })
	if i == hi {
		return nil, false, nil
	}
	return seekBlock(t.blocks[i], key)
}

// seekBlock finds key in a decoded data block from its bytes: a binary
// search of the restart points, whose keys are whole, then a scan of at
// most one restart interval.
func seekBlock(b *dataBlock, key []byte) ([]byte, bool, error) {
	c := b.contents
	n := int(binary.LittleEndian.Uint32(c[len(c)-4:]))
	restart := func(j int) int { return int(binary.LittleEndian.Uint32(c[b.end+4*j:])) }
	// next decodes the entry at pos against the previous key.
	next := func(pos int, prev []byte) (key, value []byte, end int, err error) {
		var h [3]int
		p := pos
		for i := range h {
			v, w := binary.Uvarint(c[p:b.end])
			if w <= 0 {
				return nil, nil, 0, bad(secData, b.h.off+uint64(pos), "bad entry header")
			}
			h[i], p = int(v), p+w
		}
		if h[0] > len(prev) || h[1]+h[2] > b.end-p {
			return nil, nil, 0, bad(secData, b.h.off+uint64(pos), "bad entry")
		}
		key = append(bytes.Clone(prev[:h[0]]), c[p:p+h[1]]...)
		return key, c[p+h[1] : p+h[1]+h[2]], p + h[1] + h[2], nil
	}
	var searchErr error
	// The last restart point whose key is <= key (or the first).
	j := sort.Search(n, func(j int) bool {
		k, _, _, err := next(restart(j), nil)
		if err != nil {
			searchErr = err
		}
		return bytes.Compare(k, key) > 0
	})
	if searchErr != nil {
		return nil, false, searchErr
	}
	var prev []byte
	for pos := restart(max(j-1, 0)); pos < b.end; {
		k, v, end, err := next(pos, prev)
		if err != nil {
			return nil, false, err
		}
		switch bytes.Compare(k, key) {
		case 0:
			return v, true, nil
		case 1:
			return nil, false, nil
		}
		prev, pos = k, end
	}
	return nil, false, nil
}

// filterAnswers returns what each filter the specification gives a
// lookup of key answers: a one-level table's filter; in a partitioned
// table, the filter of the partition a key search finds (false past the
// last partition), with a splitter also that of the first partition whose
// key's prefix is >= key's prefix, and in version 4 the whole filter the
// hash index section carries.
func (t *table) filterAnswers(key []byte) []bool {
	fk := t.prefix(key)
	if !t.partitioned {
		return []bool{mayContain(t.p.policy, t.filterBytes, fk)}
	}
	in := func(p int) bool { return p < len(t.parts) && mayContain(t.p.policy, t.parts[p].filter, fk) }
	answers := []bool{in(sort.Search(len(t.parts), func(i int) bool { return bytes.Compare(t.parts[i].key, key) >= 0 }))}
	if t.split != nil {
		answers = append(answers, in(sort.Search(len(t.parts), func(i int) bool { return bytes.Compare(t.prefix(t.parts[i].key), fk) >= 0 })))
	}
	if t.version >= 4 {
		answers = append(answers, mayContain(t.p.policy, t.hash.filter, fk))
	}
	return answers
}
