package merge

import (
	"bytes"

	"github.com/sstkit/sstable/reader"
)

// Get returns the value key has in the view of levels (levels[0] the
// newest) under o: the newest level's entry for key, unless that entry
// is a deletion or a newer level's range deletion covers key. It reads
// the levels newest first and stops at the first that decides: for each,
// the point entry (through PointGetter, which for Tables is Reader.Get,
// its filter first), then the level's own span covering key, which hides
// key in every older level.
//
// The value is a new slice the caller owns. A key absent, deleted, or
// outside o's bounds gives reader.ErrNotFound itself; a level's failure
// its error (a table's corruption wraps format.ErrCorrupt and names the
// table; a Tables level out of order wraps ErrTableOrder).
func Get(levels []Level, key []byte, o *Options) ([]byte, error) {
	if o != nil && (o.LowerBound != nil && bytes.Compare(key, o.LowerBound) < 0 || o.UpperBound != nil && bytes.Compare(key, o.UpperBound) >= 0) {
		return nil, reader.ErrNotFound
	}
	for i, l := range levels {
		g, ok := l.(PointGetter)
		if !ok {
			g = iterGetter{l}
		}
		v, err := g.Get(key)
		if err == nil {
			if o != nil && o.IsDeletion != nil && o.IsDeletion(v) {
				return nil, reader.ErrNotFound
			}
			return v, nil
		}
		if err != reader.ErrNotFound {
			return nil, err
		}
		if i == len(levels)-1 {
			break // no older level for its spans to hide
		}
		sp, err := g.SpanAt(key)
		switch {
		case err == reader.ErrNotFound:
		case err != nil:
			return nil, err
		case o.deletes(sp.Values):
			return nil, reader.ErrNotFound
		}
	}
	return nil, reader.ErrNotFound
}

// iterGetter looks keys up in a Level without a PointGetter, through its
// iterators.
type iterGetter struct{ l Level }

func (g iterGetter) Get(key []byte) ([]byte, error) {
	it := g.l.NewIter(nil)
	defer it.Close()
	if it.SeekGE(key) && bytes.Equal(it.Key(), key) {
		v := bytes.Clone(it.Value())
		if v == nil {
			v = []byte{}
		}
		return v, nil
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return nil, reader.ErrNotFound
}

func (g iterGetter) SpanAt(key []byte) (reader.Span, error) {
	it := g.l.NewSpanIter()
	if it == nil {
		return reader.Span{}, reader.ErrNotFound
	}
	defer it.Close()
	if it.SeekGE(key) {
		if sp := it.Span(); bytes.Compare(sp.Start, key) <= 0 {
			// The fragment's slices live until Close: copy them.
			out := reader.Span{Start: bytes.Clone(sp.Start), End: bytes.Clone(sp.End), Values: make([][]byte, len(sp.Values))}
			for i, v := range sp.Values {
				out.Values[i] = bytes.Clone(v)
			}
			return out, nil
		}
	}
	if err := it.Err(); err != nil {
		return reader.Span{}, err
	}
	return reader.Span{}, reader.ErrNotFound
}
