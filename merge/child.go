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
	pk2   uint64 // its next 8 bytes, the same way
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
	var key []byte
	if c.t != nil {
		key = c.t.it.Key()
	} else {
		key = c.x.Key()
	}
	if len(key) >= 16 {
		// setKey's common case, without the call
		c.key, c.pk, c.pk2 = key, binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])
		return true
	}
	c.setKey(key)
	return true
}

// setKey caches key and its words for compareKeys; nil is taken for the
// empty key.
func (c *child) setKey(key []byte) {
	if key == nil {
		key = []byte{} // zero-size: no allocation
	}
	c.key, c.pk, c.pk2 = key, codec.KeyPrefix(key), 0
	if len(key) > 8 {
		c.pk2 = codec.KeyPrefix(key[8:])
	}
}

// compareKeys is bytes.Compare of two children's keys. Keys that differ
// in their first 16 bytes (random keys and keys of a common 8-byte prefix
// nearly always do) are ordered by the two words cached at the moves,
// without a load of either key: the runner's key, in another level's
// block, cost the heap's comparison a cache miss, and bytes.Compare a
// tenth of a scan's time over 16-byte keys sharing their first 8 bytes.
// Zero padding orders a key that ends within the words before the longer
// keys it begins, as bytes.Compare does; only keys whose words tie
// compare their bytes.
func compareKeys(a, b *child) int {
	if a.pk != b.pk {
		if a.pk < b.pk {
			return -1
		}
		return 1
	}
	if a.pk2 != b.pk2 {
		if a.pk2 < b.pk2 {
			return -1
		}
		return 1
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
