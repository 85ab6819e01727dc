package merge

import (
	"bytes"
	"math"
	"slices"
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

	// flat, when every level is a Tables level and they hold few
	// fragments, is all their fragments' bounds merged once: a window is
	// then one binary search, not a seek (and a step back) of every
	// level's span iterator. Made on the first window.
	flat      *flatDels
	flatTried bool
}

// flatDels is the merged bounds of every level's fragments: bounds
// sorted and distinct, and for each gap between two bounds, the newest
// level deleting keys there.
type flatDels struct {
	bounds [][]byte
	min    []int32 // min[k] is for [bounds[k], bounds[k+1]); math.MaxInt32 for none
}

// maxFlatFragments bounds the fragments merged into flatDels (a few
// hundred KiB of bounds); more levels' fragments than that are read
// through the span iterators, window by window.
const maxFlatFragments = 1 << 14

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
	if !d.flatTried {
		d.flatTried = true
		d.flat = d.merged()
	}
	if f := d.flat; f != nil {
		// The first bound above key; key lies in the gap before it.
		k, hi := 0, len(f.bounds)
		for k < hi {
			mid := int(uint(k+hi) >> 1)
			if bytes.Compare(f.bounds[mid], key) <= 0 {
				k = mid + 1
			} else {
				hi = mid
			}
		}
		d.lo, d.hi, d.min = nil, nil, math.MaxInt
		if k > 0 {
			d.lo = f.bounds[k-1]
		}
		if k < len(f.bounds) {
			d.hi = f.bounds[k]
		}
		if k > 0 && k < len(f.bounds) && f.min[k-1] != math.MaxInt32 {
			d.min = int(f.min[k-1])
		}
		d.ok = true
		return nil
	}
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

// merged reads every level's fragments and merges their bounds, or
// returns nil: a level not made by Tables (a memtable's spans may change
// between windows), more than maxFlatFragments fragments, or an error
// (which the span iterators' path then reports).
func (d *rangeDels) merged() *flatDels {
	type fragment struct {
		start, end []byte
		level      int32
	}
	var frags []fragment
	var bounds [][]byte
	for _, s := range d.levels {
		if _, ok := s.it.(*tablesSpanIter); !ok {
			return nil
		}
		for ok := s.it.First(); ok; ok = s.it.Next() {
			if len(bounds) == 2*maxFlatFragments {
				return nil
			}
			sp := s.it.Span()
			if d.opts.deletes(sp.Values) {
				frags = append(frags, fragment{sp.Start, sp.End, int32(s.level)})
			}
			bounds = append(bounds, sp.Start, sp.End)
		}
		if s.it.Err() != nil {
			return nil
		}
	}
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)
	f := &flatDels{bounds: bounds, min: make([]int32, max(len(bounds)-1, 0))}
	for k := range f.min {
		f.min[k] = math.MaxInt32
	}
	find := func(b []byte) int {
		k, _ := slices.BinarySearchFunc(bounds, b, bytes.Compare)
		return k
	}
	// Each level's fragments are disjoint: a level marks each gap once.
	for _, fr := range frags {
		for k, end := find(fr.start), find(fr.end); k < end; k++ {
			f.min[k] = min(f.min[k], fr.level)
		}
	}
	return f
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
	d.flat, d.flatTried = nil, true // its bounds alias the closed iterators' fragments
	return first
}
