package codec_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestSeekOffsetPrefix positions on every entry of a block given the key
// before it as the known prefix, cut at random lengths: the entry is
// decoded whole, and Next and Prev from it agree with the block, when the
// prefix covers what the entry shares; otherwise the call refuses without
// an error. An offset inside an entry's bytes or past the entries gives
// an error or a refusal, never a panic. Layout gives back what
// InitEntries needs for the same block.
func TestSeekOffsetPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rapid.SliceOfNDistinct(rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 'a', 'b', 0xff}), 0, 12), 1, 60, func(b []byte) string { return string(b) }).Draw(t, "keys")
		slices.SortFunc(raw, bytes.Compare)
		w := codec.BlockWriter{RestartInterval: rapid.IntRange(1, 20).Draw(t, "restart")}
		var offs []int
		for i, k := range raw {
			offs = append(offs, w.Add(k, []byte{byte(i)}))
		}
		block := w.Finish()
		var ref codec.BlockIter
		if err := ref.Init(format.SectionDataBlock, 0, block); err != nil {
			t.Fatal(err)
		}
		size, end := ref.Layout()
		var it codec.BlockIter
		if err := it.InitEntries(format.SectionDataBlock, 0, block[:size], end); err != nil {
			t.Fatal(err)
		}
		for j, k := range raw {
			var before []byte
			if j > 0 {
				before = raw[j-1]
			}
			n := 0
			for n < len(before) && n < len(k) && before[n] == k[n] {
				n++
			}
			cut := rapid.IntRange(0, len(k)).Draw(t, "cut")
			ok := it.SeekOffsetPrefix(offs[j], k[:cut])
			if err := it.Err(); err != nil {
				t.Fatalf("entry %d: %v", j, err)
			}
			// The writer shares min(common prefix, ...) bytes, none at a
			// restart point: a prefix of the common length always does.
			if cut >= n && !ok {
				t.Fatalf("entry %d (%q): refused with %d of %d common bytes known", j, k, cut, n)
			}
			if !ok {
				continue
			}
			if !bytes.Equal(it.Key(), k) || !bytes.Equal(it.Value(), []byte{byte(j)}) {
				t.Fatalf("entry %d: at %q, want %q", j, it.Key(), k)
			}
			if rapid.Bool().Draw(t, "back") {
				if it.Prev() != (j > 0) || j > 0 && !bytes.Equal(it.Key(), raw[j-1]) {
					t.Fatalf("entry %d: Prev to %q", j, it.Key())
				}
			} else if it.Next() != (j+1 < len(raw)) || j+1 < len(raw) && !bytes.Equal(it.Key(), raw[j+1]) {
				t.Fatalf("entry %d: Next to %q", j, it.Key())
			}
		}
		// An offset that is not an entry's start: a corruption error, a
		// refusal or a wrong entry, never a panic.
		off := rapid.IntRange(-2, len(block)+2).Draw(t, "off")
		var bad codec.BlockIter
		if err := bad.Init(format.SectionDataBlock, 0, block); err != nil {
			t.Fatal(err)
		}
		if bad.SeekOffsetPrefix(off, raw[len(raw)-1]) && (off < 0 || off >= end) {
			t.Fatalf("offset %d outside the entries accepted", off)
		}
		if err := bad.Err(); err != nil && !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("offset %d: %v does not wrap ErrCorrupt", off, err)
		}
	})
}
