package reader_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestSeekFences checks SeekGE in version 4 tables, whose readers find
// the data block through seek fences (8 bytes of each block's separator
// after the keys' common bytes) and start the block's scan at a
// sub-fence, against a model: seek keys equal to keys, between keys,
// tying a separator or a key on its 8 bytes and differing after them,
// shorter than 8 bytes after the common bytes, without the common bytes,
// before the first key and past the last, with and without bounds, each
// followed by Nexts and Prevs; before the sub-fences are recorded and
// after; mapped, with a cache, and over an io.ReaderAt; one-level and
// partitioned indexes. SeekLT is checked too, though it takes the index.
func TestSeekFences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := map[string]func(i int) string{
		"random":   func(int) string { return fmt.Sprintf("%016x%x", rng.Uint64(), rng.IntN(1000)) },
		"prefixed": func(i int) string { return fmt.Sprintf("tenant/0042/user/%08d", i*3) },
		"short":    func(i int) string { return fmt.Sprintf("p/%c%c", 'a'+i/256%26, byte(i)) },
		"zeros":    func(i int) string { return fmt.Sprintf("z%03d", i%1000) + string(make([]byte, i/1000)) },
		"ties":     func(i int) string { return fmt.Sprintf("k%08d", i/40) + fmt.Sprintf("%06d", i%40) },
		"binary":   func(i int) string { return string([]byte{byte(i >> 8), 0xff, byte(i), 0, 0xff}) },
	}
	n := 1500 // tens of blocks of 256 bytes or 4 KiB: every fence and sub-fence case
	if longTests() {
		n = 5000
	}
	for name, gen := range kinds {
		seen := map[string]bool{}
		var es []entry
		for i := 0; len(es) < n && i < 100000; i++ {
			k := gen(i)
			if !seen[k] {
				seen[k] = true
				es = append(es, entry{Key: k, Value: fmt.Sprintf("v%d", i)})
			}
		}
		slices.SortFunc(es, func(a, b entry) int { return cmpStrings(a.Key, b.Key) })
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			for _, bs := range []int{256, 4096} {
				for _, parted := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/block=%d/parted=%v", name, c, bs, parted), func(t *testing.T) {
						opts := &builder.Options{Compression: c, BlockSize: bs, PartitionThreshold: -1}
						if parted {
							opts.PartitionThreshold = 1
						}
						data, _ := build(t, es, opts)
						seeks := seekKeys(rng, es)
						for _, ro := range []*reader.Options{nil, cacheOpts(t, 64<<20)} {
							r, err := reader.Open(writeFile(t, t.TempDir(), data), ro)
							if err != nil {
								t.Fatal(err)
							}
							checkSeeks(t, r, es, seeks, rng)
							if made, subs := reader.SeekFences(r); !made || subs == 0 {
								t.Errorf("mapped reader: seek fences made %v, %d blocks' sub-fences", made, subs)
							}
							checkSeeks(t, r, es, seeks, rng) // with the sub-fences recorded
							r.Close()
						}
						ra := openMem(t, data, nil)
						checkSeeks(t, ra, es, seeks, rng)
						checkSeeks(t, ra, es, seeks, rng)
						ra.Close()
					})
				}
			}
		}
	}
}

// seekKeys returns keys to seek in a table of es: its keys, and keys
// about them (see TestSeekFences).
func seekKeys(rng *rand.Rand, es []entry) []string {
	var ks []string
	for i, e := range es {
		if i%3 != 0 {
			continue
		}
		k := e.Key
		ks = append(ks, k, k+"\x00", k+"\xff\xff", k[:len(k)-1], k[:len(k)/2])
		if len(k) > 0 && k[len(k)-1] > 0 {
			ks = append(ks, k[:len(k)-1]+string(k[len(k)-1]-1)+"\xff") // just below k
		}
		if len(k) > 9 {
			// Ties k on its first 9 bytes (8 after a common byte or more),
			// above and below it after them.
			ks = append(ks, k[:9]+"\x00", k[:9]+"\xff", k[:9])
		}
	}
	first, last := es[0].Key, es[len(es)-1].Key
	ks = append(ks, "", "\x00", first[:1], last+"\x00", last+"\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
	for range 200 {
		b := make([]byte, rng.IntN(12))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		ks = append(ks, string(b))
	}
	return ks
}

// checkSeeks seeks r at every key of seeks, unbounded and within random
// bounds, and checks where each lands and a few moves after it.
func checkSeeks(t *testing.T, r *reader.Reader, es []entry, seeks []string, rng *rand.Rand) {
	t.Helper()
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.Key
	}
	it := r.NewIter(nil)
	defer it.Close()
	check := func(what string, got bool, want, lo, hi int, it *reader.Iterator) {
		t.Helper()
		for step := 0; ; step++ {
			ok := want >= lo && want < hi
			if got != ok || ok && (string(it.Key()) != es[want].Key || string(it.Value()) != es[want].Value) {
				t.Fatalf("%s, step %d: got %v %q, want %v %q (err %v)", what, step, got, it.Key(), ok, keyOf(es, want), it.Err())
			}
			if !ok || step == 4 {
				return
			}
			if step < 3 {
				got, want = it.Next(), want+1
			} else {
				got, want = it.Prev(), want-1
			}
		}
	}
	for _, k := range seeks {
		i := sort.SearchStrings(keys, k)
		check(fmt.Sprintf("SeekGE(%q)", k), it.SeekGE([]byte(k)), i, 0, len(es), it)
		check(fmt.Sprintf("SeekLT(%q)", k), it.SeekLT([]byte(k)), i-1, 0, len(es), it)
	}
	// Bounds: a seek below the lower bound seeks from it; one at or past
	// the upper bound finds nothing.
	for n := 0; n < 300; n++ {
		a, b := seeks[rng.IntN(len(seeks))], seeks[rng.IntN(len(seeks))]
		if a > b {
			a, b = b, a
		}
		bit := r.NewIter(&reader.IterOptions{LowerBound: []byte(a), UpperBound: []byte(b)})
		lo, hi := sort.SearchStrings(keys, a), sort.SearchStrings(keys, b)
		k := seeks[rng.IntN(len(seeks))]
		want := max(sort.SearchStrings(keys, k), lo)
		check(fmt.Sprintf("[%q, %q) SeekGE(%q)", a, b, k), bit.SeekGE([]byte(k)), want, lo, hi, bit)
		if err := bit.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
}

func keyOf(es []entry, i int) string {
	if i < 0 || i >= len(es) {
		return ""
	}
	return es[i].Key
}
