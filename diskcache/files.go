package diskcache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// readDisk copies chunk ci's bytes [lo, hi) into dst from its file, and
// reports whether it could: the file must exist and pass its checks. A
// file that fails them is dropped.
func (c *Cache) readDisk(r *objReader, ci, dataLen, lo, hi int64, dst []byte) bool {
	name := r.name(ci)
	for range 3 {
		c.mu.Lock()
		e := c.index[name]
		if e == nil || c.closed {
			c.mu.Unlock()
			return false
		}
		f, dataOff, crcs := e.f, e.dataOff, e.crcs
		c.mu.Unlock()
		kept := true
		if f == nil {
			var err error
			if f, err = os.Open(filepath.Join(c.dir, name)); err != nil {
				c.drop(e)
				return false
			}
			var ok bool
			if dataOff, crcs, ok = readHeader(f, r.key, r.size, ci, dataLen); !ok {
				f.Close()
				c.drop(e)
				return false
			}
			kept = c.keepOpen(e, f, dataOff, crcs)
		}
		ok, closed := readPages(f, dataOff, crcs, dataLen, lo, hi, dst)
		if !kept {
			f.Close()
		}
		if closed {
			continue // closed by an eviction or for MaxOpenFiles: look again
		}
		if !ok {
			c.drop(e)
			return false
		}
		e.ref.Store(true)
		return true
	}
	return false
}

// keepOpen keeps f, e's file with its checked header, open for later
// reads, closing the file kept open longest when MaxOpenFiles are, and
// reports whether it did: not if e's file is open already, or e is gone.
// A read in progress on a file closed here fails with os.ErrClosed
// (*os.File makes the close wait for it) and its reader looks again.
func (c *Cache) keepOpen(e *entry, f *os.File, dataOff int64, crcs []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || e.f != nil || c.index[e.name] != e {
		return false
	}
	e.f, e.dataOff, e.crcs = f, dataOff, crcs
	e.openElem = c.open.PushBack(e)
	for c.open.Len() > c.maxOpen {
		c.closeFile(c.open.Front().Value.(*entry))
	}
	return true
}

// closeFile closes e's kept file. c.mu is held.
func (c *Cache) closeFile(e *entry) {
	if e.f == nil {
		return
	}
	e.f.Close()
	c.open.Remove(e.openElem)
	e.f, e.crcs, e.openElem = nil, nil, nil
}

// drop removes e, whose file failed its check, from the index and the
// directory.
func (c *Cache) drop(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index[e.name] != e {
		return // dropped or evicted already
	}
	c.dropped.Add(1)
	c.remove(e)
}

// remove takes e out of the index and its file out of the directory; its
// charge is released unless the file could not be removed. c.mu is held.
func (c *Cache) remove(e *entry) {
	if c.hand == e.elem {
		c.hand = e.elem.Next()
	}
	c.clock.Remove(e.elem)
	delete(c.index, e.name)
	c.closeFile(e)
	if err := os.Remove(filepath.Join(c.dir, e.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
		c.used -= e.charge
	}
}

// evictOne removes one chunk by CLOCK and reports whether there was one.
// c.mu is held.
func (c *Cache) evictOne() bool {
	for range 2*c.clock.Len() + 1 {
		if c.clock.Len() == 0 {
			return false
		}
		if c.hand == nil {
			c.hand = c.clock.Front()
		}
		e := c.hand.Value.(*entry)
		if e.ref.Swap(false) {
			c.hand = c.hand.Next()
			continue
		}
		c.evictions.Add(1)
		c.remove(e)
		return true
	}
	return false
}

// store writes chunk ci of r, data, to a temporary file and renames it
// into place, after reserving its charge (evicting as need be). A chunk
// that does not fit or fails to be written is not cached.
func (c *Cache) store(r *objReader, ci int64, name string, data []byte) {
	file := encodeChunk(r.key, r.size, ci, data)
	charge := chargeOf(int64(len(file)))
	c.mu.Lock()
	ok := !c.closed && c.index[name] == nil
	for ok && c.used+charge > c.capacity {
		ok = c.evictOne()
	}
	if ok {
		c.used += charge
		c.writers.Add(1)
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	defer c.writers.Done()
	tmp, err := c.writeTemp(file)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		err = os.Rename(tmp, filepath.Join(c.dir, name))
	}
	if err != nil {
		if tmp != "" {
			os.Remove(tmp)
		}
		c.used -= charge
		c.writeErrors.Add(1)
		return
	}
	e := &entry{name: name, charge: charge}
	if c.hand != nil {
		e.elem = c.clock.InsertBefore(e, c.hand)
	} else {
		e.elem = c.clock.PushBack(e)
	}
	c.index[name] = e
}

// writeTemp writes file to a new temporary file in the directory and
// returns its path ("" if none was created).
func (c *Cache) writeTemp(file []byte) (string, error) {
	if c.writeFault != nil {
		if err := c.writeFault(); err != nil {
			return "", err
		}
	}
	f, err := os.CreateTemp(c.dir, tmpPref+"*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(file)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}
