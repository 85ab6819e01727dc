package merge

import (
	"bytes"
	"encoding/binary"

	"github.com/sstkit/sstable/internal/codec"
)

// child is one level's point iterator inside an Iterator, with its
// current key cached for the heap's comparisons. A level made by Tables
// is called directly (t), any other through its interface (x): the
// common case pays no dynamic dispatch on the hot path.
type child struct {
	level int // the level's index: 0 is the newest
	t     *tablesIter
	x     LevelIterator
	key   []byte // the current key; nil when not positioned, never nil when positioned (see settle)
	pk    uint64 // key's first 8 bytes, big-endian, zero-padded: see compareKeys
}

// settle caches the key after a move and returns ok. A nil key stands
// for "not positioned" (build puts only children with a key in the
// heap), so a positioned child's key is never nil: a level's iterator
// may give the empty key, the least of all, as nil (the reader's did on
// a fresh iterator, and a memtable may hold it so), and taking it for no
// key dropped the whole level from First and Compact.
func (c *child) settle(ok bool) bool {
	if !ok {
		c.key = nil
		return false
	}
	if c.t != nil {
		c.key = c.t.it.Key()
	} else {
		c.key = c.x.Key()
	}
	if c.key == nil {
		c.key = []byte{} // zero-size: no allocation
	}
	c.pk = codec.KeyPrefix(c.key)
	return true
}

// compareKeys is bytes.Compare of two children's keys. Keys that differ
// in their first 8 bytes (random keys nearly always do) are ordered by
// the prefixes cached at the moves, in registers, without the call and
// the loads of a byte comparison. Keys that share them (a common prefix,
// decimal numbers) are ordered by their next 8 bytes when those differ,
// still without the call (bytes.Compare took a tenth of a scan's time
// over 16-byte keys sharing their first 8 bytes); only the rest compare
// the keys.
func compareKeys(a, b *child) int {
	if a.pk != b.pk {
		if a.pk < b.pk {
			return -1
		}
		return 1
	}
	if len(a.key) >= 16 && len(b.key) >= 16 {
		x, y := binary.BigEndian.Uint64(a.key[8:]), binary.BigEndian.Uint64(b.key[8:])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return bytes.Compare(a.key, b.key)
}

func (c *child) first() bool {
	if c.t != nil {
		return c.settle(c.t.First())
	}
	return c.settle(c.x.First())
}

func (c *child) last() bool {
	if c.t != nil {
		return c.settle(c.t.Last())
	}
	return c.settle(c.x.Last())
}

func (c *child) next() bool {
	if c.t != nil {
		return c.settle(c.t.Next())
	}
	return c.settle(c.x.Next())
}

func (c *child) prev() bool {
	if c.t != nil {
		return c.settle(c.t.Prev())
	}
	return c.settle(c.x.Prev())
}

// step moves one entry on in direction dir: Next when dir > 0, else
// Prev.
func (c *child) step(dir int8) bool {
	if dir > 0 {
		return c.next()
	}
	return c.prev()
}

func (c *child) seekGE(key []byte) bool {
	if c.t != nil {
		return c.settle(c.t.SeekGE(key))
	}
	return c.settle(c.x.SeekGE(key))
}

func (c *child) seekLT(key []byte) bool {
	if c.t != nil {
		return c.settle(c.t.SeekLT(key))
	}
	return c.settle(c.x.SeekLT(key))
}

func (c *child) seekPrefixGE(prefix, key []byte) bool {
	if c.t != nil {
		return c.settle(c.t.SeekPrefixGE(prefix, key))
	}
	return c.settle(c.x.SeekPrefixGE(prefix, key))
}

func (c *child) seekPrefixLT(prefix, key []byte) bool {
	if c.t != nil {
		return c.settle(c.t.SeekPrefixLT(prefix, key))
	}
	return c.settle(c.x.SeekPrefixLT(prefix, key))
}

func (c *child) value() []byte {
	if c.t != nil {
		return c.t.it.Value()
	}
	return c.x.Value()
}

func (c *child) setBounds(lower, upper []byte) {
	c.key = nil
	if c.t != nil {
		c.t.SetBounds(lower, upper)
		return
	}
	c.x.SetBounds(lower, upper)
}

func (c *child) err() error {
	if c.t != nil {
		return c.t.Err()
	}
	return c.x.Err()
}

func (c *child) close() error {
	c.key = nil
	if c.t != nil {
		return c.t.Close()
	}
	return c.x.Close()
}
