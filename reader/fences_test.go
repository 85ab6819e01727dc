package reader_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestFences checks the lookups of version 4 tables whose readers pass
// over slots by their blocks' fences: every key is found, before and
// after the fences are known, and absent keys (between keys, before the
// first, after the last, without the keys' common bytes, or differing
// from a key past its 8 bytes after them) are not, in tables whose keys
// are random, share a long prefix, are shorter than 8 bytes after it,
// or end in zero bytes; through a mapping and through an io.ReaderAt.
func TestFences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	kinds := map[string]func(i int) string{
		"random":   func(int) string { return fmt.Sprintf("%016x%x", rng.Uint64(), rng.IntN(1000)) },
		"prefixed": func(i int) string { return fmt.Sprintf("tenant/0042/user/%08d", i*3) },
		"short":    func(i int) string { return fmt.Sprintf("p/%c%c", 'a'+i/256%26, byte(i)) },
		"zeros":    func(i int) string { return fmt.Sprintf("z%03d", i%1000) + string(make([]byte, i/1000)) },
		"long":     func(i int) string { return fmt.Sprintf("k%08d", i/7) + fmt.Sprintf("%06d", i%7) },
	}
	for name, gen := range kinds {
		seen := map[string]bool{}
		var es []entry
		for i := 0; len(es) < 6000 && i < 100000; i++ {
			k := gen(i)
			if !seen[k] {
				seen[k] = true
				es = append(es, entry{Key: k, Value: fmt.Sprintf("v%d", i)})
			}
		}
		slices.SortFunc(es, func(a, b entry) int { return cmpStrings(a.Key, b.Key) })
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			for _, parted := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/parted=%v", name, c, parted), func(t *testing.T) {
					opts := &builder.Options{Compression: c, BlockSize: 256, PartitionThreshold: -1}
					if parted {
						opts.PartitionThreshold = 1
					}
					data, _ := build(t, es, opts)
					r, err := reader.Open(writeFile(t, t.TempDir(), data), nil)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					checkFences(t, r, es, seen)
					ra := openMem(t, data, nil) // over an io.ReaderAt: a one-level table's hash index is in the tail
					defer ra.Close()
					checkFences(t, ra, es, seen)
				})
			}
		}
	}
}

// checkFences looks every key of es up twice in r, and absent keys
// around them (seen holds es's keys).
func checkFences(t *testing.T, r *reader.Reader, es []entry, seen map[string]bool) {
	t.Helper()
	if p := r.Properties(); p.FormatVersion != format.Version4 {
		t.Fatalf("format version %d", p.FormatVersion)
	}
	for pass := 0; pass < 2; pass++ {
		for i, e := range es {
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("pass %d: Get(%q) = %q, %v", pass, e.Key, v, err)
			}
			absent := []string{e.Key + "\x00", e.Key[:len(e.Key)-1], "\x00" + e.Key, e.Key + "~"}
			if i+1 < len(es) {
				absent = append(absent, es[i+1].Key[:len(es[i+1].Key)-1]+"\x00")
			}
			for _, a := range absent {
				if seen[a] {
					continue
				}
				if _, err := r.Get([]byte(a)); !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("pass %d: Get(%q) of an absent key: %v", pass, a, err)
				}
				if ok, err := r.Has([]byte(a)); ok || err != nil {
					t.Fatalf("pass %d: Has(%q) of an absent key: %v, %v", pass, a, ok, err)
				}
			}
		}
	}
	if !reader.UsesHashIndex(r) {
		return
	}
	if known, blocks := reader.FencesKnown(r); blocks < 2 || known < blocks*9/10 {
		t.Fatalf("%d of %d blocks have fences after every key's Get", known, blocks)
	}
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
