package reader_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// TestFencedSeekScanBound bounds the entries a fenced SeekGE decodes in
// its block: the block's first, and those from the sub-fence below the
// key on, never more than a quarter of the block (rounded up) before the
// entry it lands on. A seek that scanned from offset 0 would find the
// same entry, only slower, so the test makes the entries it must not
// decode undecodable: once the sub-fences are recorded, it overwrites
// the header of every entry from the second to the last one more than a
// quarter of the block before the key, in the cached block the seek
// reads, seeks, and puts the bytes back. A seek that decodes one of them
// fails with a corruption error. Seeks the fences do not decide (a key
// tying its block's separator on its 8 bytes) search the index and are
// left undamaged; at least half the seeks must be guarded. The keys' 8 bytes after their common
// first byte differ in their first 6 (what a sub-fence keeps), so that
// every sub-fence below the key decides for it; they end in 0x00 and
// 0xff bytes and are 10 to 16 bytes long. The blocks are read through
// the cache, uncompressed over an io.ReaderAt and snappy-compressed from
// a mapping, both decoded into cache memory that the test can write.
func TestFencedSeekScanBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 2))
	var es []entry
	for i := range 3000 {
		k := binary.BigEndian.AppendUint64(nil, uint64(i)<<40|rng.Uint64()>>24)
		for range rng.IntN(9) {
			k = append(k, []byte{0, 0xff, byte(rng.Uint32())}[rng.IntN(3)])
		}
		es = append(es, entry{Key: string(k), Value: fmt.Sprintf("value %06d, compressible compressible", i)})
	}
	slices.SortFunc(es, func(a, b entry) int { return cmpStrings(a.Key, b.Key) })
	type place struct{ block, idx, n int }

	for _, c := range []struct {
		name   string
		comp   format.Compression
		mapped bool
	}{
		{"readat/none", format.NoCompression, false},
		{"mapped/snappy", format.SnappyCompression, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, _ := build(t, es, &builder.Options{Compression: c.comp, BlockSize: 4096, PartitionThreshold: -1})
			ro := cacheOpts(t, 64<<20)
			var r *reader.Reader
			if c.mapped {
				r = openFile(t, data, ro)
			} else {
				r = openMem(t, data, ro)
				defer r.Close()
			}
			it := r.NewIter(nil)
			defer it.Close()
			// Every block read once, and its sub-fences recorded.
			for _, e := range es {
				if !it.SeekGE([]byte(e.Key)) || string(it.Key()) != e.Key {
					t.Fatalf("SeekGE(%x): %v %x, %v", e.Key, it.Valid(), it.Key(), it.Err())
				}
			}
			tab := reader.BlockTable(r)
			if tab == nil {
				t.Fatal("no cache table")
			}
			made, subs := reader.SeekFences(r)
			if !made || subs != tab.Len() || subs < 10 {
				t.Fatalf("seek fences made %v, %d of %d blocks' sub-fences recorded", made, subs, tab.Len())
			}
			// Where each key lies, and where each entry starts, from the
			// cached blocks themselves.
			at := map[string]place{}
			offs := make([][]int, tab.Len())
			for i := range tab.Len() {
				h, ok := tab.Get(i)
				if !ok {
					t.Fatalf("block %d is not cached", i)
				}
				var bi codec.BlockIter
				if err := bi.Init(format.SectionDataBlock, 0, h.Bytes()); err != nil {
					t.Fatal(err)
				}
				for ok := bi.First(); ok; ok = bi.Next() {
					at[string(bi.Key())] = place{block: i, idx: len(offs[i])}
					offs[i] = append(offs[i], bi.Offset())
				}
				h.Release()
				if bi.Err() != nil || len(offs[i]) == 0 || len(offs[i]) > 256 { // more: no sub-fences
					t.Fatalf("block %d: %d entries, %v", i, len(offs[i]), bi.Err())
				}
			}
			guarded := 0
			for _, e := range es {
				p, ok := at[e.Key]
				if !ok {
					t.Fatalf("key %x in no cached block", e.Key)
				}
				n := len(offs[p.block])
				stop := p.idx - (n+3)/4 // entries [1, stop) are out of the scan
				if b, ok := reader.SeekFenceBlock(r, []byte(e.Key)); !ok {
					stop = 0 // the seek searches the index
				} else if b != p.block {
					t.Fatalf("the seek fences place %x in block %d, not %d", e.Key, b, p.block)
				}
				h, ok := tab.Get(p.block)
				if !ok {
					t.Fatalf("block %d left the cache", p.block)
				}
				b := h.Bytes()
				saved := make([]byte, 0, 64)
				for j := 1; j < stop; j++ {
					saved = append(saved, b[offs[p.block][j]])
					b[offs[p.block][j]] = 0x7f // shares 127 bytes: longer than any key
				}
				got := it.SeekGE([]byte(e.Key))
				key, value, err := string(it.Key()), string(it.Value()), it.Err()
				for j := 1; j < stop; j++ {
					b[offs[p.block][j]] = saved[j-1]
				}
				h.Release()
				if !got || key != e.Key || value != e.Value || err != nil {
					t.Fatalf("SeekGE(%x), entry %d of block %d (%d entries), entries 1 to %d not to be decoded: %v %x %q, %v",
						e.Key, p.idx, p.block, n, stop-1, got, key, value, err)
				}
				if stop > 1 {
					guarded++
				}
			}
			// Most seeks land past the block's first quarter, where a scan
			// from offset 0 would decode a damaged entry.
			if guarded < len(es)/2 {
				t.Fatalf("%d of %d seeks had entries out of their scan", guarded, len(es))
			}
			// The damage is gone: the same seeks from a fresh iterator.
			it2 := r.NewIter(nil)
			defer it2.Close()
			for _, e := range es[:100] {
				if !it2.SeekGE([]byte(e.Key)) || string(it2.Key()) != e.Key || it2.Next() && it2.Err() != nil {
					t.Fatalf("after the test, SeekGE(%x): %x, %v", e.Key, it2.Key(), it2.Err())
				}
			}
		})
	}
}
