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

// TestShareWithFirstProperty checks, on random sorted keys, that a block
// written with ShareWithFirst decodes as any LevelDB block does (forward,
// backward and by SeekGE), that every entry decodes alone from its offset
// and the block's first key (EntryParts), and that no entry shares more
// than its common prefix with the first key.
func TestShareWithFirstProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rapid.SliceOfNDistinct(rapid.SliceOfN(rapid.ByteRange('a', 'd'), 0, 12), 1, 60, func(b []byte) string { return string(b) }).Draw(t, "keys")
		slices.SortFunc(raw, bytes.Compare)
		w := codec.BlockWriter{RestartInterval: rapid.IntRange(1, 20).Draw(t, "restart"), ShareWithFirst: true}
		var offs []int
		for i, k := range raw {
			offs = append(offs, w.Add(k, []byte{byte(i), 'v'}))
		}
		block := w.Finish()
		var it codec.BlockIter
		if err := it.Init(format.SectionDataBlock, 0, block); err != nil {
			t.Fatal(err)
		}
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if !bytes.Equal(it.Key(), raw[i]) || !bytes.Equal(it.Value(), []byte{byte(i), 'v'}) {
				t.Fatalf("entry %d: %q=%q, want %q", i, it.Key(), it.Value(), raw[i])
			}
			i++
		}
		if it.Err() != nil || i != len(raw) {
			t.Fatalf("forward scan: %d of %d entries, %v", i, len(raw), it.Err())
		}
		for ok := it.Last(); ok; ok = it.Prev() {
			i--
			if i < 0 {
				t.Fatalf("backward scan passed %d entries", len(raw))
			}
			if !bytes.Equal(it.Key(), raw[i]) {
				t.Fatalf("backward entry %d: %q, want %q", i, it.Key(), raw[i])
			}
		}
		if it.Err() != nil || i != 0 {
			t.Fatalf("backward scan: %d of %d entries, %v", len(raw)-i, len(raw), it.Err())
		}
		end, err := codec.EntriesEnd(block, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range raw {
			if !it.SeekGE(k) || !bytes.Equal(it.Key(), k) {
				t.Fatalf("SeekGE(%q) = %q, %v", k, it.Key(), it.Err())
			}
			head, tail, v, err := codec.EntryParts(block[:end], 0, uint32(offs[i]))
			if err != nil {
				t.Fatalf("EntryParts at %d: %v", offs[i], err)
			}
			if got := append(slices.Clone(head), tail...); !bytes.Equal(got, k) || !bytes.Equal(v, []byte{byte(i), 'v'}) {
				t.Fatalf("EntryParts at %d: %q+%q=%q, want %q", offs[i], head, tail, v, k)
			}
			lcp := 0
			for lcp < len(k) && lcp < len(raw[0]) && k[lcp] == raw[0][lcp] {
				lcp++
			}
			if len(head) > lcp {
				t.Fatalf("entry %q shares %d bytes with first key %q", k, len(head), raw[0])
			}
		}
	})
}

// TestEntryPartsErrors checks that EntryParts reports damage as
// corruption: an offset past the entries, a first entry that is not
// whole, a shared length beyond the first key.
func TestEntryPartsErrors(t *testing.T) {
	w := codec.BlockWriter{RestartInterval: 16, ShareWithFirst: true}
	w.Add([]byte("apple"), []byte("1"))
	off := w.Add([]byte("apricot"), []byte("2"))
	block := w.Finish()
	end, err := codec.EntriesEnd(block, 0)
	if err != nil {
		t.Fatal(err)
	}
	ents := block[:end]
	if _, _, _, err := codec.EntryParts(ents, 100, uint32(end)); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("offset past the entries: %v", err)
	}
	bad := slices.Clone(ents)
	bad[0] = 1 // the first entry claims a shared byte
	if _, _, _, err := codec.EntryParts(bad, 100, uint32(off)); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("first entry not whole: %v", err)
	}
	bad = slices.Clone(ents)
	bad[off] = 9 // shares 9 bytes of a 5-byte first key
	if _, _, _, err := codec.EntryParts(bad, 100, uint32(off)); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("shared length past the first key: %v", err)
	}
}
