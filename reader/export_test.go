package reader

// Test hooks into the reader's decoded-block arena (see arena.go).

// ArenaInUse reports whether r keeps the decoded data blocks of its
// (compressed, version 2) table in an arena.
func ArenaInUse(r *Reader) bool { return r.arena.Load() != nil }

// ArenaFilled returns the number of data blocks decoded into r's arena so
// far, or -1 if r has no arena.
func ArenaFilled(r *Reader) int {
	a := r.arena.Load()
	if a == nil {
		return -1
	}
	n := 0
	for i := range a.state {
		if a.state[i].Load() != 0 {
			n++
		}
	}
	return n
}

// ArenaLen returns the size of r's arena in bytes, or -1 if r has none.
func ArenaLen(r *Reader) int {
	if a := r.arena.Load(); a != nil {
		return len(a.mem)
	}
	return -1
}

// CachedBytes returns the bytes charged to r's block cache (0 without
// one).
func CachedBytes(r *Reader) int64 {
	if r.cache == nil {
		return 0
	}
	r.cache.mu.Lock()
	defer r.cache.mu.Unlock()
	return r.cache.used
}

// CachedBlock reports whether data block i is in r's block cache.
func CachedBlock(r *Reader, i int) bool {
	if r.cache == nil || i >= r.cache.blocks() {
		return false
	}
	return r.cache.data[i].Load() != nil
}
