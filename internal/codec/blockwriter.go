package codec

import "encoding/binary"

// BlockWriter encodes sorted entries into the block layout described in
// the package documentation: prefix-compressed entries, a restart point
// every RestartInterval entries, then the restart array and its count.
// The zero value is ready to use with a restart interval of 16.
type BlockWriter struct {
	// RestartInterval is the number of entries between restart points;
	// values < 1 mean 16.
	RestartInterval int
	// WholeKeys stores every key whole (shared = 0), so that any entry
	// can be decoded from its own offset, as the hash index of format
	// Version2 requires. Restart points are still recorded every
	// RestartInterval entries.
	WholeKeys bool
	// ShareWithFirst prefix-compresses every entry against the block's
	// first key (entry 0) instead of the previous key: shared is the
	// length of the common prefix of the key and the first key. That is
	// never more than the previous key shares (keys are sorted), so the
	// block still decodes as any LevelDB block does, and any entry can
	// also be decoded from its own offset and the first key: the data
	// blocks of format Version4, whose hash index points into them.
	// Restart points are still stored whole. WholeKeys takes precedence.
	ShareWithFirst bool

	buf      []byte
	firstKey []byte
	restarts []uint32
	lastKey  []byte
	counter  int // entries since the last restart
	entries  int
}

// Add appends an entry and returns its byte offset in the block. Keys
// must be added in strictly increasing order; BlockWriter does not check
// this (the builder does).
func (w *BlockWriter) Add(key, value []byte) (offset int) {
	interval := w.RestartInterval
	if interval < 1 {
		interval = 16
	}
	shared, offset := 0, len(w.buf)
	if w.counter >= interval || w.entries == 0 {
		w.restarts = append(w.restarts, uint32(len(w.buf)))
		w.counter = 0
	} else if !w.WholeKeys {
		ref := w.lastKey
		if w.ShareWithFirst {
			ref = w.firstKey
		}
		n := min(len(key), len(ref))
		for shared < n && key[shared] == ref[shared] {
			shared++
		}
	}
	if w.entries == 0 && w.ShareWithFirst {
		w.firstKey = append(w.firstKey[:0], key...)
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key)-shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	w.buf = append(w.buf, key[shared:]...)
	w.buf = append(w.buf, value...)
	w.lastKey = append(w.lastKey[:0], key...)
	w.counter++
	w.entries++
	return offset
}

// Entries returns the number of entries added since the last Reset.
func (w *BlockWriter) Entries() int { return w.entries }

// EstimatedSize returns the size in bytes of the block Finish would return now.
func (w *BlockWriter) EstimatedSize() int { return len(w.buf) + 4*len(w.restarts) + 4 }

// Finish appends the restart array and count and returns the block
// contents. The returned slice is valid until the next Reset or Add.
func (w *BlockWriter) Finish() []byte {
	for _, r := range w.restarts {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r)
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(w.restarts)))
	return w.buf
}

// Reset empties the writer for a new block, keeping its buffers.
func (w *BlockWriter) Reset() {
	w.buf = w.buf[:0]
	w.restarts = w.restarts[:0]
	w.lastKey = w.lastKey[:0]
	w.counter = 0
	w.entries = 0
}
