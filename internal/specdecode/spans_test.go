package specdecode

import (
	"bytes"
	"encoding/binary"
)

const secSpans = "span block"

// fragment is one fragment of a version 5 table's span block.
type fragment struct {
	start, end []byte
	values     [][]byte
}

// uvarintMin decodes a uvarint that must be in its shortest form ("Span
// block (version 5)": every uvarint is).
func uvarintMin(b []byte) (uint64, int) {
	v, w := binary.Uvarint(b)
	if w <= 0 {
		return 0, w
	}
	var buf [binary.MaxVarintLen64]byte
	if binary.PutUvarint(buf[:], v) != w {
		return 0, -1
	}
	return v, w
}

// decodeSpans decodes and checks the span block of a version 5 table,
// between the index block's end and the properties ("Span block
// (version 5)").
func (t *table) decodeSpans() error {
	p := &t.p
	if t.version != 5 {
		return nil
	}
	off := t.index.end()
	if p.spanSize < trailerLen {
		return bad(secProps, t.propsH.off, "span block size %d", p.spanSize)
	}
	b, err := t.rawBlock(secSpans, handle{off, p.spanSize - trailerLen})
	if err != nil {
		return err
	}
	if len(b) < 4 {
		return bad(secSpans, off, "%d bytes", len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n == 0 || n != p.numFragments || 12*n+4 > uint64(len(b)) {
		return bad(secSpans, off+uint64(len(b))-4, "%d fragments, tag 25 says %d, in %d bytes", n, p.numFragments, len(b))
	}
	arr := uint64(len(b)) - 4 - 12*n
	pos := uint64(0)
	for i := uint64(0); i < n; i++ {
		entry := b[arr+12*i : arr+12*i+12]
		if o := uint64(binary.LittleEndian.Uint32(entry)); o != pos {
			return bad(secSpans, off+arr+12*i, "index entry %d: offset %d, want %d", i, o, pos)
		}
		rec := b[pos:arr]
		r := 0
		field := func() ([]byte, bool) {
			l, w := uvarintMin(rec[r:])
			if w <= 0 || l > uint64(len(rec)-r-w) {
				return nil, false
			}
			v := rec[r+w : r+w+int(l)]
			r += w + int(l)
			return v, true
		}
		var f fragment
		var ok1, ok2 bool
		f.start, ok1 = field()
		f.end, ok2 = field()
		if !ok1 || !ok2 {
			return bad(secSpans, off+pos, "fragment %d: bad key", i)
		}
		count, w := uvarintMin(rec[r:])
		if w <= 0 || count == 0 {
			return bad(secSpans, off+pos, "fragment %d: bad value count", i)
		}
		r += w
		for j := uint64(0); j < count; j++ {
			v, ok := field()
			if !ok {
				return bad(secSpans, off+pos, "fragment %d value %d", i, j)
			}
			f.values = append(f.values, v)
		}
		var prefix [8]byte
		copy(prefix[:], f.start)
		if !bytes.Equal(entry[4:], prefix[:]) {
			return bad(secSpans, off+arr+12*i+4, "index entry %d: prefix % x, the start key %q gives % x", i, entry[4:], f.start, prefix)
		}
		if bytes.Compare(f.start, f.end) >= 0 {
			return bad(secSpans, off+pos, "fragment %d: start %q not below end %q", i, f.start, f.end)
		}
		if len(t.spans) > 0 && bytes.Compare(t.spans[len(t.spans)-1].end, f.start) > 0 {
			return bad(secSpans, off+pos, "fragment %d overlaps the previous one", i)
		}
		t.spans = append(t.spans, f)
		pos += uint64(r)
	}
	if pos != arr {
		return bad(secSpans, off+pos, "records end at %d, the offsets start at %d", pos, arr)
	}
	first, last := t.spans[0].start, t.spans[n-1].end
	switch {
	case p.numSpans == 0:
		return bad(secProps, t.propsH.off, "tag 24: no spans")
	case p.spanSmallest == nil && len(first) <= 1024 || p.spanSmallest != nil && !bytes.Equal(p.spanSmallest, first):
		return bad(secProps, t.propsH.off, "tag 26 %q, first fragment start %q", p.spanSmallest, first)
	case p.spanLargest == nil && len(last) <= 1024 || p.spanLargest != nil && !bytes.Equal(p.spanLargest, last):
		return bad(secProps, t.propsH.off, "tag 27 %q, last fragment end %q", p.spanLargest, last)
	}
	return nil
}
