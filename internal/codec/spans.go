package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/sstkit/sstable/format"
)

// The span block of a Version5 table (format.Version5's doc, "Span
// block (version 5)"):
//
//	fragment record 0 | ... | fragment record n-1 | index entry 0 | ... | index entry n-1 | n u32LE
//
// where index entry i is fragment i's record offset (u32LE) and its start
// key's first 8 bytes, zero-padded (spanEntryLen bytes in all),
// and each record is
//
//	uvarint startLen | start | uvarint endLen | end | uvarint count | count × (uvarint valueLen | value)
//
// with every uvarint in its shortest form, so that a block has one
// encoding.

// spanEntryLen is the size of a span block index entry: a u32LE record
// offset and the start key's 8-byte zero-padded prefix.
const spanEntryLen = 12

// SpanBlockWriter encodes fragments into a span block. The zero value is
// ready to use.
type SpanBlockWriter struct {
	buf  []byte   // records so far
	offs []uint32 // record offsets
	pfx  []uint64 // start key prefixes
	err  bool     // the records passed 4 GiB
}

// Add appends a fragment [start, end) with its values, in the order given.
// Fragments must be added in increasing order, not overlapping, each with
// start < end and at least one value; the writer does not check.
func (w *SpanBlockWriter) Add(start, end []byte, values [][]byte) {
	if uint64(len(w.buf)) > math.MaxUint32 {
		w.err = true
		return
	}
	w.offs = append(w.offs, uint32(len(w.buf)))
	w.pfx = append(w.pfx, KeyPrefix(start))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(start)))
	w.buf = append(w.buf, start...)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(end)))
	w.buf = append(w.buf, end...)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(values)))
	for _, v := range values {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(v)))
		w.buf = append(w.buf, v...)
	}
}

// Len returns the number of fragments added.
func (w *SpanBlockWriter) Len() int { return len(w.offs) }

// Size returns the size the block would have if finished now, in bytes,
// trailer excluded.
func (w *SpanBlockWriter) Size() int { return len(w.buf) + spanEntryLen*len(w.offs) + 4 }

// Finish returns the block's contents; ok is false when it exceeds the
// 4 GiB the u32 offsets can address. The writer must not be used after.
func (w *SpanBlockWriter) Finish() (b []byte, ok bool) {
	if w.err || uint64(w.Size()) > math.MaxUint32 {
		return nil, false
	}
	b = w.buf
	for i, o := range w.offs {
		b = binary.LittleEndian.AppendUint32(b, o)
		b = binary.BigEndian.AppendUint64(b, w.pfx[i])
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(w.offs)))
	return b, true
}

// SpanBlock is a decoded, fully checked span block. Keys and values are
// slices of the block's bytes, read in place; Values holds one slice
// header per (fragment, value) pair, 24 bytes each, so that a fragment's
// value list is a sub-slice of it with no allocation.
type SpanBlock struct {
	b      []byte   // the block's contents
	offs   []byte   // the index entries, spanEntryLen bytes per fragment
	n      int      // fragments
	values [][]byte // every fragment's values, in fragment order
	vstart []uint32 // fragment i's values are values[vstart[i]:vstart[i+1]]
	sample []uint64 // the start key prefix of every spanSampleEvery-th fragment, contiguous
}

// spanSampleEvery spaces the sampled prefixes a search narrows its range
// with first: 8 bytes per 64 fragments (1.25 KiB for 10,000) stay in the
// CPU's L1 cache, where the index entries they stand for, 12 bytes each,
// do not.
const spanSampleEvery = 64

// DecodeSpanBlock checks the span block contents b (trailer removed)
// whose first byte is at file offset off, and returns it decoded. Every
// length and offset is checked against the block: errors wrap
// format.ErrCorrupt, as *format.CorruptError naming SectionSpans and the
// file offset of the bad bytes. It reads the block once, allocating the
// value table (24 bytes per value of every fragment) and 4 bytes per
// fragment.
func DecodeSpanBlock(b []byte, off int64) (*SpanBlock, error) {
	if len(b) < 4 {
		return nil, format.Corruptf(format.SectionSpans, off, "span block of %d bytes is too short for its fragment count", len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n == 0 {
		return nil, format.Corruptf(format.SectionSpans, off+int64(len(b))-4, "span block with no fragments")
	}
	if n > uint64(len(b)-4)/spanEntryLen {
		return nil, format.Corruptf(format.SectionSpans, off+int64(len(b))-4, "%d fragments do not fit in a %d-byte span block", n, len(b))
	}
	recEnd := len(b) - 4 - spanEntryLen*int(n)
	s := &SpanBlock{b: b[:recEnd], offs: b[recEnd : len(b)-4], n: int(n)}
	s.vstart = make([]uint32, 0, n+1)
	var prevEnd []byte
	total := 0
	pos := 0
	for i := 0; i < s.n; i++ {
		o := int(binary.LittleEndian.Uint32(s.offs[spanEntryLen*i:]))
		if o != pos {
			return nil, format.Corruptf(format.SectionSpans, off+int64(recEnd+spanEntryLen*i), "fragment %d at offset %d, the previous record ends at %d", i, o, pos)
		}
		start, end, rest, count, used, err := s.header(o, off)
		if err != nil {
			return nil, err
		}
		recOff := off + int64(o)
		if s.prefix(i) != KeyPrefix(start) {
			return nil, format.Corruptf(format.SectionSpans, off+int64(recEnd+spanEntryLen*i+4), "fragment %d: index entry's key prefix %016x, its start %q gives %016x", i, s.prefix(i), start, KeyPrefix(start))
		}
		switch {
		case bytes.Compare(start, end) >= 0:
			return nil, format.Corruptf(format.SectionSpans, recOff, "fragment %d: start %q is not before end %q", i, start, end)
		case i > 0 && bytes.Compare(prevEnd, start) > 0:
			return nil, format.Corruptf(format.SectionSpans, recOff, "fragment %d starts at %q, before the previous one's end %q", i, start, prevEnd)
		case count == 0:
			return nil, format.Corruptf(format.SectionSpans, recOff, "fragment %d has no values", i)
		case count > uint64(len(rest)):
			return nil, format.Corruptf(format.SectionSpans, recOff, "fragment %d claims %d values in %d bytes", i, count, len(rest))
		}
		s.vstart = append(s.vstart, uint32(total))
		p := o + used
		for j := uint64(0); j < count; j++ {
			l, m := canonUvarint(b[p:recEnd])
			if m <= 0 || l > uint64(recEnd-p-m) {
				return nil, format.Corruptf(format.SectionSpans, off+int64(p), "fragment %d value %d: bad length", i, j)
			}
			p += m + int(l)
		}
		total += int(count)
		if total > math.MaxUint32 {
			return nil, format.Corruptf(format.SectionSpans, recOff, "more than 2^32-1 values")
		}
		prevEnd = end
		pos = p
	}
	if pos != recEnd {
		return nil, format.Corruptf(format.SectionSpans, off+int64(pos), "%d bytes after the last fragment, before the offset array", recEnd-pos)
	}
	s.vstart = append(s.vstart, uint32(total))
	s.sample = make([]uint64, 0, (s.n+spanSampleEvery-1)/spanSampleEvery)
	for i := 0; i < s.n; i += spanSampleEvery {
		s.sample = append(s.sample, s.prefix(i))
	}
	s.values = make([][]byte, 0, total)
	for i := 0; i < s.n; i++ {
		o := int(binary.LittleEndian.Uint32(s.offs[spanEntryLen*i:]))
		_, _, rest, count, _, _ := s.header(o, off)
		for j := uint64(0); j < count; j++ {
			l, m := binary.Uvarint(rest)
			s.values = append(s.values, rest[m:m+int(l):m+int(l)])
			rest = rest[m+int(l):]
		}
	}
	return s, nil
}

// header decodes fragment record at offset o: its start and end keys,
// the bytes after its value count, the count, and the bytes the header
// took.
func (s *SpanBlock) header(o int, off int64) (start, end, rest []byte, count uint64, used int, err error) {
	b := s.b
	p := o
	field := func(what string) ([]byte, bool) {
		l, m := canonUvarint(b[p:])
		if m <= 0 || l > uint64(len(b)-p-m) {
			err = format.Corruptf(format.SectionSpans, off+int64(p), "fragment at offset %d: bad %s length", o, what)
			return nil, false
		}
		k := b[p+m : p+m+int(l) : p+m+int(l)]
		p += m + int(l)
		return k, true
	}
	var ok bool
	if start, ok = field("start key"); !ok {
		return
	}
	if end, ok = field("end key"); !ok {
		return
	}
	c, m := canonUvarint(b[p:])
	if m <= 0 {
		err = format.Corruptf(format.SectionSpans, off+int64(p), "fragment at offset %d: bad value count", o)
		return
	}
	p += m
	return start, end, b[p:], c, p - o, nil
}

// canonUvarint is binary.Uvarint refusing an encoding longer than the
// shortest one (n = -1): a block has exactly one encoding.
func canonUvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n > 1 && b[n-1] == 0 {
		return 0, -1
	}
	return v, n
}

// Len returns the number of fragments.
func (s *SpanBlock) Len() int { return s.n }

// HeapBytes returns the bytes the decoded block keeps of its own beside
// the block's bytes: its value slices and per-fragment value offsets.
func (s *SpanBlock) HeapBytes() int {
	return cap(s.values)*int(unsafe.Sizeof([]byte(nil))) + cap(s.vstart)*4 + cap(s.sample)*8
}

// Fragment returns fragment i's start and end keys, slices of the block,
// and its values; i must be in [0, Len()).
func (s *SpanBlock) Fragment(i int) (start, end []byte, values [][]byte) {
	o := binary.LittleEndian.Uint32(s.offs[spanEntryLen*i:])
	start, rest := keyAt(s.b[o:])
	end, _ = keyAt(rest)
	return start, end, s.values[s.vstart[i]:s.vstart[i+1]:s.vstart[i+1]]
}

// start returns fragment i's start key.
func (s *SpanBlock) start(i int) []byte {
	k, _ := keyAt(s.b[binary.LittleEndian.Uint32(s.offs[spanEntryLen*i:]):])
	return k
}

// prefix returns fragment i's start key prefix from its index entry.
func (s *SpanBlock) prefix(i int) uint64 {
	return binary.BigEndian.Uint64(s.offs[spanEntryLen*i+4:])
}

// keyAt decodes a length-prefixed key at the start of b, checked by
// DecodeSpanBlock, and returns it and the bytes after it.
func keyAt(b []byte) (key, rest []byte) {
	var l uint64
	var m int
	if len(b) > 0 && b[0] < 0x80 {
		l, m = uint64(b[0]), 1
	} else {
		l, m = binary.Uvarint(b)
	}
	if m <= 0 || l > uint64(len(b)-m) { // never after DecodeSpanBlock
		return nil, nil
	}
	return b[m : m+int(l) : m+int(l)], b[m+int(l):]
}

// SearchStart returns the index of the last fragment whose start is at
// most key, or -1 when every fragment starts after key: one binary search
// over the index entries, comparing key's 8-byte prefix with theirs and
// reading a probed start key in place only when the prefixes tie.
func (s *SpanBlock) SearchStart(key []byte) int { return s.search(key, 1) }

// SearchStartBefore returns the index of the last fragment whose start
// is before key, or -1 when none is.
func (s *SpanBlock) SearchStartBefore(key []byte) int { return s.search(key, 0) }

// search returns the last fragment whose start compares below c with key.
func (s *SpanBlock) search(key []byte, c int) int {
	kp := KeyPrefix(key)
	lo, hi := 0, s.n // invariant: fragments before lo qualify, from hi on do not
	// Narrow [lo, hi) with the sampled prefixes: a fragment whose prefix
	// is below key's starts below key, one whose prefix is above it starts
	// above it, whatever c.
	a, z := 0, len(s.sample) // first sample above kp
	for a < z {
		m := int(uint(a+z) >> 1)
		if s.sample[m] <= kp {
			a = m + 1
		} else {
			z = m
		}
	}
	hi = min(hi, a*spanSampleEvery)
	if a > 0 && s.sample[a-1] < kp {
		lo = (a-1)*spanSampleEvery + 1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		var d int
		switch p := s.prefix(m); {
		case p < kp:
			d = -1
		case p > kp:
			d = 1
		default:
			d = bytes.Compare(s.start(m), key)
		}
		if d < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// SearchEnd returns the index of the first fragment whose end is after
// key, or Len() when none is.
func (s *SpanBlock) SearchEnd(key []byte) int {
	i := s.SearchStart(key)
	if i < 0 {
		return 0
	}
	_, end, _ := s.Fragment(i)
	if bytes.Compare(key, end) < 0 {
		return i
	}
	return i + 1
}
