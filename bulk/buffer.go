package bulk

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/sstkit/sstable/internal/codec"
)

// entryOverhead is what each entry held in memory costs besides its key and
// value bytes: its index record.
const entryOverhead = 24

// ref locates one in-memory entry: its key at chunks[chunk][off:], or at
// bigs[chunk&^bigChunk][0:] when chunk has the bigChunk bit, followed by its
// value.
type ref struct {
	prefix uint64 // the key's first 8 bytes, big-endian, zero-padded
	chunk  uint32
	off    uint32
	klen   uint32
	vlen   uint32
}

const bigChunk = 1 << 31

// Add adds one entry. Keys may come in any order; the writer copies both
// slices before it returns. It returns an error after Finish (ErrFinished)
// or Abort (ErrAborted), for a key or value of 4 GiB or more, or when a
// spill fails (the writer has then cleaned up and is finished). A duplicate
// key is reported by Finish, or by the Add whose spill finds it.
func (w *Writer) Add(key, value []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if len(key) > math.MaxUint32 || len(value) > math.MaxUint32 || len(key)+len(value) > math.MaxUint32 {
		return fmt.Errorf("bulk: entry of %d key and %d value bytes too large (limit 4 GiB)", len(key), len(value))
	}
	n := len(key) + len(value)
	var r ref
	if n > w.chunkSize/4 {
		// A large entry gets an allocation of its own, dropped at the next
		// spill.
		c := make([]byte, 0, n)
		w.bigs = append(w.bigs, append(append(c, key...), value...))
		r.chunk = bigChunk | uint32(len(w.bigs)-1)
	} else {
		if w.cur >= len(w.chunks) || len(w.chunks[w.cur])+n > cap(w.chunks[w.cur]) {
			w.nextChunk()
		}
		c := w.chunks[w.cur]
		r.chunk, r.off = uint32(w.cur), uint32(len(c))
		w.chunks[w.cur] = append(append(c, key...), value...)
	}
	r.klen, r.vlen = uint32(len(key)), uint32(len(value))
	r.prefix = codec.KeyPrefix(key)
	w.refs = append(w.refs, r)
	w.used += int64(n) + entryOverhead
	w.entries.Add(1)
	w.bytes.Add(int64(n))
	if w.used >= w.budget {
		if err := w.spill(); err != nil {
			w.fail()
			return err
		}
	}
	return nil
}

// nextChunk makes w.cur a chunk with room for a small entry: the next
// reusable chunk of chunkSize bytes, or a new one.
func (w *Writer) nextChunk() {
	if w.cur++; w.cur < len(w.chunks) {
		return
	}
	w.chunks = append(w.chunks, make([]byte, 0, w.chunkSize))
	w.cur = len(w.chunks) - 1
}

func (w *Writer) entry(r ref) []byte {
	if r.chunk&bigChunk != 0 {
		return w.bigs[r.chunk&^bigChunk]
	}
	return w.chunks[r.chunk]
}

func (w *Writer) key(r ref) []byte {
	c := w.entry(r)
	return c[r.off : r.off+r.klen : r.off+r.klen]
}

func (w *Writer) value(r ref) []byte {
	c := w.entry(r)
	s := r.off + r.klen
	return c[s : s+r.vlen : s+r.vlen]
}

// sortRefs sorts the in-memory entries by key: by their 8-byte prefixes,
// then, for equal prefixes, by the whole keys.
func (w *Writer) sortRefs() {
	slices.SortFunc(w.refs, func(a, b ref) int {
		if a.prefix != b.prefix {
			if a.prefix < b.prefix {
				return -1
			}
			return 1
		}
		return bytes.Compare(w.key(a), w.key(b))
	})
}

// reset empties the in-memory buffer, keeping its chunks for reuse and
// dropping its large entries.
func (w *Writer) reset() {
	for i := range w.chunks {
		w.chunks[i] = w.chunks[i][:0]
	}
	w.cur = 0
	w.bigs = nil
	w.refs = w.refs[:0]
	w.used = 0
}

// release drops the in-memory buffer entirely.
func (w *Writer) release() {
	w.chunks, w.bigs, w.refs, w.used, w.cur = nil, nil, nil, 0, 0
}
