package crosscheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// keySets returns named key sets of several shapes and sizes.
func keySets() map[string][][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	sets := map[string][][]byte{}
	for _, n := range []int{0, 1, 2, 3, 7, 10, 64, 100, 1000, 10000, 100000} {
		var random, decimal, prefixed [][]byte
		for i := 0; i < n; i++ {
			k := make([]byte, rng.IntN(41)) // 0..40 bytes, every tail length
			for j := range k {
				k[j] = byte(rng.Uint32())
			}
			random = append(random, k)
			decimal = append(decimal, fmt.Appendf(nil, "%016d", 2*i))
			p := append([]byte("common-prefix"), 0, 0, 0, 0)
			binary.BigEndian.PutUint32(p[len(p)-4:], uint32(i))
			prefixed = append(prefixed, p)
		}
		sets[fmt.Sprintf("random/%d", n)] = random
		sets[fmt.Sprintf("decimal/%d", n)] = decimal
		sets[fmt.Sprintf("prefix/%d", n)] = prefixed
	}
	return sets
}

// TestLevelDBBloomMatchesGoleveldb builds every key set at bits/key 1..40
// with both implementations and requires identical filter bytes, and
// identical answers to probes of present and absent keys.
func TestLevelDBBloomMatchesGoleveldb(t *testing.T) {
	sets := keySets()
	filters := 0
	for name, keys := range sets {
		for bpk := 1; bpk <= 40; bpk++ {
			if len(keys) >= 10000 && bpk%7 != 3 { // keep the large sets to a few widths
				continue
			}
			ours := filterblock.LevelDBBloom(bpk)
			theirs := filter.NewBloomFilter(bpk)
			g, tg := ours.NewGenerator(), theirs.NewGenerator()
			for _, k := range keys {
				g.Add(k)
				tg.Add(k)
			}
			got := g.Generate(nil)
			buf := util.NewBuffer(nil)
			tg.Generate(buf)
			want := buf.Bytes()
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%s, %d bits/key: filters differ at byte %d (ours %d bytes, goleveldb %d bytes)", name, bpk, i, len(got), len(want))
			}
			filters++
			for i := 0; i < 200 && i < len(keys)+200; i++ {
				probe := fmt.Appendf(nil, "%016d", 2*i+1)
				if i < len(keys) {
					probe = keys[i]
				}
				if a, b := ours.MayContain(got, probe), theirs.Contains(want, probe); a != b {
					t.Fatalf("%s, %d bits/key: MayContain(%q) = %v, goleveldb Contains = %v", name, bpk, probe, a, b)
				}
			}
		}
	}
	t.Logf("%d filters byte-identical to goleveldb's", filters)
}

// TestLevelDBHashMatchesGoleveldb compares the 32-bit hash on inputs of
// every length 0..64 and several seeds.
func TestLevelDBHashMatchesGoleveldb(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 64; n++ {
		for trial := 0; trial < 50; trial++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			seed := rng.Uint32()
			if trial == 0 {
				seed = 0xbc9f1d34
			}
			if got, want := filterblock.LevelDBHash(b, seed), util.Hash(b, seed); got != want {
				t.Fatalf("LevelDBHash(%x, %#x) = %#x, goleveldb %#x", b, seed, got, want)
			}
		}
	}
}

// TestReaderRejectsLevelDBTable writes a real table with goleveldb and
// checks that the reader refuses it with a corruption error that says it
// is a LevelDB table.
func TestReaderRejectsLevelDBTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000001.ldb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := table.NewWriter(f, &opt.Options{Filter: filter.NewBloomFilter(10)}, nil, 0)
	for i := 0; i < 1000; i++ {
		if err := w.Append(fmt.Appendf(nil, "key%06d", i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err == nil {
		r.Close()
		t.Fatal("reader.Open accepted a goleveldb table")
	}
	var ce *format.CorruptError
	if !errors.Is(err, format.ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("error %v does not wrap format.ErrCorrupt as a *CorruptError", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("LevelDB")) || ce.Section != format.SectionFooter {
		t.Fatalf("error %q should name the footer and say it is a LevelDB table", err)
	}
	t.Log(err)
}
