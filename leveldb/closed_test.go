package leveldb_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// mover is what the closed tests ask of an iterator: a table's, a
// level's or the DB's.
type mover interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Err() error
}

// closedMoves makes every move of it and wants each to return false with
// an error wrapping ErrClosed, and no panic. When positioned (by the
// caller, before the Close), Next and Prev come first: a move from the
// current entry is what an unclosed scan makes. (Next and Prev of an
// unpositioned iterator return false, as before the Close.)
func closedMoves(t *testing.T, what string, it mover, positioned, prefixes bool) {
	t.Helper()
	moves := []struct {
		name string
		move func() bool
	}{
		{"Next", it.Next},
		{"Prev", it.Prev},
		// Seeks that find no table to open, first on an unpositioned
		// iterator: they once reported the end of the data.
		{"SeekGE(zz)", func() bool { return it.SeekGE([]byte("zz")) }},
		{"SeekLT(\"\")", func() bool { return it.SeekLT([]byte("")) }},
		{"First", it.First},
		{"Last", it.Last},
		{"SeekGE(k1)", func() bool { return it.SeekGE([]byte("k1")) }},
		{"SeekLT(k5)", func() bool { return it.SeekLT([]byte("k5")) }},
	}
	if p, ok := it.(interface {
		SeekPrefixGE(prefix, key []byte) bool
		SeekPrefixLT(prefix, key []byte) bool
	}); ok && prefixes {
		moves = append(moves,
			struct {
				name string
				move func() bool
			}{"SeekPrefixGE(k)", func() bool { return p.SeekPrefixGE([]byte("k"), []byte("k")) }},
			struct {
				name string
				move func() bool
			}{"SeekPrefixLT(k)", func() bool { return p.SeekPrefixLT([]byte("k"), []byte("kz")) }})
	}
	if !positioned {
		moves = moves[2:]
	}
	for _, m := range moves {
		ok, panicked := func() (ok bool, panicked any) {
			defer func() { panicked = recover() }()
			return m.move(), nil
		}()
		if panicked != nil {
			t.Errorf("%s: %s after Close panics: %v", what, m.name, panicked)
			return
		}
		if ok || !errors.Is(it.Err(), leveldb.ErrClosed) {
			t.Errorf("%s: %s after Close = %v, Err %v; want false and ErrClosed", what, m.name, ok, it.Err())
			return
		}
	}
}

// closedDB writes a database: two level 1 tables of several blocks each
// (keys k0000.. k3999) when tables, a log of a few writes when log.
func closedDB(t *testing.T, tables, log, snappy bool) string {
	t.Helper()
	dir := t.TempDir()
	var es []ldbtest.Entry
	for i := range 4000 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", i)), Seq: uint64(10 + i), Kind: 1, Value: []byte("value-value-value")})
	}
	var tfs []ldbtest.TableFile
	if tables {
		tfs = []ldbtest.TableFile{{Level: 1, Number: 5, Entries: es[:2000]}, {Level: 1, Number: 6, Entries: es[2000:]}}
	}
	var batches [][]ldbtest.Entry
	if log {
		batches = [][]ldbtest.Entry{{{Key: []byte("k0001x"), Kind: 1, Value: []byte("x")}, {Key: []byte("k3000"), Kind: 0}, {Key: []byte("m"), Kind: 1, Value: []byte("y")}}}
	}
	if err := ldbtest.WriteDB(dir, tfs, batches, 5000, ldbtest.Options{BlockSize: 4096, Snappy: snappy}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestClosedDB uses a DB's iterator, levels and Get after DB.Close:
// every move and lookup must fail with ErrClosed, whether the iterator
// sits on a mapped block (a move once panicked on the unmapped file), on
// a cached or decoded one (the scan went on, then ended with no error),
// in the log's level (which read on as if open) or in an empty
// database.
func TestClosedDB(t *testing.T) {
	for _, tc := range []struct {
		name                string
		tables, log, snappy bool
	}{
		{"tables", true, false, false},
		{"tables-snappy", true, false, true},
		{"tables-log", true, true, false},
		{"log", false, true, false},
		{"empty", false, false, false},
	} {
		for _, noMmap := range []bool{false, true} {
			what := fmt.Sprintf("%s noMmap=%v", tc.name, noMmap)
			dir := closedDB(t, tc.tables, tc.log, tc.snappy)
			db, err := leveldb.OpenDB(dir, &leveldb.Options{NoMmap: noMmap})
			if err != nil {
				t.Fatal(err)
			}
			// The DB's iterator on the last key of the second table's
			// first block, and one on the first table's first key.
			it := db.NewIterator(nil)
			it2 := db.NewIterator(nil)
			if tc.tables && (!it.SeekGE([]byte("k2005")) || !it2.First()) {
				t.Fatalf("%s: seeks before Close: %v %v", what, it.Err(), it2.Err())
			}
			if tc.log && !tc.tables && !it.First() {
				t.Fatalf("%s: First before Close: %v", what, it.Err())
			}
			// Each level's own iterator, on its first key.
			var lits []merge.LevelIterator
			for _, l := range db.Levels() {
				li := l.NewIter(nil)
				if !li.First() {
					t.Fatalf("%s: a level's First before Close: %v", what, li.Err())
				}
				lits = append(lits, li)
			}
			levels := db.Levels()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			closedMoves(t, what+": DB iterator", it, tc.tables || tc.log, true)
			closedMoves(t, what+": DB iterator from First", it2, tc.tables, true)
			if err := it.Close(); !errors.Is(err, leveldb.ErrClosed) {
				t.Errorf("%s: the DB iterator's Close after the DB's: %v, want ErrClosed", what, err)
			}
			it2.Close()
			closedMoves(t, what+": DB iterator made after Close", db.NewIterator(nil), false, true)
			for i, li := range lits {
				closedMoves(t, fmt.Sprintf("%s: level %d's iterator", what, i), li, true, true)
				li.Close()
			}
			for i, l := range levels {
				closedMoves(t, fmt.Sprintf("%s: level %d's iterator made after Close", what, i), l.NewIter(nil), false, true)
				for _, k := range []string{"", "k0001", "k0001x", "zz"} {
					if v, err := l.(merge.PointGetter).Get([]byte(k)); !errors.Is(err, leveldb.ErrClosed) {
						t.Errorf("%s: level %d: Get(%q) after Close = %q, %v; want ErrClosed", what, i, k, v, err)
					}
				}
			}
			for _, k := range []string{"", "k0001", "k0001x", "m", "zz"} {
				if v, err := db.Get([]byte(k)); !errors.Is(err, leveldb.ErrClosed) {
					t.Errorf("%s: Get(%q) after Close = %q, %v; want ErrClosed", what, k, v, err)
				}
			}
			if n, err := db.Verify(); !errors.Is(err, leveldb.ErrClosed) {
				t.Errorf("%s: Verify after Close = %d, %v; want ErrClosed", what, n, err)
			}
			if err := db.Close(); !errors.Is(err, leveldb.ErrClosed) {
				t.Errorf("%s: a second Close: %v, want ErrClosed", what, err)
			}
		}
	}
}

// TestClosedTable uses a table's iterator after Table.Close, mapped and
// not, raw and snappy: every move fails with ErrClosed (a move on a
// mapped block once panicked; one on a decoded block read on).
func TestClosedTable(t *testing.T) {
	var es []ldbtest.Entry
	for i := range 3000 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", i)), Seq: uint64(10 + i), Kind: 1, Value: []byte("value-value-value")})
	}
	for _, snappy := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "t.ldb")
		if err := os.WriteFile(path, ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 4096, Snappy: snappy}), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, noMmap := range []bool{false, true} {
			what := fmt.Sprintf("snappy=%v noMmap=%v", snappy, noMmap)
			tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
			if err != nil {
				t.Fatal(err)
			}
			it := tb.NewIter(nil)
			last := tb.NewIter(nil)  // on the last block, whose end is the table's
			early := tb.NewIter(nil) // unpositioned
			if !it.SeekGE([]byte("k1000")) || !last.SeekGE([]byte("k2998")) {
				t.Fatalf("%s: seeks: %v %v", what, it.Err(), last.Err())
			}
			if err := tb.Close(); err != nil {
				t.Fatal(err)
			}
			closedMoves(t, what, it, true, false)
			closedMoves(t, what+" on the last block", last, true, false)
			closedMoves(t, what+" unpositioned", early, false, false)
			closedMoves(t, what+" made after Close", tb.NewIter(nil), false, false)
			if _, err := tb.Get([]byte("k0001"), leveldb.MaxSequence); !errors.Is(err, leveldb.ErrClosed) {
				t.Errorf("%s: Get after Close: %v, want ErrClosed", what, err)
			}
			if _, err := tb.Get([]byte("zz"), leveldb.MaxSequence); !errors.Is(err, leveldb.ErrClosed) || errors.Is(err, reader.ErrNotFound) {
				t.Errorf("%s: Get of an absent key after Close: %v, want ErrClosed", what, err)
			}
			it.Close()
			last.Close()
		}
	}
}
