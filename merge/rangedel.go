package merge

import (
	"bytes"
	"math"
)

// spanLevel is one level's span iterator, for range deletions.
type spanLevel struct {
	level int
	it    SpanIterator
}

// rangeDels answers whether a range deletion of a newer level covers a
// key. It keeps a window [lo, hi) of keys over which no level's span
// fragments start or end, with the newest level deleting there (min): a
// scan asks its span iterators again only when it leaves the window, at
// a fragment's start or end, whichever direction it goes.
type rangeDels struct {
	levels []spanLevel
	newest int      // the newest level with spans: keys of it and newer ones are never covered
	opts   *Options // IsRangeDeletion
	ok     bool     // the window is set
	lo, hi []byte   // nil: unbounded; slices of the span iterators' fragments
	min    int      // the newest level deleting keys in the window; math.MaxInt for none
}

// covered reports whether a range deletion of a level newer than level
// covers key.
func (d *rangeDels) covered(key []byte, level int) (bool, error) {
	if level <= d.newest {
		return false, nil
	}
	if !d.ok || d.lo != nil && bytes.Compare(key, d.lo) < 0 || d.hi != nil && bytes.Compare(key, d.hi) >= 0 {
		if err := d.window(key); err != nil {
			return false, err
		}
	}
	return d.min < level, nil
}

// window sets the window around key, from each level's fragment covering
// key, or the gap between fragments key lies in.
func (d *rangeDels) window(key []byte) error {
	d.ok, d.lo, d.hi, d.min = false, nil, nil, math.MaxInt
	for _, s := range d.levels {
		if s.it.SeekGE(key) {
			sp := s.it.Span()
			if bytes.Compare(sp.Start, key) <= 0 {
				if s.level < d.min && d.opts.deletes(sp.Values) {
					d.min = s.level
				}
				d.lo, d.hi = maxLo(d.lo, sp.Start), minHi(d.hi, sp.End)
				continue
			}
			d.hi = minHi(d.hi, sp.Start)
		} else if err := s.it.Err(); err != nil {
			return err
		}
		// key lies in a gap: it begins at the previous fragment's end.
		if s.it.Prev() {
			d.lo = maxLo(d.lo, s.it.Span().End)
		} else if err := s.it.Err(); err != nil {
			return err
		}
	}
	d.ok = true
	return nil
}

// maxLo returns the greater of two lower bounds, nil being the least.
func maxLo(a, b []byte) []byte {
	if a == nil || b != nil && bytes.Compare(b, a) > 0 {
		return b
	}
	return a
}

// minHi returns the lesser of two upper bounds, nil being the greatest.
func minHi(a, b []byte) []byte {
	if a == nil || b != nil && bytes.Compare(b, a) < 0 {
		return b
	}
	return a
}

func (d *rangeDels) close() error {
	var first error
	for _, s := range d.levels {
		if err := s.it.Close(); err != nil && first == nil {
			first = err
		}
	}
	d.ok, d.lo, d.hi = false, nil, nil
	return first
}
