package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
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
// version 5 tables and written ones.
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
