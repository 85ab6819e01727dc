package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
)

// spanRec returns a fragment record [start, end) with values, every
// uvarint in its shortest form.
func spanRec(start, end string, values ...string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(start)))
	b = append(b, start...)
	b = binary.AppendUvarint(b, uint64(len(end)))
	b = append(b, end...)
	b = binary.AppendUvarint(b, uint64(len(values)))
	for _, v := range values {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// spanBlockOf lays records out as a span block: the records, one index
// entry each (its offset and the prefix of the start key its first
// uvarint gives, if that fits), and their count. It checks nothing, so
// that a record can be anything.
func spanBlockOf(recs ...[]byte) []byte {
	var b, idx []byte
	for _, r := range recs {
		idx = binary.LittleEndian.AppendUint32(idx, uint32(len(b)))
		var start []byte
		if l, m := binary.Uvarint(r); m > 0 && l <= uint64(len(r)-m) {
			start = r[m : m+int(l)]
		}
		idx = binary.BigEndian.AppendUint64(idx, KeyPrefix(start))
		b = append(b, r...)
	}
	b = append(b, idx...)
	return binary.LittleEndian.AppendUint32(b, uint32(len(recs)))
}

// patch returns b with f applied to a copy.
func patch(b []byte, f func(b []byte)) []byte {
	b = bytes.Clone(b)
	f(b)
	return b
}

// TestSpanBlockValid: the blocks the error cases below are variations
// of decode, so that each case fails for its own reason: records that
// touch (one's end is the next one's start), an empty start key and
// value, a start key of 8 bytes and more, and the writer's encoding.
func TestSpanBlockValid(t *testing.T) {
	var w SpanBlockWriter
	w.Add([]byte(""), []byte("a"), [][]byte{{}})
	w.Add([]byte("a"), []byte("b"), [][]byte{[]byte("v"), []byte("w")})
	w.Add([]byte("b"), []byte("c"), [][]byte{bytes.Repeat([]byte("x"), 200)})
	w.Add([]byte("keys-of-8+"), []byte("keys-of-9"), [][]byte{[]byte("y")})
	fromWriter, _ := w.Finish()
	byHand := spanBlockOf(spanRec("", "a", ""), spanRec("a", "b", "v", "w"), spanRec("b", "c", strings.Repeat("x", 200)), spanRec("keys-of-8+", "keys-of-9", "y"))
	if !bytes.Equal(fromWriter, byHand) {
		t.Fatalf("spanBlockOf differs from SpanBlockWriter:\n%x\n%x", byHand, fromWriter)
	}
	for _, b := range [][]byte{
		byHand,
		spanBlockOf(spanRec("a", "b", "v")),
		spanBlockOf(spanRec("a", "b", "v"), spanRec("b", "c", "w")),
	} {
		blk, err := DecodeSpanBlock(b, 0)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if blk.Len() == 0 {
			t.Fatalf("%x: no fragments", b)
		}
	}
}

// TestSpanBlockErrors: every check of DecodeSpanBlock refuses its
// corruption with a *format.CorruptError naming the span block, the file
// offset of the bad bytes (the block starts at offset 1000) and what is
// wrong: overlapping and out-of-order fragments, uvarints longer than
// their shortest form (each of the four, one for each length and the
// count), truncated blocks and records, and counts that disagree with
// the bytes (fragments, values, record offsets). An audit removed the
// overlap check and the shortest-form check and only -fuzz
// FuzzSpanBlock noticed; each of the cases "overlap*", "out of order by
// start" and "non-canonical*" fails without its check.
func TestSpanBlockErrors(t *testing.T) {
	const off = 1000
	ab := spanRec("a", "b", "v") // 7 bytes: 01 a 01 b 01 01 v
	two := spanBlockOf(ab, spanRec("b", "c", "w"))
	const recEnd2 = 14 // where two's index entries start; len(two) is 42
	cases := []struct {
		name string
		b    []byte
		at   int64  // the error's offset, less off
		msg  string // in the error's message
	}{
		// The block's frame.
		{"empty", nil, 0, "0 bytes is too short for its fragment count"},
		{"three bytes", []byte{1, 0, 0}, 0, "3 bytes is too short"},
		{"no fragments", []byte{0, 0, 0, 0}, 0, "span block with no fragments"},
		{"count beyond the block", spanBlockOf(ab)[8:], 11, "1 fragments do not fit in a 15-byte span block"},
		{"fragment count too high", patch(two, func(b []byte) { b[len(b)-4] = 4 }), 38, "4 fragments do not fit in a 42-byte span block"},
		{"fragment count too low", patch(two, func(b []byte) { b[len(b)-4] = 1 }), recEnd2 + 12, "fragment 0 at offset 7, the previous record ends at 0"},
		{"fragment count of 2^32-1", patch(two, func(b []byte) { binary.LittleEndian.PutUint32(b[len(b)-4:], 1<<32-1) }), 38, "4294967295 fragments do not fit"},

		// Record offsets that disagree with the records.
		{"first record not at 0", patch(two, func(b []byte) { b[recEnd2] = 1 }), recEnd2, "fragment 0 at offset 1, the previous record ends at 0"},
		{"records out of order", func() []byte {
			b := spanBlockOf(spanRec("a", "b", "v"), spanRec("b", "c", "w"))
			// Swap the two index entries: the first points at the
			// second record.
			e := bytes.Clone(b[recEnd2 : recEnd2+12])
			copy(b[recEnd2:], b[recEnd2+12:recEnd2+24])
			copy(b[recEnd2+12:], e)
			return b
		}(), recEnd2, "fragment 0 at offset 7, the previous record ends at 0"},
		{"gap between records", spanBlockOf(append(bytes.Clone(ab), 0), spanRec("b", "c", "w")), 15 + 12, "fragment 1 at offset 8, the previous record ends at 7"},
		{"bytes after the last record", spanBlockOf(append(bytes.Clone(ab), 'x', 'y')), 7, "2 bytes after the last fragment"},
		{"index prefix wrong", patch(two, func(b []byte) { b[recEnd2+12+4] = 'c' }), recEnd2 + 12 + 4, `fragment 1: index entry's key prefix 6300000000000000, its start "b" gives 6200000000000000`},

		// Fragment order.
		{"start equals end", spanBlockOf(spanRec("a", "a", "v")), 0, `fragment 0: start "a" is not before end "a"`},
		{"start after end", spanBlockOf(spanRec("b", "a", "v")), 0, `fragment 0: start "b" is not before end "a"`},
		{"empty end", spanBlockOf(spanRec("a", "", "v")), 0, `start "a" is not before end ""`},
		{"overlap", spanBlockOf(ab, spanRec("a\x00", "c", "w")), 7, `fragment 1 starts at "a\x00", before the previous one's end "b"`},
		{"overlap by one fragment inside another", spanBlockOf(spanRec("a", "z", "v"), spanRec("b", "c", "w")), 7, `fragment 1 starts at "b", before the previous one's end "z"`},
		{"overlap of the same start", spanBlockOf(ab, spanRec("a", "c", "w")), 7, `fragment 1 starts at "a", before the previous one's end "b"`},
		{"overlap at the third fragment", spanBlockOf(ab, spanRec("b", "d", "w"), spanRec("c", "e", "x")), 14, `fragment 2 starts at "c", before the previous one's end "d"`},
		{"out of order by start", spanBlockOf(spanRec("c", "d", "v"), spanRec("a", "b", "w")), 7, `fragment 1 starts at "a", before the previous one's end "d"`},

		// Uvarints longer than their shortest form: decoded as plain
		// uvarints each block below would hold [a, b) with value v.
		{"non-canonical start length", spanBlockOf([]byte("\x81\x00a\x01b\x01\x01v")), 0, "fragment at offset 0: bad start key length"},
		{"non-canonical end length", spanBlockOf([]byte("\x01a\x81\x00b\x01\x01v")), 2, "fragment at offset 0: bad end key length"},
		{"non-canonical value count", spanBlockOf([]byte("\x01a\x01b\x81\x00\x01v")), 4, "fragment at offset 0: bad value count"},
		{"non-canonical value length", spanBlockOf([]byte("\x01a\x01b\x01\x81\x00v")), 5, "fragment 0 value 0: bad length"},
		{"non-canonical zero value length", spanBlockOf([]byte("\x01a\x01b\x01\x80\x00")), 5, "fragment 0 value 0: bad length"},
		{"non-canonical in three bytes", spanBlockOf([]byte("\x01a\x01b\x01\x81\x80\x00v")), 5, "fragment 0 value 0: bad length"},
		{"non-canonical in the second record", spanBlockOf(ab, []byte("\x01b\x81\x00c\x01\x01w")), 9, "fragment at offset 7: bad end key length"},
		{"non-canonical second value", spanBlockOf([]byte("\x01a\x01b\x02\x01v\x81\x00w")), 7, "fragment 0 value 1: bad length"},
		{"overflowing uvarint", spanBlockOf([]byte("\x01a\x01b\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7fv")), 5, "fragment 0 value 0: bad length"},

		// Truncated records (the frame whole).
		{"start key past the records", spanBlockOf([]byte("\x05a")), 0, "fragment at offset 0: bad start key length"},
		{"end key past the records", spanBlockOf([]byte("\x01a\x05b")), 2, "fragment at offset 0: bad end key length"},
		{"record ends before its count", spanBlockOf([]byte("\x01a\x01b")), 4, "fragment at offset 0: bad value count"},
		{"count cut short", spanBlockOf([]byte("\x01a\x01b\x80")), 4, "fragment at offset 0: bad value count"},
		{"value past the records", spanBlockOf([]byte("\x01a\x01b\x01\x05v")), 5, "fragment 0 value 0: bad length"},
		{"value length cut short", spanBlockOf([]byte("\x01a\x01b\x02\x01v\x80")), 7, "fragment 0 value 1: bad length"},
		{"value reaching into the index", spanBlockOf([]byte("\x01a\x01b\x01\x02v")), 5, "fragment 0 value 0: bad length"},

		// Value counts that disagree with the values.
		{"no values", spanBlockOf([]byte("\x01a\x01b\x00")), 0, "fragment 0 has no values"},
		{"more values than bytes", spanBlockOf([]byte("\x01a\x01b\x03\x00\x00")), 0, "fragment 0 claims 3 values in 2 bytes"},
		// A count of 2 over one value takes the next record's first 2
		// bytes as its second value.
		{"one value more than there are", spanBlockOf([]byte("\x01a\x01b\x02\x01v"), spanRec("b", "c", "w")), recEnd2 + 12, "fragment 1 at offset 7, the previous record ends at 9"},
		{"one value more than the last record has", spanBlockOf([]byte("\x01a\x01b\x02\x01v")), 7, "fragment 0 value 1: bad length"},
		{"one value fewer than there are", spanBlockOf([]byte("\x01a\x01b\x01\x01v\x01w"), spanRec("b", "c", "w")), 16 + 12, "fragment 1 at offset 9, the previous record ends at 7"},
		{"one value fewer in the last record", spanBlockOf([]byte("\x01a\x01b\x01\x01v\x01w")), 7, "2 bytes after the last fragment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			blk, err := DecodeSpanBlock(c.b, off)
			if err == nil {
				var frags []string
				for i := range blk.Len() {
					s, e, v := blk.Fragment(i)
					frags = append(frags, string(s)+".."+string(e)+"="+string(bytes.Join(v, []byte(","))))
				}
				t.Fatalf("%x decodes: %q", c.b, frags)
			}
			checkSpanErr(t, err, off+c.at, c.msg)
		})
	}
}

// checkSpanErr checks that err is a *format.CorruptError in the span
// block at file offset at whose message holds msg.
func checkSpanErr(t *testing.T, err error, at int64, msg string) {
	t.Helper()
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("error %v does not wrap ErrCorrupt", err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CorruptError", err)
	}
	if ce.Section != format.SectionSpans || ce.Offset != at || !strings.Contains(ce.Msg, msg) {
		t.Fatalf("error %q (section %q, offset %d), want section %q, offset %d, %q", err, ce.Section, ce.Offset, format.SectionSpans, at, msg)
	}
}

// TestSpanBlockTruncated: every block a valid one's bytes cut at either
// end give is refused with a *format.CorruptError in the span block, at
// an offset inside the bytes given; so is the valid block with any one
// byte of its record section removed, the frame kept whole.
func TestSpanBlockTruncated(t *testing.T) {
	const off = 500
	b := spanBlockOf(spanRec("", "a", ""), spanRec("a", "b", "v", "w"), spanRec("b", "keys-of-8+", strings.Repeat("x", 130)), spanRec("keys-of-8+", "keys-of-9", "y"))
	if _, err := DecodeSpanBlock(b, off); err != nil {
		t.Fatal(err)
	}
	check := func(what string, c []byte, base int64) {
		t.Helper()
		_, err := DecodeSpanBlock(c, base)
		if err == nil {
			t.Fatalf("%s (%x) decodes", what, c)
		}
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Section != format.SectionSpans || ce.Offset < base || ce.Offset > base+int64(len(c)) {
			t.Fatalf("%s: error %v, want a *CorruptError in the span block within [%d, %d]", what, err, base, base+int64(len(c)))
		}
	}
	for n := range len(b) {
		check("first "+strconv.Itoa(n)+" bytes", b[:n], off)
		check("from byte "+strconv.Itoa(len(b)-n), b[len(b)-n:], off+int64(len(b)-n))
	}
	recEnd := len(b) - 4 - spanEntryLen*4
	for i := range recEnd {
		c := append(bytes.Clone(b[:i]), b[i+1:]...)
		check("record byte "+strconv.Itoa(i)+" removed", c, off)
	}
}
