package merge

import (
	"bytes"
	"sort"

	"github.com/sstkit/sstable/reader"
)

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
