package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// Ours: each table written with builder.Create(path, nil) (the default
// options: format version 4, or 5 with spans; 4 KiB blocks, snappy, a
// Bloom filter of 10 bits per key), its range deletions added with
// AddSpan(start, end, rangeDelValue); all opened with reader.Open and one
// shared cache.Cache of -cache-mib, the size Pebble's block cache gets;
// read as levels := []merge.Level{merge.Tables(newest), ...,
// merge.Tables(oldest)}, through merge.NewIterator, merge.Get and
// merge.Compact with oursOpts.

// rangeDelValue is the value of our range deletion spans: one kind byte,
// Pebble's InternalKeyKindRangeDelete (15).
var rangeDelValue = []byte{15}

// oursOpts is the merge.Options of every read: spans whose value starts
// with the range deletion kind delete; no point deletions.
var oursOpts = &merge.Options{IsRangeDeletion: func(v []byte) bool { return len(v) > 0 && v[0] == 15 }}

// oursPath is table t's file (t = 0 the oldest).
func oursPath(dir string, t int) string {
	return filepath.Join(dir, "ours", fmt.Sprintf("%06d.sst", t+1))
}

// buildOurs writes every table of w into dir/ours.
func buildOurs(dir string, w *workload) error {
	if err := os.MkdirAll(filepath.Join(dir, "ours"), 0o755); err != nil {
		return err
	}
	v := make([]byte, 0, valueLen)
	for t, tb := range w.tables {
		b, err := builder.Create(oursPath(dir, t), nil)
		if err != nil {
			return err
		}
		for _, s := range tb.spans {
			start, end := w.spanKeys(s)
			if err := b.AddSpan(start, end, rangeDelValue); err != nil {
				b.Abort()
				return err
			}
		}
		for _, j := range tb.keys {
			if err := b.Add(w.key(int(j)), value(v, t, int(j))); err != nil {
				b.Abort()
				return err
			}
		}
		if err := b.Finish(); err != nil {
			return err
		}
	}
	return nil
}

// oursStack is our tables open as a stack of levels.
type oursStack struct {
	rs     []*reader.Reader // by table, rs[0] the oldest
	c      *cache.Cache     // closed with the stack; nil when the caller owns the cache
	levels []merge.Level    // newest first
}

// openOurs opens the n tables in dir/ours with c, or with a new cache of
// cacheBytes when c is nil (closed with the stack).
func openOurs(dir string, n int, c *cache.Cache, cacheBytes int64) (*oursStack, error) {
	s := &oursStack{}
	if c == nil {
		var err error
		if c, err = cache.New(cacheBytes); err != nil {
			return nil, err
		}
		s.c = c
	}
	for t := range n {
		r, err := reader.Open(oursPath(dir, t), &reader.Options{Cache: c})
		if err != nil {
			s.close()
			return nil, err
		}
		s.rs = append(s.rs, r)
	}
	for t := n - 1; t >= 0; t-- {
		s.levels = append(s.levels, merge.Tables(s.rs[t]))
	}
	return s, nil
}

func (s *oursStack) close() error {
	var first error
	for _, r := range s.rs {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	if s.c != nil {
		if err := s.c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ours is the engine over our stack.
type ours struct {
	s    *oursStack
	opts *merge.Options  // nil: oursOpts (tests give others)
	seek *merge.Iterator // the iterator of the seek measurements, reused
}

func (o *ours) options() *merge.Options {
	if o.opts == nil {
		return oursOpts
	}
	return o.opts
}

func (o *ours) name() string { return "ours" }

func (o *ours) scan(reverse bool, visit func(k, v []byte)) (int, error) {
	it := merge.NewIterator(o.s.levels, o.options())
	n := 0
	if reverse {
		for ok := it.Last(); ok; ok = it.Prev() {
			k, v := it.Key(), it.Value()
			if visit != nil {
				visit(k, v)
			}
			sink += len(k) + len(v)
			n++
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if visit != nil {
				visit(k, v)
			}
			sink += len(k) + len(v)
			n++
		}
	}
	return n, it.Close()
}

func (o *ours) seekNext(key []byte, nexts int) (int, error) {
	if o.seek == nil {
		o.seek = merge.NewIterator(o.s.levels, o.options())
	}
	it := o.seek
	n := 0
	for ok := it.SeekGE(key); ok; ok = it.Next() {
		sink += len(it.Key()) + len(it.Value())
		if n++; n > nexts {
			break
		}
	}
	return n, it.Err()
}

func (o *ours) get(key []byte) ([]byte, bool, error) {
	v, err := merge.Get(o.s.levels, key, o.options())
	if err == reader.ErrNotFound {
		return nil, false, nil
	}
	return v, err == nil, err
}

// compactOurs opens the tables afresh, with c (nil: a new cache of
// cacheBytes), so that their blocks are not in it, and times
// merge.Compact of their live view into outDir, tables of target bytes,
// to the bottom. It returns the seconds and the output's entries and
// tables.
func compactOurs(dir, outDir string, n int, c *cache.Cache, cacheBytes, target int64) (sec float64, entries int64, tables int, err error) {
	s, err := openOurs(dir, n, c, cacheBytes)
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}()
	sec, err = timed(func() error {
		ts, err := merge.Compact(s.levels, &merge.CompactOptions{Options: *oursOpts, Dir: outDir, TargetTableSize: target, Bottom: true})
		for _, t := range ts {
			entries += t.Entries
		}
		tables = len(ts)
		return err
	})
	return sec, entries, tables, err
}

func (o *ours) close() error {
	var err error
	if o.seek != nil {
		err = o.seek.Close()
	}
	if cerr := o.s.close(); err == nil {
		err = cerr
	}
	return err
}
