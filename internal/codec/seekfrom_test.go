package codec_test

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestSeekGEFrom checks that SeekGEFrom, from any entry whose key is
// below the target (the first entry included), lands where SeekGE does,
// and that moves after it (Nexts, then Prev) agree too, in blocks written
// with ShareWithFirst.
func TestSeekGEFrom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rapid.SliceOfNDistinct(rapid.SliceOfN(rapid.ByteRange('a', 'd'), 0, 12), 1, 60, func(b []byte) string { return string(b) }).Draw(t, "keys")
		slices.SortFunc(raw, bytes.Compare)
		w := codec.BlockWriter{RestartInterval: rapid.IntRange(1, 40).Draw(t, "restart"), ShareWithFirst: true}
		var offs []int
		for i, k := range raw {
			offs = append(offs, w.Add(k, []byte{byte(i)}))
		}
		block := w.Finish()
		target := rapid.SliceOfN(rapid.ByteRange('a', 'e'), 0, 13).Draw(t, "target")
		var a, b codec.BlockIter
		if err := a.Init(format.SectionDataBlock, 0, block); err != nil {
			t.Fatal(err)
		}
		okA := a.SeekGE(target)
		for j, k := range raw {
			if bytes.Compare(k, target) >= 0 {
				break
			}
			if err := b.Init(format.SectionDataBlock, 0, block); err != nil {
				t.Fatal(err)
			}
			okB := b.SeekGEFrom(offs[j], target)
			if okA != okB || !bytes.Equal(a.Key(), b.Key()) || b.Err() != nil {
				t.Fatalf("from entry %d: %v %q, SeekGE %v %q (%v)", j, okB, b.Key(), okA, a.Key(), b.Err())
			}
			if okB {
				// Moves after the seek agree with SeekGE's: Next across
				// restart points (walked without the restart array),
				// then Prev.
				var c codec.BlockIter
				c.Init(format.SectionDataBlock, 0, block)
				c.SeekGE(target)
				for n := rapid.IntRange(0, len(raw)).Draw(t, "nexts"); n > 0; n-- {
					okC, okB := c.Next(), b.Next()
					if okC != okB || !bytes.Equal(c.Key(), b.Key()) || !bytes.Equal(c.Value(), b.Value()) || b.Err() != nil {
						t.Fatalf("from entry %d: Next after the seek: %v %q, want %v %q (%v)", j, okB, b.Key(), okC, c.Key(), b.Err())
					}
					if !okC {
						break
					}
				}
				if c.Prev() != b.Prev() || !bytes.Equal(c.Key(), b.Key()) {
					t.Fatalf("from entry %d: Prev after the moves: %q, want %q", j, b.Key(), c.Key())
				}
			}
		}
	})
}
