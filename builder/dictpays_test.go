package builder_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestDictPaysTie: the decision itself, at its boundary: a dictionary
// whose sampled blocks plus itself take exactly the bytes they take
// without it is dropped, one byte fewer keeps it.
func TestDictPaysTie(t *testing.T) {
	for _, without := range []int{1, 500, 1 << 20} {
		if builder.DictPays(without, without) {
			t.Errorf("DictPays(%d, %d): a tie keeps the dictionary", without, without)
		}
		if builder.DictPays(without+1, without) {
			t.Errorf("DictPays(%d, %d): a loss keeps the dictionary", without+1, without)
		}
		if !builder.DictPays(without-1, without) {
			t.Errorf("DictPays(%d, %d): a saving of one byte drops the dictionary", without-1, without)
		}
	}
}

// dictCosts is what the builder weighs for a dictionary trained from
// samples: the bytes the samples take stored with it, plus the
// dictionary's own, and without it; computed here from the exported
// codec, as the builder's documentation (Options.DictionarySize)
// describes it.
func dictCosts(t *testing.T, samples [][]byte, size int, level format.CompressionLevel) (d []byte, with, without int) {
	t.Helper()
	d, err := codec.TrainZstdDict(samples, size, level)
	if err != nil {
		return nil, 0, 0
	}
	enc, err := codec.NewZstdDictEncoder(d, level)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	with = len(d)
	for _, s := range samples {
		if len(s) > builder.MaxDictBlock {
			continue
		}
		with += builder.StoredLen(len(s), len(enc.Append(nil, s)))
		without += builder.StoredLen(len(s), len(codec.AppendZstd(nil, s, level)))
	}
	return d, with, without
}

// TestDictionaryPays: tables of a growing number of small blocks of
// records sharing words, built with a 256-byte dictionary: with one or
// two blocks the dictionary costs more than it saves, with dozens it
// saves more. At every size the builder keeps the dictionary exactly when
// the blocks it sampled, stored with it, plus the dictionary, take fewer
// bytes than stored without it (dictCosts, from the plain zstd table's
// blocks); a table that does not keep it is byte for byte the table
// built without DictionarySize. The sizes cross the boundary, and some
// that drop the dictionary lose by less than its own size: a builder
// that left the dictionary's bytes out of the sum, or kept whatever it
// trained, keeps a dictionary there that does not pay for itself.
func TestDictionaryPays(t *testing.T) {
	const dictSize = builder.MinDictionarySize
	words := make([]string, 40)
	rng := rand.New(rand.NewPCG(41, 2))
	for i := range words {
		var w strings.Builder
		for range 5 + rng.IntN(6) {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		words[i] = w.String()
	}
	var ps []pair
	for i := range 1200 {
		var v strings.Builder
		for range 3 + rng.IntN(4) {
			v.WriteString(words[rng.IntN(len(words))])
			v.WriteByte(' ')
		}
		fmt.Fprintf(&v, "%d", rng.IntN(1000))
		ps = append(ps, pair{fmt.Sprintf("user/%06d", i*7), v.String()})
	}
	base := builder.Options{Compression: format.ZstdCompression, BlockSize: 512, Filter: nil}
	kept, dropped, closeDrops := 0, 0, 0
	for n := 10; n <= len(ps); n += n/8 + 3 {
		plain, _ := buildPairs(t, ps[:n], &base)
		opts := base
		opts.DictionarySize = dictSize
		data, bp := buildPairs(t, ps[:n], &opts)

		var samples [][]byte
		queued := 0
		for _, b := range blocksOf(t, plain) {
			if queued >= builder.DictionaryTrainingFactor*dictSize {
				break
			}
			samples = append(samples, b.Contents)
			queued += len(b.Contents)
		}
		d, with, without := dictCosts(t, samples, dictSize, opts.CompressionLevel)
		pays := d != nil && with < without
		if got := len(bp.Dictionary) > 0; got != pays {
			t.Fatalf("%d entries, %d blocks: dictionary kept %v; with it %d bytes (%d its own), without %d", n, len(samples), got, with, len(d), without)
		}
		if pays {
			kept++
			if !bytes.Equal(bp.Dictionary, d) {
				t.Fatalf("%d entries: kept dictionary differs from the one trained from the blocks", n)
			}
			dictBlocks := 0
			for _, typ := range blockTypes(t, data) {
				if typ == format.BlockTypeZstdDict {
					dictBlocks++
				}
			}
			if dictBlocks == 0 {
				t.Fatalf("%d entries: dictionary kept, no block uses it", n)
			}
			if got, _ := readBack(t, data); len(got) != n {
				t.Fatalf("%d entries: read back %d", n, len(got))
			}
			continue
		}
		dropped++
		if d != nil && with-without < len(d) {
			closeDrops++ // would pay without counting the dictionary itself
		}
		if !bytes.Equal(data, plain) {
			t.Fatalf("%d entries: dictionary dropped (with %d, without %d), but the table differs from the one built without DictionarySize", n, with, without)
		}
	}
	t.Logf("%d sizes kept the dictionary, %d dropped it, %d of those by less than its size", kept, dropped, closeDrops)
	if kept == 0 || dropped == 0 || closeDrops == 0 {
		t.Fatalf("the sizes do not cross the boundary: %d kept, %d dropped, %d by less than the dictionary's size", kept, dropped, closeDrops)
	}
}

// blockTypes returns the types of the data blocks of a table with a
// one-level index, in order, decoding none.
func blockTypes(t *testing.T, data []byte) []byte {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var idx codec.BlockIter
	if err := idx.Init(format.SectionIndex, int64(f.Index.Offset), data[f.Index.Offset:f.Index.Offset+f.Index.Length]); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for ok := idx.First(); ok; ok = idx.Next() {
		h, _ := codec.DecodeHandle(idx.Value())
		_, typ, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), data[h.Offset:h.End()])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, typ)
	}
	if err := idx.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
