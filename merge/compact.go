package merge

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/reader"
)

// CompactOptions configure Compact.
type CompactOptions struct {
	// Options says which entries and spans delete (and, with bounds,
	// limits the compaction to the keys and spans within them).
	Options
	// Dir is the output directory, new or empty: Compact writes its
	// tables there as a bulk build does (000001.sst, ... and
	// manifest.json, through bulk.SortedWriter). With NoManifest it may
	// hold other files.
	Dir string
	// TableName names the output tables (bulk.Options.TableName): table
	// n (1 for the first) is Dir joined with TableName(n), a base name
	// such as a store's next file number's; a name that exists already
	// is an error. nil: 000001.sst, 000002.sst, ...
	TableName func(n int) string
	// NoManifest writes the tables straight to their names in Dir, with
	// no staging directory and no manifest.json (bulk.Options.NoManifest),
	// for a store whose own record of its tables is the commit point. Dir
	// need not be new or empty then (a store's data directory), only free
	// of the tables' names. It costs what an iterator into builder.Create
	// does, 2 fsyncs a table (the file, the directory), where the
	// manifest's all-or-nothing build takes 2 a table and 3 more. When
	// Compact returns, every table is durable under its name; a process
	// killed midway leaves the tables finished so far under their names
	// (complete: a table is renamed to its name once fsynced) and at most
	// one temporary file (builder.IsTempFile), which the store's record
	// does not list and the store removes; an error removes them all.
	NoManifest bool
	// EmptyTable makes a compaction whose output would be empty (every
	// key deleted or dropped, and no span left) write one table holding
	// nothing, rather than none, for a store that replaces its inputs
	// with a table whatever it holds. It needs NoManifest: a manifest
	// lists only tables with entries (one listing none says the output
	// is empty).
	EmptyTable bool
	// UserProperties, when set, is called for each output table just
	// before it is finished, with its TableInfo so far (Size not yet
	// known; Deletions counts the deletions kept), and returns user
	// properties to store in the table (builder.Builder.SetUserProperty,
	// read back in the reader's Properties().User): a store's sequence
	// numbers, its tombstone count. nil: none.
	UserProperties func(t bulk.TableInfo) map[string][]byte
	// TargetTableSize is the size in bytes at which an output table is
	// finished and the next begun (builder.Builder.EstimatedSize); 0
	// writes one table.
	TargetTableSize int64
	// Bottom says nothing older lies below the levels compacted: point
	// deletions and range deletions are then dropped rather than kept.
	Bottom bool
	// Builder configures the output tables; nil: the builder's defaults.
	// Range deletions and range keys need its default format version.
	Builder *builder.Options
	// Drop, when set, is called once for each live entry of the view, in
	// key order, from the one goroutine running Compact, with its key and
	// value valid only during the call; true leaves the entry out of the
	// output. Entries the view hides (shadowed, deleted, under a range
	// deletion) and deletions kept for older levels never reach it. With
	// keys split into a prefix and a version suffix (the tables'
	// format.Splitter), a hook that remembers the prefix it saw last
	// keeps only the versions a reader may still ask for: examples/mvccgc
	// keeps every version newer than a garbage-collection timestamp and
	// the newest at or below it. The entry is dropped outright, so with
	// Bottom false an older level's entry for the key shows again.
	Drop func(key, value []byte) bool
}

// emptyDir checks that dir is new or empty (but for the staging
// directories of killed builds, which bulk.IsTempDir recognises), and
// reports whether it does not exist yet.
func emptyDir(dir string) (created bool, err error) {
	if dir == "" {
		return false, errors.New("merge: Compact: empty CompactOptions.Dir")
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("merge: Compact: %w", err)
	}
	for _, e := range ents {
		if !bulk.IsTempDir(e.Name()) {
			return false, fmt.Errorf("merge: Compact: output directory %s is not empty (it holds %s)", dir, e.Name())
		}
	}
	return false, nil
}

// Compact writes the live view of levels (levels[0] the newest) into new
// non-overlapping tables in o.Dir, and returns them in key order, each
// described exactly (path, smallest and largest key, entries, deletions
// kept, spans, size). Shadowed entries and keys under a newer level's
// range deletion are dropped. Unless o.Bottom, the newest entry of a key
// that is a deletion is kept (when no newer range deletion hides it), and
// so are the range deletions, so that the output still hides what the
// older levels left out of the compaction hold. Spans that delete nothing
// (range keys) are data: always kept. The output's spans are the union of
// the levels' fragments, each output fragment listing the values of the
// levels covering it, newest level first, clipped to each output table.
//
// Memory stays bounded whatever the input size: Compact streams the merged
// view into bulk.SortedWriter, which holds one table's builder (bounded by
// TargetTableSize) and one span fragment; the iterator keeps at most a few
// table iterators open per level.
//
// Unless NoManifest, it is all or nothing: the tables are staged and the
// manifest is written last (bulk.SortedWriter), an error removes
// everything written, and a process killed midway leaves the input tables
// untouched and no table or manifest in o.Dir. Errors: those of
// bulk.NewSortedWriter for Dir (not empty, not a directory), a level's (a
// table's corruption, a Tables level out of order), and the writer's.
//
// A view with nothing left to write (at the bottom, every key deleted or
// dropped and no span) gives no table: an empty slice, no error, and a
// manifest listing none. With EmptyTable and NoManifest it gives one table
// holding nothing (Entries 0, Smallest and Largest nil).
//
// NoManifest and TableName suit a store with file names and a commit
// record of its own: the tables go straight to the names it gives, with 2
// fsyncs each, against 2 each and 3 more (the directory after the renames,
// the manifest, the directory after it) for the default all-or-nothing
// build; on a small compaction the fsyncs are most of the cost
// (BenchmarkCompactSmall).
//
// Compact reads the levels through their readers, and so through the block
// cache they were opened with (reader.Options.Cache, by default the
// process's shared one). Neither the reader nor the cache has a way to
// read a block without caching it, so there is no "do not fill" option:
// the cache's S3-FIFO admits a block read once only to its small queue
// (about a tenth of each shard), so a compaction's single pass churns that
// queue and leaves the blocks that lookups reuse in the main one. A
// compaction that must not touch the shared cache at all reads its inputs
// through readers opened with a cache of its own.
func Compact(levels []Level, o *CompactOptions) (tables []bulk.TableInfo, err error) {
	if o == nil {
		return nil, errors.New("merge: Compact: nil options (Dir is required)")
	}
	var created bool
	if o.NoManifest {
		_, err := os.Stat(o.Dir)
		created = errors.Is(err, os.ErrNotExist)
	} else if created, err = emptyDir(o.Dir); err != nil {
		return nil, err
	}
	w, err := bulk.NewSortedWriter(o.Dir, &bulk.Options{
		Builder:         o.Builder,
		TargetTableSize: o.TargetTableSize,
		TableName:       o.TableName,
		NoManifest:      o.NoManifest,
		EmptyTable:      o.EmptyTable,
		UserProperties:  o.UserProperties,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			w.Abort()
			if created {
				os.Remove(o.Dir) // empty again, unless something else wrote there
			}
		}
	}()
	opts := &o.Options
	it := NewIterator(levels, opts)
	defer it.Close()
	it.withDels = !o.Bottom
	spans := newSpanUnion(levels, o)
	defer spans.close()

	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		for spans.ok && bytes.Compare(spans.start, k) <= 0 {
			if err := spans.write(w); err != nil {
				return nil, err
			}
		}
		v := it.Value()
		var err error
		if o.IsDeletion != nil && o.IsDeletion(v) {
			// Only !Bottom shows deletions: the newest, not range-deleted.
			err = w.AddDeletion(k, v)
		} else if o.Drop != nil && o.Drop(k, v) {
			continue
		} else {
			err = w.Add(k, v)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for spans.ok {
		if err := spans.write(w); err != nil {
			return nil, err
		}
	}
	if spans.err != nil {
		return nil, spans.err
	}
	return w.Finish()
}

// spanUnion walks the union of the levels' span fragments in key order,
// as fragments of its own: [start, end) and the values of every level
// covering it, newest level first, without the range deletions when
// compacting to the bottom. Fragments left with no value are skipped.
type spanUnion struct {
	its    []SpanIterator // by level; nil where a level has none
	cur    []reader.Span  // each level's current fragment; zero when done
	lower  []byte         // the bounds: fragments are clipped to them
	upper  []byte
	drop   func([]byte) bool // a value not to write (a range deletion, at the bottom); nil: none
	x      []byte            // the sweep: fragments below it are written
	ok     bool              // start, end and values hold the next fragment
	start  []byte
	end    []byte
	values [][]byte
	err    error
}

func newSpanUnion(levels []Level, o *CompactOptions) *spanUnion {
	u := &spanUnion{its: make([]SpanIterator, len(levels)), cur: make([]reader.Span, len(levels))}
	u.lower, u.upper = o.LowerBound, o.UpperBound
	if o.Bottom {
		u.drop = func(v []byte) bool { return o.IsRangeDeletion == nil || o.IsRangeDeletion(v) }
	}
	for i, l := range levels {
		s := l.NewSpanIter()
		if s == nil {
			continue
		}
		u.its[i] = s
		var ok bool
		if u.lower != nil {
			ok = s.SeekGE(u.lower)
		} else {
			ok = s.First()
		}
		if !u.settle(i, ok) {
			return u
		}
	}
	if u.lower != nil {
		u.x = bytes.Clone(u.lower)
	}
	u.advance()
	return u
}

// settle records level i's current fragment after a move; false on error.
func (u *spanUnion) settle(i int, ok bool) bool {
	if ok {
		u.cur[i] = u.its[i].Span()
		return true
	}
	u.cur[i] = reader.Span{}
	if err := u.its[i].Err(); err != nil {
		u.err, u.ok = err, false
		return false
	}
	return true
}

// advance finds the next fragment of the union at or above u.x.
func (u *spanUnion) advance() {
	u.ok = false
	for u.err == nil {
		// The sweep starts at x if a fragment covers it, else at the
		// least start above it.
		var start []byte
		found := false
		for i := range u.cur {
			c := &u.cur[i]
			for c.End != nil && u.x != nil && bytes.Compare(c.End, u.x) <= 0 {
				if !u.settle(i, u.its[i].Next()) {
					return
				}
			}
			if c.End == nil {
				continue
			}
			s := c.Start
			if u.x != nil && bytes.Compare(s, u.x) < 0 {
				s = u.x
			}
			if !found || bytes.Compare(s, start) < 0 {
				start, found = s, true
			}
		}
		if !found || u.upper != nil && bytes.Compare(start, u.upper) >= 0 {
			return
		}
		// It ends at the first start or end above it.
		var end []byte
		u.values = u.values[:0]
		for i := range u.cur {
			c := &u.cur[i]
			if c.End == nil {
				continue
			}
			if bytes.Compare(c.Start, start) > 0 {
				end = minHi(end, c.Start)
				continue
			}
			end = minHi(end, c.End)
			for _, v := range c.Values {
				if u.drop == nil || !u.drop(v) {
					u.values = append(u.values, v)
				}
			}
		}
		if u.upper != nil && bytes.Compare(end, u.upper) > 0 {
			end = u.upper
		}
		u.start = append(u.start[:0], start...)
		u.end = append(u.end[:0], end...)
		u.x = append(u.x[:0], end...)
		if len(u.values) > 0 {
			u.ok = true
			return
		}
	}
}

// write adds the current fragment to w, then moves to the next.
func (u *spanUnion) write(w *bulk.SortedWriter) error {
	for _, v := range u.values {
		if err := w.AddSpan(u.start, u.end, v); err != nil {
			return fmt.Errorf("merge: compact: %w", err)
		}
	}
	u.advance()
	return u.err
}

func (u *spanUnion) close() {
	for _, s := range u.its {
		if s != nil {
			s.Close()
		}
	}
}
