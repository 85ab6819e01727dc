// Package merge reads a stack of tables as one sorted view, as an
// LSM-tree engine's read path does, and compacts it into new tables.
//
// # Levels
//
// A stack is a []Level, levels[0] the newest: in an LSM tree, the
// memtable, then each table of level 0 newest first (its own Level, since
// those tables overlap), then levels 1 and down, each one Level of
// non-overlapping tables (Tables). A Level is a sorted source of point
// entries and of span fragments (range deletions and range keys, written
// with builder.Builder.AddSpan), in bytes.Compare order.
//
// The view's rules, which Iterator, Get and Compact share:
//
//   - A key present in several levels reads as the newest level's entry.
//     If that entry is a deletion (Options.IsDeletion), the key is absent:
//     deletions are never shown.
//   - A range deletion (a span fragment with a value for which
//     Options.IsRangeDeletion holds; with it nil, every span) in level i
//     hides the keys in its [Start, End) of every level j > i, and none of
//     its own level's keys: a point and a span in one table, the point
//     stands (as in Pebble for equal sequence numbers).
//   - Spans that delete nothing (range keys) hide nothing; the iterator
//     does not show them, and Compact keeps them as data.
//   - Within a level made by Tables, tables do not overlap (points or
//     spans); Tables checks their order, and reports tables out of order
//     through the iterator's Err, Get and Compact (ErrTableOrder).
//
// # A memtable, or any sorted source
//
// An engine reads its memtable (or a batch, or a table of another format)
// in the same stack through Memtable: a Cursor over its sorted entries
// (six moves: SeekGE, Last, Next, Prev, Key, Value; SliceCursor is one
// over sorted slices) and its spans in any order, overlapping or not.
// Memtable adds the bounds, the prefix seeks and the span fragments a
// Level needs:
//
//	mem := &merge.Memtable{
//		NewCursor: func() merge.Cursor { return merge.SliceCursor(keys, values) },
//		Spans:     func() []reader.Span { return rangeDels }, // reader.Span{Start: a, End: b} deletes [a, b)
//	}
//	levels := []merge.Level{mem, merge.Tables(l0), merge.Tables(l1...)}
//
// A range deletion hides nothing in its own level, the memtable
// included: Put k then DeleteRange over k leaves k visible unless the
// engine removes the memtable's keys in the range when it records the
// deletion (see Memtable). ExampleMemtable reads a memtable over two
// tables and compacts them.
//
// A source may also implement Level itself: NewIter returns a
// LevelIterator, the methods of *reader.Iterator over its entries
// (deletions included), and NewSpanIter a SpanIterator over its span
// fragments, or nil when it has none. It may implement PointGetter too,
// for Get to look one key up without an iterator.
//
// # Iterators
//
// NewIterator returns an Iterator over the view, with *reader.Iterator's
// moves (First, Last, Next, Prev, SeekGE, SeekLT, SeekPrefixGE,
// SeekPrefixLT), bounds (Options.LowerBound, UpperBound, SetBounds) and
// prefix iteration mode, which each level's iterator provides: tables
// built with a splitter (builder.Options.Splitter) answer SeekPrefixGE
// from their filters, reading no data block of a table without the
// prefix.
//
// The iterator is a heap of the levels' iterators (ties to the newest
// level) beside their span iterators. Range deletions are applied
// through a window: the keys around the current one over which no
// level's fragments start or end, with the newest level deleting there;
// the span iterators are consulted again only when a move leaves the
// window, so a scan pays one key comparison per entry for them.
//
// Key and Value are valid until the iterator's next move, SetBounds or
// Close, as reader.Iterator's are: they may alias a table's memory
// mapping or decoded block, so copy them to keep them. Get returns a
// copy the caller owns.
//
// # Sharing and lifetimes
//
// Levels are reusable and shared like Readers: many Iterators, Gets and a
// Compact may use the same levels, one after another or at once from
// different goroutines (each Iterator used by one goroutine at a time).
// The caller keeps owning the Readers, and closes them after the
// iterators over them are closed.
//
// # Compaction
//
// Compact writes the live view into new non-overlapping tables through
// bulk.SortedWriter (staged, then a manifest written last: all or
// nothing). With CompactOptions.Bottom (nothing older below) deletions
// and range deletions are dropped; otherwise the newest deletions and
// the range deletions are kept, clipped to each output table, so that
// the output still hides the older levels left out of the compaction.
// CompactOptions.Drop lets it leave out live entries too, such as the
// versions of a key no reader can ask for any more.
//
// A store with file names and a commit record of its own (its manifest,
// a version edit) sets CompactOptions.NoManifest and TableName: the
// tables go straight to its names, in its data directory, with the 2
// fsyncs a table that a builder costs, and no manifest.json to delete.
// EmptyTable asks for one empty table when nothing is left to write, and
// UserProperties stores properties of the store's in each table; each
// TableInfo counts the deletions kept (Deletions).
package merge
