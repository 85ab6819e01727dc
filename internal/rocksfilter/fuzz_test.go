package rocksfilter

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/format"
)

// FuzzParse: Parse never panics; it returns a known variant, an unknown
// one that matches everything, or an error wrapping format.ErrCorrupt;
// MayContain never panics on what it accepts, and matches everything
// when the variant is unknown. Seeded with the golden filters and each
// variant's metadata.
func FuzzParse(f *testing.F) {
	for _, g := range goldens {
		if b, err := os.ReadFile(filepath.Join("testdata", "golden", g.name+".filter")); err == nil {
			f.Add(b)
		}
	}
	for _, m := range [][]byte{{0xff, 0, 6, 0, 0}, {0xfe, 7, 2, 0, 0}, {6, 1, 0, 0, 0}, {0, 0, 0, 0, 0}, {0xfd, 0, 0, 0, 0}} {
		f.Add(append(make([]byte, 64), m...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fl, known, err := Parse(b, 7)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) || known {
				t.Fatalf("Parse: known %v, error %v not wrapping ErrCorrupt", known, err)
			}
			return
		}
		keys := [][]byte{nil, {0}, b[:min(len(b), 3)], b[:min(len(b), 9)], b[:min(len(b), 17)], b}
		for _, k := range keys {
			got := fl.MayContain(k)
			if !known && !got {
				t.Fatalf("unknown variant %s excluded %x", fl.Name(), k)
			}
		}
	})
}

// TestMayContainAllocs checks that queries of every variant allocate
// nothing.
func TestMayContainAllocs(t *testing.T) {
	for _, g := range goldens {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", g.name+".filter"))
		if err != nil {
			t.Fatal(err)
		}
		fl, _, err := Parse(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("some key of 20 bytes")
		long := make([]byte, 1000)
		if n := testing.AllocsPerRun(100, func() { fl.MayContain(key); fl.MayContain(long) }); n != 0 {
			t.Errorf("%s: MayContain allocates %v times", fl.Name(), n)
		}
	}
}

func BenchmarkMayContain(b *testing.B) {
	key := []byte("user0000123456789")
	for _, g := range goldens {
		contents, err := os.ReadFile(filepath.Join("testdata", "golden", g.name+".filter"))
		if err != nil {
			b.Fatal(err)
		}
		fl, _, err := Parse(contents, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(g.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				key[len(key)-1] = byte(i)
				fl.MayContain(key)
			}
		})
	}
}
