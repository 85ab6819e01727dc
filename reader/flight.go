package reader

import "sync"

// flights tracks the blocks being read and decoded into the cache, so that
// goroutines missing the same block at once wait for one read and one
// decode, as Pebble's block cache makes concurrent readers of a block wait
// for the first. Only misses come here; a hit never takes its lock.
type flights struct {
	mu sync.Mutex
	m  map[int]*flight // block (or partition) number -> its fill in progress
}

// flight is one fill in progress. Flights are pooled, so a miss allocates
// nothing once the pool and the map have grown.
type flight struct {
	done    sync.WaitGroup
	waiters int // under flights.mu
}

var flightPool = sync.Pool{New: func() any { return new(flight) }}

// join reports whether the caller leads the fill of block i. A leader
// must call land when the block is in the cache, or when it gave up; a
// follower must call wait, then look in the cache again (and, if the
// block is not there, read it itself: the leader failed, or the cache
// could not take the block).
func (fs *flights) join(i int) (f *flight, lead bool) {
	fs.mu.Lock()
	if f = fs.m[i]; f != nil {
		f.waiters++
		fs.mu.Unlock()
		return f, false
	}
	if fs.m == nil {
		fs.m = make(map[int]*flight)
	}
	f = flightPool.Get().(*flight)
	f.done.Add(1)
	fs.m[i] = f
	fs.mu.Unlock()
	return f, true
}

// tryLead makes the caller the leader of block i's fill when no one is
// filling it, and returns nil otherwise, never waiting: a reader of
// several blocks at once (a window of partitions) leads those that are
// not in flight, so that misses of them wait for its read.
func (fs *flights) tryLead(i int) *flight {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m[i] != nil {
		return nil
	}
	if fs.m == nil {
		fs.m = make(map[int]*flight)
	}
	f := flightPool.Get().(*flight)
	f.done.Add(1)
	fs.m[i] = f
	return f
}

// land ends the leader's fill of block i and wakes its followers.
func (fs *flights) land(i int, f *flight) {
	fs.mu.Lock()
	delete(fs.m, i) // no one joins f from here on
	waiters := f.waiters
	fs.mu.Unlock()
	f.done.Done()
	if waiters == 0 {
		flightPool.Put(f)
	}
}

// wait waits for the fill f to land.
func (fs *flights) wait(f *flight) {
	f.done.Wait()
	fs.mu.Lock()
	f.waiters--
	last := f.waiters == 0
	fs.mu.Unlock()
	if last {
		flightPool.Put(f)
	}
}

// waiting returns the followers waiting for block i's fill, for tests.
func (fs *flights) waiting(i int) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[i]; f != nil {
		return f.waiters
	}
	return -1
}
