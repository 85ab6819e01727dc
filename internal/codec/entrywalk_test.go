package codec_test

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestEntryWalker walks blocks of edge keys (the empty key, 0x00 and
// 0xff bytes, long shared prefixes) beside a BlockIter: the offsets and
// the keys rebuilt from the shared lengths and own bytes must match, and
// Done must hold at the end. Cut or damaged entries stop the walk with
// Done false, never a panic.
func TestEntryWalker(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rapid.SliceOfNDistinct(rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 'a', 0xff}), 0, 20), 1, 80, func(b []byte) string { return string(b) }).Draw(t, "keys")
		slices.SortFunc(raw, bytes.Compare)
		w := codec.BlockWriter{RestartInterval: rapid.IntRange(1, 20).Draw(t, "restart")}
		for i, k := range raw {
			w.Add(k, bytes.Repeat([]byte{byte(i)}, rapid.IntRange(0, 200).Draw(t, "vlen")))
		}
		block := w.Finish()
		var it codec.BlockIter
		if err := it.Init(format.SectionDataBlock, 0, block); err != nil {
			t.Fatal(err)
		}
		_, end := it.Layout()
		walk := codec.NewEntryWalker(block, end)
		var key []byte
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			off, shared, own, wok := walk.Next()
			if !wok || off != it.Offset() || shared > len(key) {
				t.Fatalf("entry %d: walker at %d (ok %v, shared %d), iterator at %d", n, off, wok, shared, it.Offset())
			}
			key = append(key[:shared], own...)
			if !bytes.Equal(key, it.Key()) {
				t.Fatalf("entry %d: walker rebuilt %q, iterator has %q", n, key, it.Key())
			}
			n++
		}
		if _, _, _, ok := walk.Next(); ok || !walk.Done() || n != len(raw) {
			t.Fatalf("after %d of %d entries: more %v, done %v", n, len(raw), ok, walk.Done())
		}
		// Damage: a cut inside the entries, or a byte changed.
		bad := slices.Clone(block[:end])
		cut := rapid.IntRange(0, end).Draw(t, "cut")
		if rapid.Bool().Draw(t, "flip") && end > 0 {
			bad[rapid.IntRange(0, end-1).Draw(t, "at")] ^= byte(rapid.IntRange(1, 255).Draw(t, "x"))
			cut = end
		}
		walk = codec.NewEntryWalker(bad[:cut], cut)
		for range len(raw) + 1 {
			if _, _, _, ok := walk.Next(); !ok {
				break
			}
		}
		if bad := codec.NewEntryWalker(block, len(block)+1); bad.Done() {
			t.Fatal("an end past the contents walks")
		}
	})
}
