package merge

import (
	"bytes"

	"github.com/sstkit/sstable/reader"
)

// Get returns the value key has in the view of levels (levels[0] the
// newest) under o: the newest level's entry for key, unless that entry
// is a deletion or a newer level's range deletion covers key. It looks
// the key up in the levels newest first (through PointGetter, which for
// Tables is Reader.Get: each table's filter first) until one holds it,
// then asks only the newer levels for a span covering it (Reader.SpanAt
// for Tables): a key no level holds costs one lookup per level and no
// span search.
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
		v, err := getter(l).Get(key)
		if err == reader.ErrNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, newer := range levels[:i] {
			sp, err := getter(newer).SpanAt(key)
			switch {
			case err == reader.ErrNotFound:
			case err != nil:
				return nil, err
			case o.deletes(sp.Values):
				return nil, reader.ErrNotFound
			}
		}
		if o != nil && o.IsDeletion != nil && o.IsDeletion(v) {
			return nil, reader.ErrNotFound
		}
		if o != nil && o.Resolve != nil {
			r, err := o.Resolve(key, v)
			if err != nil {
				return nil, err
			}
			return bytes.Clone(r), nil
		}
		return v, nil
	}
	return nil, reader.ErrNotFound
}

// getter returns l's PointGetter, or one that looks keys up through its
// iterators.
func getter(l Level) PointGetter {
	if g, ok := l.(PointGetter); ok {
		return g
	}
	return iterGetter{l}
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
