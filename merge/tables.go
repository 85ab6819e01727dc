package merge

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/reader"
)

// ErrTableOrder is wrapped by the error of a level made by Tables whose
// tables are out of key order or overlap (points or spans): iterators
// over it return the error from Err, and Get and Compact return it.
var ErrTableOrder = errors.New("merge: tables of a level overlap or are out of key order")

// pointTable is a table with point entries: its reader and key bounds.
type pointTable struct {
	r                 *reader.Reader
	smallest, largest []byte // first and last keys, inclusive
}

// spanTable is a table with span fragments: its reader and their bounds.
type spanTable struct {
	r          *reader.Reader
	start, end []byte // the first fragment's start, the last's end (exclusive)
}

// tablesLevel is the Level Tables returns.
type tablesLevel struct {
	points []pointTable // tables with entries, in key order
	spans  []spanTable  // tables with spans, in key order
	err    error        // the tables overlap: every use fails with it
}

// Tables returns a Level over tables whose keys and spans do not overlap,
// given in key order (each table's keys and spans below the next table's
// smallest key and span start; a span's end, exclusive, may equal the
// next table's first key): the output of a bulk build or a Compact, one
// level of an LSM tree. Empty tables may stand anywhere and are skipped;
// nil readers are an error.
//
// A table is opened lazily: an iterator makes a *reader.Iterator (and a
// *reader.SpanIterator) on a table only when a move reaches it, keeps it
// until the iterator's Close, and never touches the tables its moves do
// not reach. Get reads only the table whose key range holds the key,
// through Reader.Get (its filter first) and Reader.SpanAt.
//
// Tables reads each table's bounds from its properties once, here. Tables
// out of order or overlapping make every iterator's Err, and Get and
// Compact, return an error wrapping ErrTableOrder that names the two
// tables' places in rs and their keys. The caller keeps owning the
// readers, and closes them after every iterator over the level is
// closed.
func Tables(rs ...*reader.Reader) Level {
	l := &tablesLevel{}
	var prevHi []byte // the highest position of the previous non-empty table
	var prevExcl bool // prevHi is a span end (exclusive)
	prevIndex := -1   // its index in rs
	for i, r := range rs {
		if r == nil {
			l.err = fmt.Errorf("%w: table %d is a nil *reader.Reader", ErrTableOrder, i)
			return l
		}
		p := r.Properties()
		hasPoints, hasSpans := p.NumEntries > 0, p.NumSpanFragments > 0
		if !hasPoints && !hasSpans {
			continue
		}
		lo := p.SmallestKey
		if !hasPoints || hasSpans && bytes.Compare(p.SmallestSpanKey, lo) < 0 {
			lo = p.SmallestSpanKey
		}
		if prevIndex >= 0 {
			c := bytes.Compare(prevHi, lo)
			if c > 0 || c == 0 && !prevExcl {
				l.err = fmt.Errorf("%w: table %d reaches %s, table %d starts at %s", ErrTableOrder, prevIndex, quote(prevHi), i, quote(lo))
				return l
			}
		}
		if hasPoints {
			l.points = append(l.points, pointTable{r: r, smallest: p.SmallestKey, largest: p.LargestKey})
			prevHi, prevExcl = p.LargestKey, false
		}
		if hasSpans {
			l.spans = append(l.spans, spanTable{r: r, start: p.SmallestSpanKey, end: p.LargestSpanKey})
			if !hasPoints || bytes.Compare(p.LargestSpanKey, p.LargestKey) > 0 {
				prevHi, prevExcl = p.LargestSpanKey, true
			}
		}
		prevIndex = i
	}
	return l
}

// quote renders a key for messages: Go-quoted, cut after 100 bytes.
func quote(k []byte) string {
	const max = 100
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// NewIter returns an iterator over the tables' entries; see Level.
func (l *tablesLevel) NewIter(o *reader.IterOptions) LevelIterator { return l.newIter(o) }

func (l *tablesLevel) newIter(o *reader.IterOptions) *tablesIter {
	t := &tablesIter{l: l, cur: -1, err: l.err, its: make([]*reader.Iterator, len(l.points)), gens: make([]uint32, len(l.points))}
	if o != nil {
		t.SetBounds(o.LowerBound, o.UpperBound)
	}
	return t
}

// NewSpanIter returns an iterator over the tables' span fragments, nil
// when none has spans; see Level.
func (l *tablesLevel) NewSpanIter() SpanIterator {
	if len(l.spans) == 0 && l.err == nil {
		return nil
	}
	return l.newSpanIter()
}

func (l *tablesLevel) newSpanIter() *tablesSpanIter {
	return &tablesSpanIter{l: l, pos: -1, err: l.err, its: make([]*reader.SpanIterator, len(l.spans))}
}

// Get looks key up in the one table whose key range holds it.
func (l *tablesLevel) Get(key []byte) ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	i := sort.Search(len(l.points), func(i int) bool { return bytes.Compare(l.points[i].largest, key) >= 0 })
	if i == len(l.points) || bytes.Compare(key, l.points[i].smallest) < 0 {
		return nil, reader.ErrNotFound
	}
	return l.points[i].r.Get(key)
}

// SpanAt returns the fragment covering key, from the one table whose
// spans' range holds it.
func (l *tablesLevel) SpanAt(key []byte) (reader.Span, error) {
	if l.err != nil {
		return reader.Span{}, l.err
	}
	i := sort.Search(len(l.spans), func(i int) bool { return bytes.Compare(l.spans[i].end, key) > 0 })
	if i == len(l.spans) || bytes.Compare(key, l.spans[i].start) < 0 {
		return reader.Span{}, reader.ErrNotFound
	}
	return l.spans[i].r.SpanAt(key)
}

// tablesIter is the LevelIterator of a tablesLevel: one
// *reader.Iterator per table, made when a move first reaches the table.
type tablesIter struct {
	l    *tablesLevel
	its  []*reader.Iterator // by index in l.points; nil until reached
	gens []uint32           // the bounds generation each of its has
	gen  uint32             // bumped by SetBounds
	open int                // non-nil its
	cur  int                // the table it is on; -1 for none
	it   *reader.Iterator   // its[cur]
	ok   bool               // positioned on an entry

	lower, upper       []byte // nil: unbounded; else copies in the bufs
	lowerBuf, upperBuf []byte
	inPrefix           bool
	prefix             []byte // SeekPrefixGE's or SeekPrefixLT's, copied
	end                []byte // scratch: a key above a table's keys
	err                error
	closed             bool
}

// maxOpenTables bounds the table iterators a tablesIter keeps open, so
// that a scan or compaction over a level of many tables holds a few
// tables' index blocks and buffers, not all of them.
const maxOpenTables = 4

// table returns table i's iterator, with the current bounds.
func (t *tablesIter) table(i int) *reader.Iterator {
	it := t.its[i]
	if it == nil {
		if t.open == maxOpenTables {
			t.closeFarthest(i)
		}
		it = t.l.points[i].r.NewIter(&reader.IterOptions{LowerBound: t.lower, UpperBound: t.upper})
		t.its[i], t.gens[i] = it, t.gen
		t.open++
	} else if t.gens[i] != t.gen {
		it.SetBounds(t.lower, t.upper)
		t.gens[i] = t.gen
	}
	t.cur, t.it = i, it
	return it
}

// closeFarthest closes the open table iterator farthest from table i
// (the table left longest ago, on a scan), keeping its error.
func (t *tablesIter) closeFarthest(i int) {
	far, dist := -1, -1
	for j, it := range t.its {
		if it != nil && max(j-i, i-j) > dist {
			far, dist = j, max(j-i, i-j)
		}
	}
	if err := t.its[far].Close(); err != nil && t.err == nil {
		t.err = err
	}
	t.its[far] = nil
	t.open--
}

// fail records the error of the current table's iterator, if any, and
// returns false.
func (t *tablesIter) fail() bool {
	t.ok = false
	if t.it != nil && t.err == nil {
		t.err = t.it.Err()
	}
	return false
}

func (t *tablesIter) usable() bool { return t.err == nil && !t.closed }

// belowUpper reports whether table i may hold keys below the upper bound.
func (t *tablesIter) belowUpper(i int) bool {
	return t.upper == nil || bytes.Compare(t.l.points[i].smallest, t.upper) < 0
}

// aboveLower reports whether table i may hold keys at or above the
// lower bound.
func (t *tablesIter) aboveLower(i int) bool {
	return t.lower == nil || bytes.Compare(t.l.points[i].largest, t.lower) >= 0
}

// firstFrom positions on the first entry of tables i, i+1, ...
func (t *tablesIter) firstFrom(i int) bool {
	for ; i < len(t.l.points) && t.belowUpper(i); i++ {
		if t.table(i).First() {
			t.ok = true
			return true
		}
		if t.it.Err() != nil {
			return t.fail()
		}
	}
	t.ok = false
	return false
}

// lastFrom positions on the last entry of tables i, i-1, ...
func (t *tablesIter) lastFrom(i int) bool {
	for ; i >= 0 && t.aboveLower(i); i-- {
		if t.table(i).Last() {
			t.ok = true
			return true
		}
		if t.it.Err() != nil {
			return t.fail()
		}
	}
	t.ok = false
	return false
}

// geTable is the first table whose largest key is >= key.
func (t *tablesIter) geTable(key []byte) int {
	p := t.l.points
	return sort.Search(len(p), func(i int) bool { return bytes.Compare(p[i].largest, key) >= 0 })
}

// ltTable is the last table whose smallest key is < key; -1 for none.
func (t *tablesIter) ltTable(key []byte) int {
	p := t.l.points
	return sort.Search(len(p), func(i int) bool { return bytes.Compare(p[i].smallest, key) >= 0 }) - 1
}

func (t *tablesIter) First() bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	i := 0
	if t.lower != nil {
		i = t.geTable(t.lower)
	}
	return t.firstFrom(i)
}

func (t *tablesIter) Last() bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	i := len(t.l.points) - 1
	if t.upper != nil {
		i = t.ltTable(t.upper)
	}
	return t.lastFrom(i)
}

func (t *tablesIter) SeekGE(key []byte) bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	if t.lower != nil && bytes.Compare(key, t.lower) < 0 {
		key = t.lower
	}
	i := t.geTable(key)
	if i == len(t.l.points) || !t.belowUpper(i) {
		t.ok = false
		return false
	}
	if t.table(i).SeekGE(key) {
		t.ok = true
		return true
	}
	if t.it.Err() != nil {
		return t.fail()
	}
	return t.firstFrom(i + 1)
}

func (t *tablesIter) SeekLT(key []byte) bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	if t.upper != nil && bytes.Compare(key, t.upper) > 0 {
		key = t.upper
	}
	i := t.ltTable(key)
	if i < 0 || !t.aboveLower(i) {
		t.ok = false
		return false
	}
	if t.table(i).SeekLT(key) {
		t.ok = true
		return true
	}
	if t.it.Err() != nil {
		return t.fail()
	}
	return t.lastFrom(i - 1)
}

func (t *tablesIter) SeekPrefixGE(prefix, key []byte) bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	from := key
	if bytes.Compare(from, prefix) < 0 {
		from = prefix
	}
	if t.lower != nil && bytes.Compare(from, t.lower) < 0 {
		from = t.lower
	}
	// The first table with a key >= from holds the prefix's first such
	// key if any table does: a key of it >= from without the prefix has
	// a greater prefix, and so have all the later tables' keys.
	i := t.geTable(from)
	if i == len(t.l.points) || !t.belowUpper(i) {
		t.ok = false
		return false
	}
	t.prefix = append(t.prefix[:0], prefix...)
	t.ok = t.table(i).SeekPrefixGE(t.prefix, key)
	t.inPrefix = t.ok
	if !t.ok {
		return t.fail()
	}
	return true
}

func (t *tablesIter) SeekPrefixLT(prefix, key []byte) bool {
	t.inPrefix = false
	if !t.usable() {
		return false
	}
	if t.upper != nil && bytes.Compare(key, t.upper) > 0 {
		key = t.upper
	}
	t.prefix = append(t.prefix[:0], prefix...)
	// A key above the prefix's keys without the prefix: look from the
	// tables that may hold the prefix's last keys.
	from := key
	if !bytes.HasPrefix(key, prefix) {
		if end := prefixEnd(t.end[:0], prefix); end != nil && bytes.Compare(end, key) < 0 {
			t.end, from = end, end
		}
	}
	for i := t.ltTable(from); i >= 0 && t.aboveLower(i); i-- {
		if t.table(i).SeekPrefixLT(t.prefix, key) {
			t.ok, t.inPrefix = true, true
			return true
		}
		if t.it.Err() != nil {
			return t.fail()
		}
		if bytes.Compare(t.l.points[i].smallest, prefix) <= 0 {
			break // the earlier tables' keys are all below the prefix's
		}
	}
	t.ok = false
	return false
}

// prefixEnd appends to dst the least key above every key that starts
// with prefix; nil when there is none (prefix empty or all 0xff).
func prefixEnd(dst, prefix []byte) []byte {
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xff {
		n--
	}
	if n == 0 {
		return nil
	}
	dst = append(dst, prefix[:n]...)
	dst[n-1]++
	return dst
}

func (t *tablesIter) Next() bool {
	if !t.ok {
		return false
	}
	if t.it.Next() {
		return true
	}
	if t.it.Err() != nil {
		return t.fail()
	}
	i := t.cur + 1
	if !t.inPrefix {
		return t.firstFrom(i)
	}
	// The prefix's keys may go on in the next table.
	if i < len(t.l.points) && t.belowUpper(i) && t.table(i).SeekPrefixGE(t.prefix, t.prefix) {
		return true
	}
	return t.fail()
}

func (t *tablesIter) Prev() bool {
	if !t.ok {
		return false
	}
	if t.it.Prev() {
		return true
	}
	if t.it.Err() != nil {
		return t.fail()
	}
	i := t.cur - 1
	if !t.inPrefix {
		return t.lastFrom(i)
	}
	if i >= 0 && t.aboveLower(i) {
		t.end = append(append(t.end[:0], t.l.points[i].largest...), 0) // above the table's keys
		if t.table(i).SeekPrefixLT(t.prefix, t.end) {
			return true
		}
	}
	return t.fail()
}

func (t *tablesIter) Key() []byte {
	if !t.ok {
		return nil
	}
	return t.it.Key()
}

func (t *tablesIter) Value() []byte {
	if !t.ok {
		return nil
	}
	return t.it.Value()
}

func (t *tablesIter) SetBounds(lower, upper []byte) {
	t.lower = setBound(&t.lowerBuf, lower)
	t.upper = setBound(&t.upperBuf, upper)
	t.gen++
	t.ok, t.inPrefix = false, false
}

// setBound copies b into *buf, reused: nil for nil (no bound), an empty,
// non-nil slice for an empty b.
func setBound(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	*buf = append((*buf)[:0], b...)
	if *buf == nil {
		*buf = []byte{}
	}
	return *buf
}

func (t *tablesIter) Err() error { return t.err }

func (t *tablesIter) Close() error {
	if t.closed {
		return t.err
	}
	t.closed, t.ok = true, false
	for i, it := range t.its {
		if it == nil {
			continue
		}
		if err := it.Close(); err != nil && t.err == nil {
			t.err = err
		}
		t.its[i] = nil
	}
	t.it, t.open = nil, 0
	return t.err
}

// tablesSpanIter is the SpanIterator of a tablesLevel: one
// *reader.SpanIterator per table with spans, made when first reached.
// pos is the table it is on, -1 before the first fragment and len(spans)
// past the last (where Next and Prev step from, as reader.SpanIterator's
// do).
type tablesSpanIter struct {
	l      *tablesLevel
	its    []*reader.SpanIterator
	pos    int
	ok     bool
	err    error
	closed bool
}

func (s *tablesSpanIter) table(i int) *reader.SpanIterator {
	it := s.its[i]
	if it == nil {
		it = s.l.spans[i].r.NewSpanIterator()
		s.its[i] = it
	}
	s.pos = i
	return it
}

// settle records the outcome of a move of table pos's iterator.
func (s *tablesSpanIter) settle(ok bool) bool {
	s.ok = ok
	if !ok && s.err == nil {
		if it := s.its[s.pos]; it != nil {
			s.err = it.Err()
		}
	}
	return ok
}

func (s *tablesSpanIter) usable() bool { return s.err == nil && !s.closed }

func (s *tablesSpanIter) First() bool {
	if !s.usable() || len(s.l.spans) == 0 {
		s.ok = false
		return false
	}
	return s.settle(s.table(0).First())
}

func (s *tablesSpanIter) Last() bool {
	if !s.usable() || len(s.l.spans) == 0 {
		s.ok = false
		return false
	}
	return s.settle(s.table(len(s.l.spans) - 1).Last())
}

func (s *tablesSpanIter) SeekGE(key []byte) bool {
	if !s.usable() {
		return false
	}
	sp := s.l.spans
	i := sort.Search(len(sp), func(i int) bool { return bytes.Compare(sp[i].end, key) > 0 })
	if i == len(sp) {
		s.pos, s.ok = len(sp), false
		return false
	}
	return s.settle(s.table(i).SeekGE(key))
}

func (s *tablesSpanIter) SeekLT(key []byte) bool {
	if !s.usable() {
		return false
	}
	sp := s.l.spans
	i := sort.Search(len(sp), func(i int) bool { return bytes.Compare(sp[i].start, key) >= 0 }) - 1
	if i < 0 {
		s.pos, s.ok = -1, false
		return false
	}
	return s.settle(s.table(i).SeekLT(key))
}

func (s *tablesSpanIter) Next() bool {
	if !s.usable() {
		return false
	}
	switch {
	case s.pos >= len(s.l.spans):
		return false
	case s.pos < 0:
		return s.First()
	case !s.ok:
		// Before the table's first fragment (a SeekLT below it).
		return s.settle(s.its[s.pos].Next())
	}
	if s.its[s.pos].Next() {
		return true
	}
	if err := s.its[s.pos].Err(); err != nil {
		return s.settle(false)
	}
	if s.pos+1 == len(s.l.spans) {
		s.pos, s.ok = len(s.l.spans), false
		return false
	}
	return s.settle(s.table(s.pos + 1).First())
}

func (s *tablesSpanIter) Prev() bool {
	if !s.usable() {
		return false
	}
	switch {
	case s.pos < 0:
		return false
	case s.pos >= len(s.l.spans):
		return s.Last()
	case !s.ok:
		return s.settle(s.its[s.pos].Prev())
	}
	if s.its[s.pos].Prev() {
		return true
	}
	if err := s.its[s.pos].Err(); err != nil {
		return s.settle(false)
	}
	if s.pos == 0 {
		s.pos, s.ok = -1, false
		return false
	}
	return s.settle(s.table(s.pos - 1).Last())
}

func (s *tablesSpanIter) Span() reader.Span {
	if !s.ok {
		return reader.Span{}
	}
	return s.its[s.pos].Span()
}

func (s *tablesSpanIter) Err() error { return s.err }

func (s *tablesSpanIter) Close() error {
	if s.closed {
		return s.err
	}
	s.closed, s.ok = true, false
	for i, it := range s.its {
		if it == nil {
			continue
		}
		if err := it.Close(); err != nil && s.err == nil {
			s.err = err
		}
		s.its[i] = nil
	}
	return s.err
}
