package builder_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// TestMinLZExpansionBound: MinLZ tables at readers' decode bound. A
// reader refuses a table whose largest block could not come from its
// data (tag 16 over 22·DataSize+16, snappy's worst expansion), and MinLZ
// shrinks a run of one byte far more than that (1 MiB to 10 bytes), so
// the builder stores a block whose MinLZ encoding would decode to more
// than 22·stored+16 bytes some other way (package format, "MinLZ
// block"). Single-entry tables of one repeated byte are built at every
// value length from 450 to 650 bytes, where the block's MinLZ ratio
// crosses the bound (at the default level a 544-byte block stored in 24
// bytes is exactly at it, 545 bytes in 24 just over), and tables of
// large runs among other entries, at every MinLZ level: each data block
// is MinLZ exactly when its MinLZ encoding is within the bound and saves
// 12.5%, no MinLZ block exceeds the bound, and every table opens and
// reads back. The tables must hit the bound exactly and pass it by one
// byte. Without the bound a builder writes tables it cannot open ("max
// block size 1048590 is impossible for 50 bytes of data"; here the 4 KiB
// run), and blocks just over it that the reader's looser table-wide
// check lets through.
func TestMinLZExpansionBound(t *testing.T) {
	levels := []format.CompressionLevel{format.LevelDefault, format.LevelBetter, format.LevelBest}
	var tables [][]pair
	for n := 450; n <= 650; n++ {
		tables = append(tables, []pair{{"k", strings.Repeat("z", n)}})
	}
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20, 3 << 20} {
		tables = append(tables,
			[]pair{{"a", strings.Repeat("z", n)}},
			[]pair{{"a", "x"}, {"b", strings.Repeat("z", n)}, {"c", "y"}},
			pairs(40, func(i int) string { return strings.Repeat(fmt.Sprint(i%3), n/40) }),
		)
	}
	atBound, overBound := 0, 0
	for _, level := range levels {
		opts := &builder.Options{Compression: format.MinLZCompression, CompressionLevel: level}
		for _, ps := range tables {
			data, props := buildPairs(t, ps, opts)
			got, _ := readBack(t, data)
			if diff := cmp.Diff(ps, got); diff != "" {
				t.Fatalf("level %d, %d entries, first value %d bytes: (-want +got):\n%s", level, len(ps), len(ps[0].V), diff)
			}
			if props.MaxBlockSize > 22*props.DataSize+16 {
				t.Fatalf("level %d: max block size %d for %d data bytes", level, props.MaxBlockSize, props.DataSize)
			}
			for _, b := range blocksOf(t, data) {
				z, ok := codec.AppendMinLZ(nil, b.Contents, level)
				within := ok && len(b.Contents) <= 22*len(z)+16
				saves := ok && len(z) < len(b.Contents)-len(b.Contents)/8
				if b.Type == format.BlockTypeMinLZ {
					if stored := int(b.Handle.Length); len(b.Contents) > 22*stored+16 {
						t.Fatalf("level %d: MinLZ block of %d bytes stored in %d, over the bound %d", level, len(b.Contents), stored, 22*stored+16)
					}
				}
				if want := within && saves; (b.Type == format.BlockTypeMinLZ) != want {
					t.Fatalf("level %d: block of %d bytes (MinLZ: %d bytes) stored as type %d; MinLZ within the bound %v, saves 12.5%% %v", level, len(b.Contents), len(z), b.Type, within, saves)
				}
				switch {
				case saves && len(b.Contents) == 22*len(z)+16:
					atBound++
				case saves && len(b.Contents) == 22*len(z)+17:
					overBound++
				}
			}
		}
	}
	if atBound == 0 || overBound == 0 {
		t.Fatalf("%d blocks exactly at the bound and %d one byte over it: the tables do not cross it", atBound, overBound)
	}
}
