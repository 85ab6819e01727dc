package merge

import "bytes"

// Iterator reads a stack of levels as one sorted view: each key once,
// with the newest level's value, without deleted keys (see the package
// overview for the rules). Its methods are those of *reader.Iterator,
// with the same meaning: positioning methods return whether the iterator
// is on an entry; a move from an unpositioned or exhausted iterator
// (Next, Prev) returns false, and a seek (First, Last, SeekGE, SeekLT,
// SeekPrefixGE, SeekPrefixLT) positions it again. It is not safe for
// concurrent use: use one per goroutine; many may read the same levels.
//
// Key and Value are valid until the next move, SetBounds or Close, and
// may alias a table's memory mapping: copy them to keep them. Moves
// allocate nothing once the iterator has reached the tables it reads
// (each level's iterator is made at NewIterator, each table's on first
// reach).
type Iterator struct {
	children []child
	heap     []*child // the positioned children, a min-heap (forward) or max-heap (backward) by key, ties to the newest level
	dir      int8     // 1 forward, -1 backward: the heap's order
	cur      *child   // the child whose entry is shown; nil when not positioned

	// runner is the heap's second in order (the lesser of heap[1] and
	// heap[2]), and alone reports that the top's key is strictly before
	// it: the top alone holds its key. Both hold while the heap changes
	// only by the top's moves that keep it at the top (stepTop); every
	// other change clears them (down, build, pop).
	runner *child
	alone  bool

	dels       rangeDels
	isDeletion func([]byte) bool
	resolve    func(key, value []byte) ([]byte, error)
	resolved   []byte // the current entry's value, from resolve
	withDels   bool   // Compact's view: show the newest deletions not range-deleted too

	lower, upper       []byte // copies in the bufs; nil: unbounded
	lowerBuf, upperBuf []byte
	inPrefix           bool
	prefix             []byte
	saved              []byte // a copy of the current key, for the moves that leave it
	err                error
	closed             bool
}

// NewIterator returns an unpositioned iterator over levels, levels[0]
// the newest, under o (nil: no deletions, every span a range deletion,
// no bounds). It makes each level's point and span iterators at once; a
// level that fails to open (Tables out of order, a closed reader) makes
// every move return false and Err return its error. Close the iterator
// when done: it holds the levels' tables open.
func NewIterator(levels []Level, o *Options) *Iterator {
	it := &Iterator{children: make([]child, len(levels)), heap: make([]*child, 0, len(levels))}
	io := o.iterOptions()
	if io != nil {
		it.lower = setBound(&it.lowerBuf, io.LowerBound)
		it.upper = setBound(&it.upperBuf, io.UpperBound)
	}
	if o != nil {
		it.isDeletion, it.resolve = o.IsDeletion, o.Resolve
	}
	it.dels = rangeDels{opts: o, newest: len(levels)}
	for i, l := range levels {
		c := &it.children[i]
		c.level = i
		if tl, ok := l.(*tablesLevel); ok {
			c.t = tl.newIter(io)
		} else {
			c.x = l.NewIter(io)
		}
		if err := c.err(); err != nil && it.err == nil {
			it.err = err
		}
		if sl, ok := l.(*tablesLevel); ok && len(sl.spans) == 0 {
			continue
		}
		if s := l.NewSpanIter(); s != nil {
			it.dels.levels = append(it.dels.levels, spanLevel{level: i, it: s})
			if i < it.dels.newest {
				it.dels.newest = i
			}
			if err := s.Err(); err != nil && it.err == nil {
				it.err = err
			}
		}
	}
	return it
}

// less orders the heap: by key in the iterator's direction, ties to the
// newest level.
func (it *Iterator) less(a, b *child) bool {
	c := compareKeys(a, b)
	if c == 0 {
		return a.level < b.level
	}
	return c < 0 == (it.dir > 0)
}

func (it *Iterator) down(i int) {
	it.runner, it.alone = nil, false
	h := it.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && it.less(h[r], h[l]) {
			j = r
		}
		if !it.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// build makes a heap of the positioned children.
func (it *Iterator) build(dir int8) {
	it.runner, it.alone = nil, false
	it.dir = dir
	it.heap = it.heap[:0]
	for i := range it.children {
		if c := &it.children[i]; c.key != nil {
			it.heap = append(it.heap, c)
		}
	}
	for i := len(it.heap)/2 - 1; i >= 0; i-- {
		it.down(i)
	}
}

// pop removes the heap's top.
func (it *Iterator) pop() {
	it.runner, it.alone = nil, false
	n := len(it.heap) - 1
	it.heap[0] = it.heap[n]
	it.heap = it.heap[:n]
	it.down(0)
}

// childFailed records a child's error after a move returned false.
func (it *Iterator) childFailed(c *child) bool {
	if err := c.err(); err != nil {
		it.err = err
		return true
	}
	return false
}

// start positions every child with move, builds the heap in direction
// dir and settles on the first visible entry.
func (it *Iterator) start(dir int8, move func(c *child) bool) bool {
	it.cur = nil
	if !it.usable() {
		return false
	}
	for i := range it.children {
		c := &it.children[i]
		if !move(c) && it.childFailed(c) {
			return it.stop()
		}
	}
	it.build(dir)
	return it.settle()
}

func (it *Iterator) usable() bool { return it.err == nil && !it.closed }

// stop leaves the iterator unpositioned and returns false.
func (it *Iterator) stop() bool {
	it.cur = nil
	it.inPrefix = false
	return false
}

// settle moves past the entries at the heap's top that are not to be
// shown, and positions on the first one that is.
func (it *Iterator) settle() bool {
	for len(it.heap) > 0 {
		top := it.heap[0]
		if top.level <= it.dels.newest && it.resolve == nil && (it.isDeletion == nil || it.withDels || !it.isDeletion(top.value())) {
			it.cur = top // visible's common case, without the call
			return true
		}
		show, err := it.visible(top)
		if err != nil {
			it.err = err
			return it.stop()
		}
		if show {
			it.cur = top
			return true
		}
		if !it.skip() {
			return it.stop()
		}
	}
	return it.stop()
}

// visible reports whether the top child's entry, the newest at its key,
// is shown: not a deletion (unless withDels), not under a newer level's
// range deletion.
func (it *Iterator) visible(c *child) (bool, error) {
	if it.isDeletion != nil && !it.withDels && it.isDeletion(c.value()) {
		return false, nil
	}
	if c.level > it.dels.newest {
		if covered, err := it.dels.covered(c.key, c.level); covered || err != nil {
			return false, err
		}
	}
	if it.resolve != nil {
		v, err := it.resolve(c.key, c.value())
		if err != nil {
			return false, err
		}
		it.resolved = v
	}
	return true, nil
}

// skip moves every child at the top's key one step on, in the heap's
// direction; false on error.
func (it *Iterator) skip() bool {
	if len(it.heap) == 1 || it.alone || it.before(it.heap[0], it.second()) {
		return it.stepTop()
	}
	it.saved = append(it.saved[:0], it.heap[0].key...)
	for len(it.heap) > 0 && bytes.Equal(it.heap[0].key, it.saved) {
		c := it.heap[0]
		if c.step(it.dir) {
			it.down(0)
			continue
		}
		if it.childFailed(c) {
			return false
		}
		it.pop()
	}
	return true
}

// second returns the heap's second child in order (the heap has two or
// more), the one the top is compared with after its moves.
func (it *Iterator) second() *child {
	if it.runner == nil {
		h := it.heap
		r := h[1]
		if len(h) > 2 && it.less(h[2], r) {
			r = h[2]
		}
		it.runner = r
	}
	return it.runner
}

// before reports whether child a's key comes strictly before child b's
// in the heap's direction.
func (it *Iterator) before(a, b *child) bool {
	c := compareKeys(a, b)
	return c != 0 && c < 0 == (it.dir > 0)
}

// stepTop moves the top child, alone at its key, one step on. In a scan
// the top mostly stays the top (runs of keys from one level): one
// comparison with the second child says so, where skip's general path
// copies the key, compares it again after the move, and sifts the heap
// with two comparisons. It returns false on error.
func (it *Iterator) stepTop() bool {
	c := it.heap[0]
	var ok bool // c.step, its move called directly: a call less per entry
	if it.dir > 0 {
		ok = c.next()
	} else {
		ok = c.prev()
	}
	if !ok {
		if it.childFailed(c) {
			return false
		}
		it.pop()
		return true
	}
	if len(it.heap) == 1 {
		return true
	}
	if it.before(c, it.second()) {
		it.alone = true
		return true
	}
	it.down(0)
	return true
}

// First moves to the first key of the view (at or above LowerBound).
func (it *Iterator) First() bool {
	it.inPrefix = false
	return it.start(1, (*child).first)
}

// Last moves to the last key of the view (below UpperBound).
func (it *Iterator) Last() bool {
	it.inPrefix = false
	return it.start(-1, (*child).last)
}

// SeekGE moves to the first key of the view >= key (and within the
// bounds).
func (it *Iterator) SeekGE(key []byte) bool {
	it.inPrefix = false
	return it.start(1, func(c *child) bool { return c.seekGE(key) })
}

// SeekLT moves to the last key of the view < key (and within the
// bounds).
func (it *Iterator) SeekLT(key []byte) bool {
	it.inPrefix = false
	return it.start(-1, func(c *child) bool { return c.seekLT(key) })
}

// SeekPrefixGE moves to the first key of the view >= key whose prefix is
// prefix, as reader.Iterator.SeekPrefixGE does in each level: a table
// whose filter rules the prefix out (built with a splitter) reads no data
// block. When it returns true the iterator is in prefix iteration mode:
// Next and Prev return false past the prefix's keys. The iterator copies
// prefix.
func (it *Iterator) SeekPrefixGE(prefix, key []byte) bool {
	it.prefix = append(it.prefix[:0], prefix...)
	ok := it.start(1, func(c *child) bool { return c.seekPrefixGE(it.prefix, key) })
	it.inPrefix = ok
	return ok
}

// SeekPrefixLT moves to the last key of the view < key whose prefix is
// prefix, as reader.Iterator.SeekPrefixLT does in each level (with
// suffixes that sort by version, the newest version below a bound), and
// starts prefix iteration mode when it returns true.
func (it *Iterator) SeekPrefixLT(prefix, key []byte) bool {
	it.prefix = append(it.prefix[:0], prefix...)
	ok := it.start(-1, func(c *child) bool { return c.seekPrefixLT(it.prefix, key) })
	it.inPrefix = ok
	return ok
}

// Next moves to the view's next key; false past the last (in prefix
// iteration mode, past the prefix's last key) or on error.
func (it *Iterator) Next() bool {
	if it.cur == nil || !it.usable() {
		return false
	}
	if it.dir < 0 {
		if !it.turn(1) {
			return it.stop()
		}
	} else if !it.skip() {
		return it.stop()
	}
	return it.settle()
}

// Prev moves to the view's previous key; false before the first (in
// prefix iteration mode, before the prefix's first key) or on error.
func (it *Iterator) Prev() bool {
	if it.cur == nil || !it.usable() {
		return false
	}
	if it.dir > 0 {
		if !it.turn(-1) {
			return it.stop()
		}
	} else if !it.skip() {
		return it.stop()
	}
	return it.settle()
}

// turn repositions every child on the side of the current key that dir
// faces, for a Next after Prev or a Prev after Next, and rebuilds the
// heap; the caller then settles (a turn leaves the current key behind,
// so it skips nothing). It returns false on error.
func (it *Iterator) turn(dir int8) bool {
	it.saved = append(it.saved[:0], it.cur.key...)
	k := it.saved
	for i := range it.children {
		c := &it.children[i]
		var ok bool
		switch {
		case dir < 0 && it.inPrefix:
			ok = c.seekPrefixLT(it.prefix, k)
		case dir < 0:
			ok = c.seekLT(k)
		case it.inPrefix:
			ok = c.seekPrefixGE(it.prefix, k)
		default:
			ok = c.seekGE(k)
		}
		if ok && dir > 0 && bytes.Equal(c.key, k) {
			ok = c.next()
		}
		if !ok && it.childFailed(c) {
			return false
		}
	}
	it.build(dir)
	return true
}

// Key returns the current key, valid until the next move; nil when not
// positioned.
func (it *Iterator) Key() []byte {
	if it.cur == nil {
		return nil
	}
	return it.cur.key
}

// Value returns the current value, valid until the next move, possibly
// aliasing a table's mapping; nil when not positioned.
func (it *Iterator) Value() []byte {
	if it.cur == nil {
		return nil
	}
	if it.resolve != nil {
		return it.resolved
	}
	return it.cur.value()
}

// Valid reports whether the iterator is positioned on an entry.
func (it *Iterator) Valid() bool { return it.cur != nil }

// SetBounds changes the bounds to lower (inclusive) and upper
// (exclusive), nil meaning unbounded, as reader.Iterator.SetBounds does:
// the iterator is left unpositioned and out of prefix iteration mode;
// the bounds are copied, into buffers reused from call to call.
func (it *Iterator) SetBounds(lower, upper []byte) {
	it.lower = setBound(&it.lowerBuf, lower)
	it.upper = setBound(&it.upperBuf, upper)
	for i := range it.children {
		it.children[i].setBounds(it.lower, it.upper)
	}
	it.heap = it.heap[:0]
	it.runner, it.alone = nil, false
	it.stop()
}

// Err returns the error that stopped the iterator, if any: a level's
// (a table's corruption or failed read, named as the reader names it; a
// Tables level out of order, wrapping ErrTableOrder); the same error on
// every call, and from Close.
func (it *Iterator) Err() error { return it.err }

// Close releases every level's iterators, and with them their hold on
// the tables, and returns the iteration error, if any, or the first
// error a level's iterator returned on closing. Closing twice is
// harmless. After Close every move returns false.
func (it *Iterator) Close() error {
	if it.closed {
		return it.err
	}
	it.closed = true
	it.stop()
	for i := range it.children {
		if err := it.children[i].close(); err != nil && it.err == nil {
			it.err = err
		}
	}
	if err := it.dels.close(); err != nil && it.err == nil {
		it.err = err
	}
	it.heap = nil
	return it.err
}
