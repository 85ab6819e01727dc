package merge_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// These tests pin, case by case, bugs that the model tests catch only
// when rapid draws the right case.

// sharedTable writes a table of keys, each valued value+key, with opts,
// and opens it.
func sharedTable(t *testing.T, opts *builder.Options, value string, keys ...string) *reader.Reader {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.sst")
	b, err := builder.Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := b.Add([]byte(k), []byte(value+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestKeysSharing8Bytes merges three levels whose keys share their first
// 8 bytes, which the merge heap compares first as one number (zero-
// padded, so "", "\x00" and eight 0x00 bytes have the same): only whole
// keys order them, and a heap that took equal prefixes for equal keys
// would show one key for several, or the wrong level's value. Scans both
// ways, every seek and Get are checked.
func TestKeysSharing8Bytes(t *testing.T) {
	z8 := strings.Repeat("\x00", 8)
	a8 := "aaaaaaaa"
	f8 := strings.Repeat("\xff", 8)
	levels := [][]string{
		{"\x00", z8, a8 + "\x01", a8 + "\x03", f8},
		{"", "\x00\x00", z8 + "\x00", a8, a8 + "\x01", a8 + "\x02", f8 + "\x00"},
		{"", "\x00", "\x00\x00\x00", z8 + "\x00\x00", a8 + "\x00", a8 + "\x02", f8, f8 + "\xff"},
	}
	newest := map[string]string{} // key -> the newest level's value
	var ls []merge.Level
	for li, keys := range levels {
		ls = append(ls, merge.Tables(sharedTable(t, nil, fmt.Sprintf("L%d:", li), keys...)))
		for _, k := range keys {
			if _, ok := newest[k]; !ok {
				newest[k] = fmt.Sprintf("L%d:", li) + k
			}
		}
	}
	var want []string
	for k := range newest {
		want = append(want, k)
	}
	sort.Strings(want)
	it := merge.NewIterator(ls, nil)
	defer it.Close()
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Value()) != newest[string(it.Key())] {
			t.Fatalf("forward: %q = %q, want %q", it.Key(), it.Value(), newest[string(it.Key())])
		}
		got = append(got, string(it.Key()))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("forward scan\n got %q\nwant %q", got, want)
	}
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key()))
	}
	slices.Reverse(got)
	if !slices.Equal(got, want) {
		t.Fatalf("reverse scan\n got %q\nwant %q", got, want)
	}
	for i, k := range want {
		if !it.SeekGE([]byte(k)) || string(it.Key()) != k || string(it.Value()) != newest[k] {
			t.Fatalf("SeekGE(%q): %v %q=%q", k, it.Valid(), it.Key(), it.Value())
		}
		if it.Next() != (i+1 < len(want)) || i+1 < len(want) && string(it.Key()) != want[i+1] {
			t.Fatalf("Next after SeekGE(%q): %q, want %q", k, it.Key(), want[min(i+1, len(want)-1)])
		}
		ok := it.SeekLT([]byte(k))
		if ok != (i > 0) || i > 0 && string(it.Key()) != want[i-1] {
			t.Fatalf("SeekLT(%q): %v %q", k, ok, it.Key())
		}
		v, err := merge.Get(ls, []byte(k), nil)
		if err != nil || string(v) != newest[k] {
			t.Fatalf("Get(%q) = %q, %v; want %q", k, v, err, newest[k])
		}
	}
	for _, k := range []string{z8 + "\x01", a8 + "\x04", "\x00\x00\x00\x00"} {
		if _, err := merge.Get(ls, []byte(k), nil); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) of an absent key: %v", k, err)
		}
	}
}

// TestTablesSpanAtEnd looks up the fragment covering each key of a
// level of two tables whose spans meet at the second's first key: a
// fragment's end is exclusive, so that key is covered by the second
// table's fragment, not the first's. Get over an older level holding
// the key sees it deleted.
func TestTablesSpanAtEnd(t *testing.T) {
	dir := t.TempDir()
	t1 := table(t, dir, []string{"a"}, "a", "c")
	t2 := table(t, dir, []string{"d"}, "c", "e")
	level := merge.Tables(t1, t2)
	g, ok := level.(merge.PointGetter)
	if !ok {
		t.Fatal("Tables is not a PointGetter")
	}
	for _, c := range []struct{ key, start, end string }{
		{"", "", ""}, {"a", "a", "c"}, {"b", "a", "c"}, {"bz", "a", "c"},
		{"c", "c", "e"}, {"d", "c", "e"}, {"e", "", ""}, {"z", "", ""},
	} {
		sp, err := g.SpanAt([]byte(c.key))
		if c.start == "" {
			if !errors.Is(err, reader.ErrNotFound) {
				t.Errorf("SpanAt(%q) = [%q, %q), %v; want none", c.key, sp.Start, sp.End, err)
			}
			continue
		}
		if err != nil || string(sp.Start) != c.start || string(sp.End) != c.end {
			t.Errorf("SpanAt(%q) = [%q, %q), %v; want [%q, %q)", c.key, sp.Start, sp.End, err, c.start, c.end)
		}
	}
	older := merge.Tables(table(t, dir, []string{"b", "c", "e"}))
	o := &merge.Options{IsRangeDeletion: func(v []byte) bool { return string(v) == "RD" }}
	for k, want := range map[string]bool{"b": false, "c": false, "e": true} {
		_, err := merge.Get([]merge.Level{level, older}, []byte(k), o)
		if (err == nil) != want || err != nil && !errors.Is(err, reader.ErrNotFound) {
			t.Errorf("Get(%q) over the older level: %v, want found %v", k, err, want)
		}
	}
}

// TestTablesPrefixAcrossTables walks prefix iteration mode across the
// tables of a level, where a prefix's keys go on in the next (or the
// previous) table and stop before a key of another prefix there: Next
// and Prev seek the neighbouring table with the prefix, and return
// false at the first key without it. Checked on the level's own
// iterator and through merge.NewIterator, over plain keys (prefixes by
// bytes.HasPrefix) and keys with a splitter (format.Suffix(1)).
func TestTablesPrefixAcrossTables(t *testing.T) {
	type move struct {
		op         string // "ge", "lt", "next", "prev"
		prefix     string
		key        string // for the seeks
		want       string // "" for false
		wantResult bool
	}
	cases := []struct {
		tables [][]string
		moves  []move
	}{
		{
			tables: [][]string{{"a1", "a2"}, {"a3", "b1"}, {"b2", "c1"}},
			moves: []move{
				{"ge", "a", "a1", "a1", true}, {"next", "", "", "a2", true}, {"next", "", "", "a3", true}, {"next", "", "", "", false},
				{"ge", "b", "b0", "b1", true}, {"next", "", "", "b2", true}, {"next", "", "", "", false},
				{"lt", "b", "c", "b2", true}, {"prev", "", "", "b1", true}, {"prev", "", "", "", false},
				{"lt", "a", "b", "a3", true}, {"prev", "", "", "a2", true}, {"prev", "", "", "a1", true}, {"prev", "", "", "", false},
				{"ge", "c", "c1", "c1", true}, {"prev", "", "", "", false},
				{"lt", "a", "a3", "a2", true}, {"next", "", "", "a3", true}, {"next", "", "", "", false},
			},
		},
		{
			tables: [][]string{{"a1"}, {"b1"}, {"b2"}, {"c1"}},
			moves: []move{
				{"ge", "a", "a1", "a1", true}, {"next", "", "", "", false},
				{"ge", "b", "b1", "b1", true}, {"next", "", "", "b2", true}, {"next", "", "", "", false},
				{"lt", "b", "b3", "b2", true}, {"prev", "", "", "b1", true}, {"prev", "", "", "", false},
				{"lt", "c", "d", "c1", true}, {"prev", "", "", "", false},
			},
		},
	}
	for _, splitter := range []bool{false, true} {
		var opts *builder.Options
		if splitter {
			opts = &builder.Options{Splitter: format.Suffix(1)}
		}
		for ci, c := range cases {
			var rs []*reader.Reader
			for _, keys := range c.tables {
				rs = append(rs, sharedTable(t, opts, "v", keys...))
			}
			level := merge.Tables(rs...)
			// A newer level of one key, far from the prefixes, so that
			// the merging iterator's heap has two children.
			newer := merge.Tables(sharedTable(t, opts, "n", "x1"))
			iters := map[string]merge.LevelIterator{
				"level": level.NewIter(nil),
				"merge": merge.NewIterator([]merge.Level{newer, level}, nil),
			}
			for name, it := range iters {
				for mi, m := range c.moves {
					var ok bool
					switch m.op {
					case "ge":
						ok = it.SeekPrefixGE([]byte(m.prefix), []byte(m.key))
					case "lt":
						ok = it.SeekPrefixLT([]byte(m.prefix), []byte(m.key))
					case "next":
						ok = it.Next()
					case "prev":
						ok = it.Prev()
					}
					if err := it.Err(); err != nil {
						t.Fatal(err)
					}
					if ok != m.wantResult || ok && !bytes.Equal(it.Key(), []byte(m.want)) {
						var k []byte
						if ok {
							k = it.Key()
						}
						t.Fatalf("splitter %v, case %d, %s: move %d %+v: %v %q", splitter, ci, name, mi, m, ok, k)
					}
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
