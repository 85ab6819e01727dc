package codec

// EntryWalker steps through the entries of a block without assembling
// their keys: for each, its offset, how many key bytes it shares with the
// key before it, and its own key bytes. A summary of every entry (the
// side index package lsmtable builds for a cached block) needs no more,
// and walks a block several times faster than BlockIter's Next, which
// copies every key.
type EntryWalker struct {
	entries []byte // the contents up to the restart array
	next    int
	bad     bool
}

// NewEntryWalker walks the entries of contents, which end at entriesEnd
// (the restart array's offset: BlockIter.Layout).
func NewEntryWalker(contents []byte, entriesEnd int) EntryWalker {
	if entriesEnd < 0 || entriesEnd > len(contents) {
		return EntryWalker{bad: true}
	}
	return EntryWalker{entries: contents[:entriesEnd]}
}

// Next returns the next entry: its offset, the length of the key prefix
// it shares with the entry before it, and the rest of its key (aliasing
// the contents). ok is false at the end of the entries, and on a header
// that does not parse or overruns them (then Done is false).
func (w *EntryWalker) Next() (off, shared int, unshared []byte, ok bool) {
	if w.bad || w.next >= len(w.entries) {
		return 0, 0, nil, false
	}
	off = w.next
	s, u, v, p, fault := parseEntryHeader(w.entries, off)
	if fault != entryOK {
		w.bad = true
		return 0, 0, nil, false
	}
	w.next = p + int(u) + int(v)
	return off, int(s), w.entries[p : p+int(u) : p+int(u)], true
}

// Done reports whether the walk has reached the end of the entries with
// every header parsed.
func (w *EntryWalker) Done() bool { return !w.bad && w.next >= len(w.entries) }
