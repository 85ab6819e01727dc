package merge

import "github.com/sstkit/sstable/reader"

// Options configure an Iterator, Get and (through CompactOptions) Compact.
// A nil *Options means the zero value: no point deletions, every span a
// range deletion, no bounds.
type Options struct {
	// IsDeletion reports whether a point entry's value marks its key
	// deleted (a tombstone, such as a value whose kind byte says so): the
	// key then reads as absent, whatever older levels hold for it. nil:
	// no entry is a deletion. It is called on the hot path, with the
	// newest level's value of each key the view reaches (before range
	// deletions are consulted), valid only during the call; Get and
	// Compact call it too.
	//
	// Every value reaches it, empty ones included: a table or memtable
	// holding empty values passes them as a slice of length 0 (nil or
	// not), so a check of a kind byte must test the length first
	// (len(v) > 0 && v[0] == kindDelete). merge recovers no panic: one in
	// IsDeletion (or Resolve, IsRangeDeletion, Drop) comes out of the
	// move that called it (First, Next, SeekGE, ...), Get or Compact.
	//
	// It suits engines whose keys are the user's keys. In a store whose
	// keys carry a version (key + timestamp), a tombstone is a version of
	// its own key and hides no other: leave IsDeletion nil, so that
	// tombstones read and compact as data, and drop them in
	// CompactOptions.Drop when no reader needs them (examples/mvccgc).
	IsDeletion func(value []byte) bool
	// IsRangeDeletion reports whether a span value deletes the keys of
	// older levels in its [Start, End). A fragment deletes when any of
	// its values does. nil: every span does. Spans for which it returns
	// false (range keys) hide nothing; Compact keeps them as data.
	IsRangeDeletion func(value []byte) bool
	// Resolve, when set, is asked about each entry the view would show
	// (after deletions and range deletions have hidden theirs), with its
	// key and value valid only during the call, and returns the value to
	// show: the value itself, or what only the levels' source can make of
	// it (package rocksdb's merge operands, read through the database's
	// merge operator, and blob indexes, read from their blob files). The
	// value it returns must stay valid until the view moves on. An error
	// stops the Iterator with it (Err), and Get and Compact return it.
	// nil: every value is shown as the level holds it.
	Resolve func(key, value []byte) ([]byte, error)
	// LowerBound (inclusive) and UpperBound (exclusive) bound the keys an
	// Iterator shows and Get finds, as reader.IterOptions' do: nil is no
	// bound, an empty non-nil UpperBound admits no key. They are copied.
	LowerBound, UpperBound []byte
}

// iterOptions returns the bounds as the levels take them.
func (o *Options) iterOptions() *reader.IterOptions {
	if o == nil || o.LowerBound == nil && o.UpperBound == nil {
		return nil
	}
	return &reader.IterOptions{LowerBound: o.LowerBound, UpperBound: o.UpperBound}
}

// deletes reports whether a fragment with values deletes, under o.
func (o *Options) deletes(values [][]byte) bool {
	if o == nil || o.IsRangeDeletion == nil {
		return len(values) > 0
	}
	for _, v := range values {
		if o.IsRangeDeletion(v) {
			return true
		}
	}
	return false
}
