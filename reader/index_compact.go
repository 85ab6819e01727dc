package reader

import (
	"bytes"
	"sync"
	"sync/atomic"

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
	splitter format.Splitter    // nil without one: slots name whole keys
	props    *format.Properties // the reader's: its smallest and largest keys give fenceSkip

	// fences holds, for each data block, codec.KeyPrefix of its first key
	// after fenceSkip (the bytes every key of the table starts with),
	// once a lookup has read the block; 0 until then. A lookup in a
	// table without a splitter skips a slot whose block cannot hold its
	// key (see get). Made by the first lookup; nil with a splitter.
	fenceOnce  sync.Once
	fenceReady atomic.Bool
	fences     []atomic.Uint64
	fenceSkip  []byte

	seekState // the fences of SeekGE (index_fence.go)
}

// fenceTable returns the fences, made on first use (8 bytes per data
// block, charged to the reader's cache); nil in a table with a splitter.
func (x *compactIndex) fenceTable() []atomic.Uint64 {
	if x.fenceReady.Load() {
		return x.fences
	}
	x.fenceOnce.Do(func() {
		if x.splitter == nil && x.ht.numBlocks > 0 {
			lo, hi := x.props.SmallestKey, x.props.LargestKey
			n := 0
			for n < len(lo) && n < len(hi) && lo[n] == hi[n] {
				n++
			}
			x.fenceSkip = bytes.Clone(lo[:n:n])
			x.fences = make([]atomic.Uint64, x.ht.numBlocks)
			x.charge(8 * len(x.fences))
		}
		x.fenceReady.Store(true)
	})
	return x.fences
}

// charge charges n bytes the index keeps on the Go heap (fences) to the
// reader's cache, as its other per-table memory is.
func (x *compactIndex) charge(n int) {
	switch src := x.src.(type) {
	case *mmapSource:
		charge(src.owner, n)
	case *readAtSource:
		charge(src.owner, n)
	}
}

// setFence records the fence of data block i from its entries.
func (x *compactIndex) setFence(fences []atomic.Uint64, i int, ents []byte, blockOff int64) {
	head, k, _, err := codec.EntryParts(ents, blockOff, 0)
	if err == nil && head == nil && bytes.HasPrefix(k, x.fenceSkip) {
		fences[i].Store(codec.KeyPrefix(k[len(x.fenceSkip):]))
	}
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
	// A slot whose tag matches names another key's entry in about one
	// successful lookup in twelve (5-bit tags; 0.14 entries more per
	// lookup at 1M entries): a data block anywhere, a cache miss as slow
	// as the one for the key's own entry. Block i
	// holds the keys from its first key up to the next block's first,
	// so a slot whose block's fences exclude the key is passed over
	// unread. Fences only pass slots over: a probe that passed any and
	// found nothing runs again without them, so that a table whose
	// blocks are out of order finds what it found without them.
	fences := x.fenceTable()
	var pk uint64
	if fences != nil {
		// A key without the table's common bytes is absent: the slots
		// say so, as without fences.
		if skip := x.fenceSkip; bytes.HasPrefix(key, skip) {
			pk = codec.KeyPrefix(key[len(skip):])
		} else {
			fences = nil
		}
	}
retry:
	probe := t.Probe(h)
	var firstErr error // see probeEnd
	passed := false
	for {
		i, off, ok, err := probe.Next()
		if err != nil || !ok {
			if passed {
				fences, passed = nil, false
				goto retry
			}
			putScratch(s)
			return dst, probeEnd(firstErr, err)
		}
		var lo uint64
		if fences != nil {
			lo = fences[i].Load()
			var hi uint64
			if i+1 < len(fences) {
				hi = fences[i+1].Load()
			}
			if pk < lo || hi != 0 && pk > hi {
				passed = true
				continue
			}
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
		if fences != nil && lo == 0 {
			x.setFence(fences, i, ents, int64(bh.Offset))
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
