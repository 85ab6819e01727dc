package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// FuzzSpanBlock decodes arbitrary bytes as a version 5 span block's
// contents. Whatever decodes must re-encode, through
// codec.SpanBlockWriter, to the same bytes (a span block has one
// encoding), hold sorted, non-overlapping fragments with start < end and
// at least one value, and answer every search as a linear scan does; the
// rest must fail with ErrCorrupt. Seeds: the span blocks of the golden
// version 5 tables and written ones, and the saved corpus in
// testdata/fuzz/FuzzSpanBlock (TestSpanBlockCorpus), which holds
// overlapping and out-of-order fragments and uvarints longer than their
// shortest form: decoders without those checks fail there, in plain
// go test, on the order and re-encoding checks below.
func FuzzSpanBlock(f *testing.F) {
	for _, name := range []string{"v5.sst", "v5parted.sst", "v5spansonly.sst"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name))
		if err != nil {
			f.Fatal(err)
		}
		ft, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Clone(data[ft.Index.End():ft.Properties.Offset-format.BlockTrailerLen]), int64(ft.Index.End()))
	}
	var w codec.SpanBlockWriter
	w.Add([]byte{}, []byte{0}, [][]byte{{}})
	w.Add([]byte{0}, []byte{0xff, 0xff}, [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 200)})
	b, _ := w.Finish()
	f.Add(b, int64(0))
	f.Add([]byte{0, 0, 0, 0}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, off int64) {
		blk, err := codec.DecodeSpanBlock(b, off)
		if err != nil {
			wantErr(t, "DecodeSpanBlock", err, format.ErrCorrupt)
			return
		}
		var re codec.SpanBlockWriter
		var probes [][]byte
		for i := range blk.Len() {
			start, end, values := blk.Fragment(i)
			if bytes.Compare(start, end) >= 0 || len(values) == 0 {
				t.Fatalf("fragment %d [%q, %q) with %d values", i, start, end, len(values))
			}
			if i > 0 {
				if _, prev, _ := blk.Fragment(i - 1); bytes.Compare(prev, start) > 0 {
					t.Fatalf("fragment %d starts at %q, before %q", i, start, prev)
				}
			}
			re.Add(start, end, values)
			probes = append(probes, start, end, append(bytes.Clone(start), 0))
		}
		got, ok := re.Finish()
		if !ok || !bytes.Equal(got, b) {
			t.Fatalf("re-encoding differs: %d bytes, decoded from %d", len(got), len(b))
		}
		for _, k := range probes {
			last, lastBefore := -1, -1
			for i := range blk.Len() {
				start, _, _ := blk.Fragment(i)
				if bytes.Compare(start, k) <= 0 {
					last = i
				}
				if bytes.Compare(start, k) < 0 {
					lastBefore = i
				}
			}
			if got := blk.SearchStart(k); got != last {
				t.Fatalf("SearchStart(%q) = %d, a scan gives %d", k, got, last)
			}
			if got := blk.SearchStartBefore(k); got != lastBefore {
				t.Fatalf("SearchStartBefore(%q) = %d, a scan gives %d", k, got, lastBefore)
			}
		}
	})
}

var updateSpanCorpus = flag.Bool("update-span-corpus", false, "rewrite testdata/fuzz/FuzzSpanBlock from TestSpanBlockCorpus's inputs")

// spanRec returns a span block record [start, end) with values, every
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

// spanBlockOf lays records out as a span block's contents: the records,
// one index entry each (offset, and the zero-padded 8-byte prefix of the
// start key the record's first uvarint gives), and their count, checking
// nothing.
func spanBlockOf(recs ...[]byte) []byte {
	var b, idx []byte
	for _, r := range recs {
		idx = binary.LittleEndian.AppendUint32(idx, uint32(len(b)))
		var pfx [8]byte
		if l, m := binary.Uvarint(r); m > 0 && l <= uint64(len(r)-m) {
			copy(pfx[:], r[m:m+int(l)])
		}
		idx = append(idx, pfx[:]...)
		b = append(b, r...)
	}
	b = append(b, idx...)
	return binary.LittleEndian.AppendUint32(b, uint32(len(recs)))
}

// spanCorpus is the saved corpus of FuzzSpanBlock: each input's file
// name, bytes, file offset, and what DecodeSpanBlock's error says ("" for
// a block that decodes).
var spanCorpus = []struct {
	name string
	b    []byte
	off  int64
	msg  string
}{
	{"valid-touching", spanBlockOf(spanRec("a", "b", "v"), spanRec("b", "c", "w", "x")), 0, ""},
	{"valid-long-keys", spanBlockOf(spanRec("", "prefix00/1", ""), spanRec("prefix00/1", "prefix00/2", "v"), spanRec("prefix00/3", "prefix01", strings.Repeat("x", 150))), 4096, ""},
	{"overlap", spanBlockOf(spanRec("a", "b", "v"), spanRec("a\x00", "c", "w")), 0, `fragment 1 starts at "a\x00", before the previous one's end "b"`},
	{"overlap-contained", spanBlockOf(spanRec("a", "z", "v"), spanRec("b", "c", "w")), 100, `fragment 1 starts at "b", before the previous one's end "z"`},
	{"overlap-same-start", spanBlockOf(spanRec("prefix00/1", "prefix00/5", "v"), spanRec("prefix00/1", "prefix00/9", "w")), 0, `fragment 1 starts at "prefix00/1", before the previous one's end "prefix00/5"`},
	{"overlap-third", spanBlockOf(spanRec("a", "b", "v"), spanRec("b", "d", "w"), spanRec("c", "e", "x")), 0, `fragment 2 starts at "c", before the previous one's end "d"`},
	{"out-of-order", spanBlockOf(spanRec("c", "d", "v"), spanRec("a", "b", "w")), 0, `fragment 1 starts at "a", before the previous one's end "d"`},
	{"noncanonical-start-length", spanBlockOf([]byte("\x81\x00a\x01b\x01\x01v")), 0, "bad start key length"},
	{"noncanonical-end-length", spanBlockOf(spanRec("a", "b", "v"), []byte("\x01b\x81\x00c\x01\x01w")), 0, "bad end key length"},
	{"noncanonical-value-count", spanBlockOf([]byte("\x01a\x01b\x81\x00\x01v")), 0, "bad value count"},
	{"noncanonical-value-length", spanBlockOf([]byte("\x01a\x01b\x02\x01v\x81\x80\x00w")), 0, "fragment 0 value 1: bad length"},
	{"noncanonical-zero-value-length", spanBlockOf([]byte("\x01a\x01b\x01\x80\x00")), 0, "fragment 0 value 0: bad length"},
	{"start-not-before-end", spanBlockOf(spanRec("b", "b", "v")), 0, `start "b" is not before end "b"`},
	{"no-values", spanBlockOf([]byte("\x01a\x01b\x00")), 0, "fragment 0 has no values"},
	{"count-over-values", spanBlockOf([]byte("\x01a\x01b\x02\x01v"), spanRec("b", "c", "w")), 0, "fragment 1 at offset 7, the previous record ends at 9"},
	{"count-under-values", spanBlockOf([]byte("\x01a\x01b\x01\x01v\x01w")), 0, "2 bytes after the last fragment"},
	{"fragment-count-over", func() []byte {
		b := spanBlockOf(spanRec("a", "b", "v"), spanRec("b", "c", "w"))
		b[len(b)-4] = 4
		return b
	}(), 0, "4 fragments do not fit in a 42-byte span block"},
	{"truncated-value", spanBlockOf([]byte("\x01a\x01b\x01\x05v")), 0, "fragment 0 value 0: bad length"},
	{"truncated-frame", spanBlockOf(spanRec("a", "b", "v"))[8:], 0, "1 fragments do not fit in a 15-byte span block"},
}

// TestSpanBlockCorpus: the files of testdata/fuzz/FuzzSpanBlock are
// spanCorpus's inputs (go test -run TestSpanBlockCorpus
// -update-span-corpus ./fuzz rewrites them), and each decodes or fails
// for the reason its name gives, so that a corpus file meant for one
// check does not stop at another before it.
func TestSpanBlockCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzSpanBlock")
	if *updateSpanCorpus {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := map[string]bool{}
	for _, c := range spanCorpus {
		names[c.name] = true
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nint64(%d)\n", c.b, c.off)
		path := filepath.Join(dir, c.name)
		if *updateSpanCorpus {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s holds\n%s\nwant\n%s(run with -update-span-corpus)", path, got, want)
		}
		_, err = codec.DecodeSpanBlock(c.b, c.off)
		var ce *format.CorruptError
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.msg == "":
		case err == nil:
			t.Errorf("%s decodes", c.name)
		case !errors.As(err, &ce) || ce.Section != format.SectionSpans || !strings.Contains(ce.Msg, c.msg):
			t.Errorf("%s: error %v, want a span block corruption saying %q", c.name, err, c.msg)
		}
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !names[f.Name()] {
			t.Logf("%s: not one of spanCorpus's inputs (one go test -fuzz found?)", f.Name())
		}
	}
}
