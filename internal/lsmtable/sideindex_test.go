package lsmtable

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/reader"
)

// sideKey draws a user key made to stress the side index: the empty
// key, runs of 0x00, 0x01, 'k' and 0xff (so that keys are prefixes of
// one another and share fences), after one of a few common prefixes,
// some of 8 bytes and more.
func sideKey() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		prefix := rapid.SampledFrom([]string{"", "k", "user:000", "\xff\xff\xff\xff\xff\xff\xff\xff"}).Draw(t, "prefix")
		tail := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 'k', 0xff}), 0, 9).Draw(t, "tail")
		return append([]byte(prefix), tail...)
	})
}

// sideModel is a table's entries in internal key order.
type sideModel []ldbtest.Entry

// seekGE returns the index of the first entry at or after (user, seq).
func (m sideModel) seekGE(user []byte, seq uint64) int {
	i, _ := slices.BinarySearchFunc(m, user, func(e ldbtest.Entry, u []byte) int { return bytes.Compare(e.Key, u) })
	for i < len(m) && bytes.Equal(m[i].Key, user) && m[i].Seq > seq {
		i++
	}
	return i
}

// TestSideIndexModel checks Get, SeekGE, SeekGEAt, and the Next and Prev
// moves after them, against a model of the table, on tables whose
// cached blocks carry side indexes: internal and plain keys, versions of
// one user key across blocks, keys sharing their fences, empty values,
// blocks of 64 bytes to 4 KiB, restart intervals of 1 to 16, shortened
// and whole separators, raw and snappy blocks. It requires side indexes
// to have been built and used.
func TestSideIndexModel(t *testing.T) {
	c, err := cache.New(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sided, blocks := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		plain := rapid.Bool().Draw(rt, "plain")
		n := rapid.IntRange(1, 150).Draw(rt, "n")
		users := rapid.SliceOfNDistinct(sideKey(), n, n, func(k []byte) string { return string(k) }).Draw(rt, "users")
		slices.SortFunc(users, bytes.Compare)
		var m sideModel
		for _, u := range users {
			versions := 1
			if !plain {
				versions = rapid.IntRange(1, 4).Draw(rt, "versions")
			}
			seq := uint64(1000)
			for range versions {
				seq -= rapid.Uint64Range(1, 100).Draw(rt, "gap")
				kind := byte(1)
				if !plain && rapid.IntRange(0, 4).Draw(rt, "kind") == 0 {
					kind = 0
				}
				var v []byte
				if kind == 1 {
					v = bytes.Repeat([]byte{byte(seq)}, rapid.SampledFrom([]int{0, 1, 60, 120, 200}).Draw(rt, "vlen"))
				}
				if plain {
					seq = 0
				}
				m = append(m, ldbtest.Entry{Key: u, Seq: seq, Kind: kind, Value: v})
			}
		}
		o := ldbtest.Options{
			BlockSize:       rapid.SampledFrom([]int{64, 300, 1024, 4096}).Draw(rt, "blockSize"),
			RestartInterval: rapid.IntRange(1, 16).Draw(rt, "restart"),
			ShortSeparators: rapid.Bool().Draw(rt, "short"),
			Snappy:          rapid.Bool().Draw(rt, "snappy"),
			NoFilter:        true,
			Plain:           plain,
		}
		data := ldbtest.WriteTable(m, o)
		init := ldbInit
		if plain {
			init = func(t *Table) error {
				t.Index.SetPlain(true)
				return ldbInit(t)
			}
		}
		tb, err := New(bytes.NewReader(data), int64(len(data)), &Options{Cache: c}, init)
		if err != nil {
			rt.Fatal(err)
		}
		defer tb.Close()

		probes := [][]byte{{}, {0x00}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
		for _, u := range users {
			probes = append(probes, u, append(bytes.Clone(u), 0x00))
			if len(u) > 0 {
				probes = append(probes, u[:len(u)-1])
				up := bytes.Clone(u)
				up[len(up)-1]++
				probes = append(probes, up)
			}
		}
		probes = append(probes, rapid.SliceOfN(sideKey(), 0, 20).Draw(rt, "random")...)
		seqs := []uint64{MaxSequence, 0, 500, 950}
		if plain {
			seqs = []uint64{MaxSequence}
		}
		it := tb.NewIter(nil)
		defer it.Close()
		for pass := range 2 { // the first fills the cache; both are checked
			for _, p := range probes {
				for _, seq := range seqs {
					i := m.seekGE(p, seq)
					got, err := tb.Get(p, seq)
					if i < len(m) && bytes.Equal(m[i].Key, p) {
						w := m[i]
						if err != nil || got.Seq != w.Seq || byte(got.Kind) != w.Kind || !bytes.Equal(got.Value, w.Value) {
							rt.Fatalf("pass %d: Get(%q, %d) = %+v, %v; want seq %d kind %d value %q", pass, p, seq, got, err, w.Seq, w.Kind, w.Value)
						}
					} else if !errors.Is(err, reader.ErrNotFound) {
						rt.Fatalf("pass %d: Get(%q, %d) = %+v, %v; want ErrNotFound", pass, p, seq, got, err)
					}
					ok := it.SeekGEAt(p, seq)
					if seq == MaxSequence && rapid.Bool().Draw(rt, "plainSeek") {
						ok = it.SeekGE(p)
					}
					for step := 0; ; step++ {
						if ok != (i < len(m)) {
							rt.Fatalf("pass %d: SeekGEAt(%q, %d) step %d: %v (err %v), want %v", pass, p, seq, step, ok, it.Err(), i < len(m))
						}
						if !ok {
							break
						}
						w := m[i]
						if !bytes.Equal(it.Key(), w.Key) || it.Seq() != w.Seq || byte(it.Kind()) != w.Kind || !bytes.Equal(it.Value(), w.Value) {
							rt.Fatalf("pass %d: SeekGEAt(%q, %d) step %d at %q @%d, want %q @%d", pass, p, seq, step, it.Key(), it.Seq(), w.Key, w.Seq)
						}
						if step == 2 {
							break
						}
						if step == 0 && i > 0 && rapid.Bool().Draw(rt, "prev") {
							ok, i = it.Prev(), i-1
						} else {
							ok, i = it.Next(), i+1
						}
					}
				}
			}
		}
		if err := it.Err(); err != nil {
			rt.Fatal(err)
		}
		for i := range tb.Index.Len() {
			if p, ok := tb.cache.Get(i); ok {
				blocks++
				if a := int(p.Aux()); a > 0 && side(p.Bytes()[:a]).entries() > 0 {
					sided++
				}
				p.Release()
			}
		}
	})
	t.Logf("%d of %d cached blocks had a side index", sided, blocks)
	// Tables of 64-byte blocks and values of 0 to 200 bytes have blocks
	// of too small entries among the others: after one, most blocks of
	// the table get no room (see sideRoom).
	if sided == 0 || sided < blocks/10 {
		t.Fatalf("only %d of %d cached blocks had a side index", sided, blocks)
	}
}

// TestSideIndexLayout checks the side index built for a block against
// the entries it describes.
func TestSideIndexLayout(t *testing.T) {
	var m sideModel
	for i := range 200 {
		k := []byte{'k', byte(i / 50), byte(i % 50), 0xff}
		m = append(m, ldbtest.Entry{Key: k, Seq: uint64(1000 - i), Kind: 1, Value: bytes.Repeat([]byte{'v'}, 80)})
	}
	data := ldbtest.WriteTable(m, ldbtest.Options{BlockSize: 2048, NoFilter: true})
	c, err := cache.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tb, err := New(bytes.NewReader(data), int64(len(data)), &Options{Cache: c}, ldbInit)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Index.Len() < 3 {
		t.Fatalf("%d blocks", tb.Index.Len())
	}
	for i := range tb.Index.Len() {
		var b blockBuf
		contents, _, err := tb.dataBlock(i, &b, true)
		if err != nil {
			t.Fatal(err)
		}
		s := b.side
		if s == nil {
			t.Fatalf("block %d has no side index", i)
		}
		want := 0
		if i > 0 {
			a, b := tb.Index.Key(i-1), tb.Index.Key(i)
			a, b = a[:len(a)-TrailerLen], b[:len(b)-TrailerLen]
			for want < len(a) && want < len(b) && a[want] == b[want] {
				want++
			}
		}
		if s.skip() != want {
			t.Fatalf("block %d: skip %d, separators share %d bytes", i, s.skip(), want)
		}
		var blk codec.BlockIter
		if err := tb.initBlock(&blk, 0, contents); err != nil {
			t.Fatal(err)
		}
		if size, end := blk.Layout(); size != s.size() || end != s.end() {
			t.Fatalf("block %d: layout %d/%d, side index says %d/%d", i, size, end, s.size(), s.end())
		}
		j := 0
		for ok := blk.First(); ok; ok = blk.Next() {
			u := blk.Key()[:len(blk.Key())-TrailerLen]
			if got, want := s.fence(j), fence4(u, s.skip()); got != want || s.offset(s.entries(), j) != blk.Offset() {
				t.Fatalf("block %d entry %d: fence %x offset %d, want %x %d", i, j, got, s.offset(s.entries(), j), want, blk.Offset())
			}
			j++
		}
		if j != s.entries() || len(s) < sideLen(j) {
			t.Fatalf("block %d: %d entries, side index says %d (%d bytes)", i, j, s.entries(), len(s))
		}
		b.release()
	}
}

// TestSideIndexNoAllocs checks that Gets and seeks through side indexes
// allocate nothing once warm, keys of a 70-byte common prefix included
// (the prefix a side index leads to is rebuilt in a reused buffer).
func TestSideIndexNoAllocs(t *testing.T) {
	var m sideModel
	prefix := bytes.Repeat([]byte{'p'}, 70)
	for i := range 300 {
		k := append(bytes.Clone(prefix), byte(i>>8), byte(i), 'x')
		m = append(m, ldbtest.Entry{Key: k, Seq: 7, Kind: 1, Value: bytes.Repeat([]byte{byte(i)}, 100)})
	}
	data := ldbtest.WriteTable(m, ldbtest.Options{NoFilter: true, Snappy: true})
	c, err := cache.New(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tb, err := New(bytes.NewReader(data), int64(len(data)), &Options{Cache: c}, ldbInit)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	it := tb.NewIter(nil)
	defer it.Close()
	present, absent := m[150].Key, append(bytes.Clone(m[150].Key[:72]), 'w')
	var dst []byte
	for range 2 { // fill the cache
		tb.GetAppend(nil, present, MaxSequence)
		tb.GetAppend(nil, absent, MaxSequence)
		it.SeekGE(present)
	}
	i := tb.Index.Search(AppendSeekKey(nil, present, MaxSequence))
	p, ok := tb.cache.Get(i)
	if !ok {
		t.Fatal("the block is not cached")
	}
	if a := int(p.Aux()); a == 0 || side(p.Bytes()[:a]).entries() == 0 || side(p.Bytes()[:a]).skip() < 70 {
		t.Fatalf("the block has no side index past the 70-byte prefix (aux %d)", a)
	}
	p.Release()
	for name, f := range map[string]func(){
		"GetAppend present": func() {
			e, err := tb.GetAppend(dst[:0], present, MaxSequence)
			if err != nil || !bytes.Equal(e.Value, m[150].Value) {
				t.Fatalf("GetAppend: %v", err)
			}
			dst = e.Value
		},
		"GetAppend absent": func() {
			if _, err := tb.GetAppend(dst[:0], absent, MaxSequence); !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("GetAppend of an absent key: %v", err)
			}
		},
		"SeekGE": func() {
			if !it.SeekGE(present) || !bytes.Equal(it.Key(), present) {
				t.Fatal("SeekGE missed")
			}
		},
	} {
		if allocs := testing.AllocsPerRun(100, f); allocs != 0 {
			t.Errorf("%s: %v allocations, want 0", name, allocs)
		}
	}
}

// TestSideIndexSmallEntries checks that a table of entries too small for
// side indexes (under 48 bytes) stops setting room aside for them once a
// block has shown it, but for one block in 16, so that its blocks take
// no more cache than before side indexes; and that a table of large
// entries after it still gets them.
func TestSideIndexSmallEntries(t *testing.T) {
	c, err := cache.New(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, vlen := range []int{4, 100} {
		var m sideModel
		for i := range 20_000 {
			m = append(m, ldbtest.Entry{Key: fmt.Appendf(nil, "k%07d", i), Seq: 1, Kind: 1, Value: bytes.Repeat([]byte{'v'}, vlen)})
		}
		data := ldbtest.WriteTable(m, ldbtest.Options{NoFilter: true, Snappy: true})
		tb, err := New(bytes.NewReader(data), int64(len(data)), &Options{Cache: c}, ldbInit)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m {
			if _, err := tb.GetAppend(nil, e.Key, MaxSequence); err != nil {
				t.Fatal(err)
			}
		}
		roomed, sided, blocks := 0, 0, tb.Index.Len()
		for i := range blocks {
			p, ok := tb.cache.Get(i)
			if !ok {
				t.Fatalf("vlen %d: block %d not cached", vlen, i)
			}
			if a := int(p.Aux()); a > 0 {
				roomed++
				if side(p.Bytes()[:a]).entries() > 0 {
					sided++
				}
			}
			p.Release()
		}
		t.Logf("vlen %d: %d blocks, %d with room, %d with a side index", vlen, blocks, roomed, sided)
		if vlen == 4 && (sided != 0 || roomed > blocks/16+2) {
			t.Errorf("small entries: %d of %d blocks with room, %d with a side index", roomed, blocks, sided)
		}
		if vlen == 100 && sided < blocks-1 {
			t.Errorf("large entries: %d of %d blocks with a side index", sided, blocks)
		}
		tb.Close()
	}
}
