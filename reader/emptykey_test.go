package reader_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestEmptyKeyIsPositioned checks that a table whose first key is the
// empty key shows it as a non-nil, empty Key from every move that lands
// on it: Key documents nil as "not positioned", and merge's iterator
// skipped whole tables whose fresh iterator gave the empty key as nil.
func TestEmptyKeyIsPositioned(t *testing.T) {
	es := []entry{{"", "empty"}, {"\x00", "zero"}, {"a", "va"}, {"\xff", "ff"}}
	for _, tc := range []struct {
		name string
		o    *builder.Options
	}{
		{"default", nil},
		{"v1", &builder.Options{FormatVersion: 1}},
		{"v3 restart 1", &builder.Options{FormatVersion: 3, RestartInterval: 1}},
		{"hash index", &builder.Options{HashIndex: true, FormatVersion: 3}},
		{"block per entry", &builder.Options{BlockSize: 1}}, // the empty key opens a block alone
	} {
		data, _ := build(t, es, tc.o)
		t.Run(tc.name, func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
				got, err := scan(r)
				if err != nil || !slices.Equal(got, es) {
					t.Fatalf("scan: %q, %v; want %q", got, err, es)
				}
				atEmpty := func(what string, it *reader.Iterator, ok bool) {
					t.Helper()
					if !ok || it.Key() == nil || len(it.Key()) != 0 || string(it.Value()) != "empty" {
						t.Errorf("%s: ok %v, at %q=%q (nil key %v); want the empty key, not nil", what, ok, it.Key(), it.Value(), it.Key() == nil)
					}
				}
				for _, lower := range [][]byte{nil, {}} {
					// A fresh iterator for each move: the key buffer of
					// a fresh iterator is where the nil came from.
					it := r.NewIter(&reader.IterOptions{LowerBound: lower})
					atEmpty(fmt.Sprintf("lower %q: First", lower), it, it.First())
					it.Close()
					it = r.NewIter(&reader.IterOptions{LowerBound: lower})
					atEmpty(fmt.Sprintf("lower %q: SeekGE(nil)", lower), it, it.SeekGE(nil))
					it.Close()
					it = r.NewIter(&reader.IterOptions{LowerBound: lower})
					atEmpty(fmt.Sprintf("lower %q: SeekLT(\\x00)", lower), it, it.SeekLT([]byte{0}))
					it.Close()
					it = r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: []byte{0}})
					atEmpty(fmt.Sprintf("lower %q, upper \\x00: Last", lower), it, it.Last())
					it.Close()
					it = r.NewIter(&reader.IterOptions{LowerBound: lower})
					if it.Last() {
						for it.Prev() && len(it.Key()) > 0 {
						}
					}
					atEmpty(fmt.Sprintf("lower %q: Last, Prev...", lower), it, it.Valid())
					it.Close()
				}
				if v, err := r.Get(nil); err != nil || string(v) != "empty" {
					t.Errorf("Get(nil) = %q, %v", v, err)
				}
			})
		})
	}
}
