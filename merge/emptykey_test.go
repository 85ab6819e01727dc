package merge_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// entries reads it from First to the end (or from Last to the start,
// backward) as "key=value" lines, checking that every positioned key is
// non-nil, since a nil Key means an unpositioned iterator.
func entries(t *testing.T, it *merge.Iterator, backward bool) []string {
	t.Helper()
	var got []string
	start, step := it.First, it.Next
	if backward {
		start, step = it.Last, it.Prev
	}
	for ok := start(); ok; ok = step() {
		if it.Key() == nil {
			t.Errorf("positioned on %q=%q with a nil Key", it.Key(), it.Value())
		}
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEmptyKeyScan reads tables and memtables holding the empty key, the
// least of all keys, through merge's iterator: a table starting at "" was
// skipped by First (a child's nil key stood for "not positioned", and the
// reader gives the empty key as nil on a fresh iterator).
func TestEmptyKeyScan(t *testing.T) {
	dir := t.TempDir()
	empA := table(t, dir, []string{"", "a"})
	bc := table(t, dir, []string{"b", "c"})
	empX := table(t, dir, []string{"", "x"})
	z := table(t, dir, []string{"z"})
	zero9 := table(t, dir, []string{"", strings.Repeat("\x00", 9)})
	zero8one := table(t, dir, []string{strings.Repeat("\x00", 8) + "1"})
	mem := &memLevel{keys: [][]byte{nil, []byte("m")}, vals: [][]byte{[]byte("mem"), []byte("vm")}} // a memtable may hold "" as nil
	for _, tc := range []struct {
		name   string
		levels []merge.Level
		want   []string
	}{
		{"alone", []merge.Level{merge.Tables(empA)}, []string{"=v", "a=va"}},
		{"under a newer table", []merge.Level{merge.Tables(bc), merge.Tables(empA)}, []string{"=v", "a=va", "b=vb", "c=vc"}},
		{"over an older table", []merge.Level{merge.Tables(empA), merge.Tables(bc)}, []string{"=v", "a=va", "b=vb", "c=vc"}},
		{"first of a level of two tables", []merge.Level{merge.Tables(empA, z)}, []string{"=v", "a=va", "z=vz"}},
		{"in two levels", []merge.Level{merge.Tables(empX), merge.Tables(empA)}, []string{"=v", "a=va", "x=vx"}},
		{"a memtable's nil key over a table", []merge.Level{mem, merge.Tables(empA)}, []string{"=mem", "a=va", "m=vm"}},
		{"a table under a memtable's nil key", []merge.Level{merge.Tables(bc), mem}, []string{"=mem", "b=vb", "c=vc", "m=vm"}},
		// The heap compares 8-byte key prefixes, zero-padded, first: "",
		// 0^9 and 0^8 1 have equal ones, and the newer level's key is the
		// greater.
		{"keys of equal 8-byte prefixes", []merge.Level{merge.Tables(zero8one), merge.Tables(zero9)},
			[]string{"=v", "\x00\x00\x00\x00\x00\x00\x00\x00\x00=v\x00\x00\x00\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00\x00\x001=v\x00\x00\x00\x00\x00\x00\x00\x001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := merge.NewIterator(tc.levels, nil)
			defer it.Close()
			for i := range 2 {
				if !it.First() || string(it.Key()) != "" || it.Key() == nil {
					t.Fatalf("First (call %d) = %v at %q (nil %v), want the empty key", i+1, it.Valid(), it.Key(), it.Key() == nil)
				}
			}
			if got := entries(t, it, false); !slices.Equal(got, tc.want) {
				t.Errorf("forward scan %q, want %q", got, tc.want)
			}
			back := slices.Clone(tc.want)
			slices.Reverse(back)
			if got := entries(t, it, true); !slices.Equal(got, back) {
				t.Errorf("backward scan %q, want %q", got, back)
			}
			// Turning at the empty key: Next after Prev, Prev after Next.
			if !it.SeekGE(nil) || it.Key() == nil || !it.Next() || !it.Prev() || it.Key() == nil || len(it.Key()) != 0 || it.Prev() {
				t.Errorf("SeekGE(nil), Next, Prev, Prev: at %q, valid %v", it.Key(), it.Valid())
			}
			second, _, _ := strings.Cut(tc.want[1], "=")
			if !it.SeekLT([]byte(second)) || it.Key() == nil || len(it.Key()) != 0 || !it.Next() || string(it.Key()) != second {
				t.Errorf("SeekLT(%q), Next: at %q, valid %v", second, it.Key(), it.Valid())
			}
			// Bounds: an empty lower bound admits every key, an empty
			// upper bound none; [nil, "\x00") holds only the empty key.
			it.SetBounds([]byte{}, nil)
			if got := entries(t, it, false); !slices.Equal(got, tc.want) {
				t.Errorf("lower bound \"\": forward scan %q, want %q", got, tc.want)
			}
			it.SetBounds(nil, []byte{0})
			if got := entries(t, it, false); !slices.Equal(got, tc.want[:1]) {
				t.Errorf("upper bound \"\\x00\": forward scan %q, want %q", got, tc.want[:1])
			}
			it.SetBounds(nil, []byte{})
			if it.First() || it.Last() {
				t.Errorf("upper bound \"\": positioned at %q", it.Key())
			}
			if v, err := merge.Get(tc.levels, nil, nil); err != nil || "="+string(v) != tc.want[0] {
				t.Errorf("Get(\"\") = %q, %v; want %q", v, err, tc.want[0][1:])
			}
		})
	}
}

// TestCompactEmptyKey compacts levels whose least key is the empty key,
// to the bottom and not: a table starting at "" was dropped whole, and
// Compact wrote nothing and returned no error.
func TestCompactEmptyKey(t *testing.T) {
	dir := t.TempDir()
	empA := table(t, dir, []string{"", "a"})
	bc := table(t, dir, []string{"b", "c"})
	delEmpty := table(t, dir, []string{"", "b"}) // values "v" and "vb"
	isV := func(v []byte) bool { return bytes.Equal(v, []byte("v")) }
	for _, tc := range []struct {
		name   string
		levels []merge.Level
		del    bool // the value "v" (the empty key's) is a deletion
		bottom bool
		want   []string // the output's entries
	}{
		{"one table, bottom", []merge.Level{merge.Tables(empA)}, false, true, []string{"=v", "a=va"}},
		{"one table", []merge.Level{merge.Tables(empA)}, false, false, []string{"=v", "a=va"}},
		{"under a newer table, bottom", []merge.Level{merge.Tables(bc), merge.Tables(empA)}, false, true, []string{"=v", "a=va", "b=vb", "c=vc"}},
		{"under a newer table", []merge.Level{merge.Tables(bc), merge.Tables(empA)}, false, false, []string{"=v", "a=va", "b=vb", "c=vc"}},
		// The empty key's deletion is kept above the bottom, dropped at it.
		{"its deletion", []merge.Level{merge.Tables(delEmpty), merge.Tables(empA)}, true, false, []string{"=v", "a=va", "b=vb"}},
		{"its deletion, bottom", []merge.Level{merge.Tables(delEmpty), merge.Tables(empA)}, true, true, []string{"a=va", "b=vb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &merge.CompactOptions{Dir: filepath.Join(t.TempDir(), "out"), Bottom: tc.bottom}
			if tc.del {
				o.IsDeletion = isV
			}
			infos, err := merge.Compact(tc.levels, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ti := range infos {
				r, err := reader.Open(ti.Path, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range r.All(&err) {
					got = append(got, string(k)+"="+string(v))
				}
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Compact wrote %d tables holding %q, want %q", len(infos), got, tc.want)
			}
			if first := tc.want[0]; first[0] == '=' && (infos[0].Smallest == nil || len(infos[0].Smallest) != 0) {
				t.Errorf("TableInfo.Smallest = %q (nil %v), want the empty key, not nil (nil means no points)", infos[0].Smallest, infos[0].Smallest == nil)
			}
			man, err := bulk.ReadManifest(filepath.Join(o.Dir, bulk.ManifestName))
			if err != nil || len(man.Tables) != len(infos) {
				t.Fatalf("manifest: %+v, %v; want %d tables", man, err, len(infos))
			}
		})
	}
}
