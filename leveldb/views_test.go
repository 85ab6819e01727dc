package leveldb_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// abcDB writes a database holding a1, b1, b2, c1 (and 0xff 0xff 1) in
// the log, in a level 0 table or in a level 1 table.
func abcDB(t *testing.T, where string) string {
	t.Helper()
	dir := t.TempDir()
	var es []ldbtest.Entry
	for i, k := range []string{"a1", "b1", "b2", "c1", "\xff\xff1"} {
		es = append(es, ldbtest.Entry{Key: []byte(k), Seq: uint64(10 - i), Kind: 1, Value: []byte("v" + k)})
	}
	var err error
	switch where {
	case "log":
		err = ldbtest.WriteDB(dir, nil, [][]ldbtest.Entry{es}, 20, ldbtest.Options{})
	case "level0", "level1":
		err = ldbtest.WriteDB(dir, []ldbtest.TableFile{{Level: int(where[5] - '0'), Number: 5, Entries: es}}, nil, 20, ldbtest.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPrefixSeeks checks that the prefix seeks of the DB's iterator and
// of each of its levels move as reader.Iterator's do: a key below the
// prefix seeks from the prefix, a key above the prefix's keys finds
// their last, a key at or below the prefix finds none for SeekPrefixLT.
// The log's level once sought the key itself and refused what it found.
func TestPrefixSeeks(t *testing.T) {
	type prefixIter interface {
		SeekPrefixGE(prefix, key []byte) bool
		SeekPrefixLT(prefix, key []byte) bool
		Next() bool
		Prev() bool
		Key() []byte
		Err() error
	}
	cases := []struct {
		ge          bool
		prefix, key string
		want        string // "" for none
		then        string // Next after SeekPrefixGE, Prev after SeekPrefixLT
	}{
		{true, "b", "a", "b1", "b2"},
		{true, "b", "b", "b1", "b2"},
		{true, "b", "b15", "b2", ""},
		{true, "b", "b3", "", ""},
		{true, "b", "c", "", ""},
		{false, "b", "z", "b2", "b1"},
		{false, "b", "c", "b2", "b1"},
		{false, "b", "b2", "b1", ""},
		{false, "b", "b", "", ""},
		{false, "b", "a", "", ""},
		{false, "\xff\xff", "\xff\xff\xff", "\xff\xff1", ""}, // no key lies above the prefix's keys
		{true, "", "a2", "b1", "b2"},
		{false, "", "b2", "b1", "a1"},
	}
	for _, where := range []string{"log", "level0", "level1"} {
		db, err := leveldb.OpenDB(abcDB(t, where), nil)
		if err != nil {
			t.Fatal(err)
		}
		iters := map[string]prefixIter{"DB": db.NewIterator(nil)}
		for i, l := range db.Levels() {
			iters[fmt.Sprintf("level %d", i)] = l.NewIter(nil)
		}
		for name, it := range iters {
			for _, c := range cases {
				what := fmt.Sprintf("%s, %s: SeekPrefixLT(%q, %q)", where, name, c.prefix, c.key)
				seek, then := it.SeekPrefixLT, it.Prev
				if c.ge {
					what = fmt.Sprintf("%s, %s: SeekPrefixGE(%q, %q)", where, name, c.prefix, c.key)
					seek, then = it.SeekPrefixGE, it.Next
				}
				ok := seek([]byte(c.prefix), []byte(c.key))
				if ok != (c.want != "") || ok && string(it.Key()) != c.want || it.Err() != nil {
					t.Errorf("%s = %v %q, %v; want %q", what, ok, it.Key(), it.Err(), c.want)
					continue
				}
				if !ok {
					continue
				}
				if ok := then(); ok != (c.then != "") || ok && string(it.Key()) != c.then {
					t.Errorf("%s, then a move = %v %q; want %q", what, ok, it.Key(), c.then)
				}
			}
		}
		for _, it := range iters {
			it.(interface{ Close() error }).Close()
		}
		db.Close()
	}
}

// TestBoundsCopied checks that every iterator of package leveldb copies
// its bounds, as merge's and reader's do: the caller's slices changed
// after NewIterator, NewIter or SetBounds change nothing. A table's and a
// level's iterators once kept them.
func TestBoundsCopied(t *testing.T) {
	for _, where := range []string{"log", "level1"} {
		dir := abcDB(t, where)
		db, err := leveldb.OpenDB(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := func(it interface {
			First() bool
			Next() bool
			Key() []byte
		}) string {
			var ks []string
			for ok := it.First(); ok; ok = it.Next() {
				ks = append(ks, string(it.Key()))
			}
			return fmt.Sprint(ks)
		}
		const want = "[b1 b2]"
		lower, upper := []byte("b"), []byte("c")
		clobber := func() { copy(lower, "a"); copy(upper, "z") }
		restore := func() { copy(lower, "b"); copy(upper, "c") }

		dbIt := db.NewIterator(&leveldb.IterOptions{LowerBound: lower, UpperBound: upper})
		var levelIts []merge.LevelIterator
		for _, l := range db.Levels() {
			levelIts = append(levelIts, l.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper}))
		}
		clobber()
		if got := keys(dbIt); got != want {
			t.Errorf("%s: DB iterator with its caller's bounds changed: %s, want %s", where, got, want)
		}
		for i, it := range levelIts {
			if got := keys(it); got != want {
				t.Errorf("%s: level %d's iterator with its caller's bounds changed: %s, want %s", where, i, got, want)
			}
			restore()
			it.SetBounds(lower, upper)
			clobber()
			if got := keys(it); got != want {
				t.Errorf("%s: level %d's iterator after SetBounds, its caller's bounds changed: %s, want %s", where, i, got, want)
			}
			it.Close()
		}
		restore()
		dbIt.Close()
		db.Close()
		if where != "level1" {
			continue
		}
		tb, err := leveldb.OpenTable(filepath.Join(dir, "000005.ldb"), nil)
		if err != nil {
			t.Fatal(err)
		}
		it := tb.NewIter(&leveldb.IterOptions{LowerBound: lower, UpperBound: upper})
		clobber()
		if got := keys(it); got != want {
			t.Errorf("table iterator with its caller's bounds changed: %s, want %s", got, want)
		}
		restore()
		it.SetBounds(lower, upper)
		clobber()
		if got := keys(it); got != want {
			t.Errorf("table iterator after SetBounds, its caller's bounds changed: %s, want %s", got, want)
		}
		it.Close()
		tb.Close()
	}
}

// TestMissingManifest: a MANIFEST that CURRENT names and the directory
// lacks is damage to the database, classified as a missing table is
// (format.ErrCorrupt and os.ErrNotExist); a directory with no CURRENT
// holds no database (os.ErrNotExist alone).
func TestMissingManifest(t *testing.T) {
	dir := abcDB(t, "level1")
	if err := os.Remove(filepath.Join(dir, "MANIFEST-000001")); err != nil {
		t.Fatal(err)
	}
	_, err := leveldb.OpenDB(dir, nil)
	if !errors.Is(err, format.ErrCorrupt) || !errors.Is(err, os.ErrNotExist) || !bytes.Contains([]byte(err.Error()), []byte("MANIFEST-000001")) {
		t.Errorf("OpenDB without the MANIFEST CURRENT names: %v; want ErrCorrupt and ErrNotExist, naming it", err)
	}
	_, err = leveldb.OpenDB(t.TempDir(), nil)
	if !errors.Is(err, os.ErrNotExist) || errors.Is(err, format.ErrCorrupt) {
		t.Errorf("OpenDB of an empty directory: %v; want ErrNotExist alone", err)
	}
}
