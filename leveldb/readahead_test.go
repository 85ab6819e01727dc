package leveldb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sstkit/sstable/internal/ldbtest"
)

// TestReadAheadDB checks that the read-ahead is off unless Options or
// TableOptions turn it on, and that with it on, as off, goroutines
// scanning, seeking and closing iterators at once over a level of four
// tables and a newer level-0 table read the database's view (under
// -race: the workers' hand-over between tables and iterators). The
// goroutines have a deadline.
func TestReadAheadDB(t *testing.T) {
	dir := t.TempDir()
	const n = 6000
	var tables []ldbtest.TableFile
	view := make([][2][]byte, n) // key, newest value
	var l0 []ldbtest.Entry
	for i := range n {
		k := []byte(fmt.Sprintf("key%06d", i))
		v := bytes.Repeat([]byte{byte(i)}, 20+i%50)
		if i%(n/4) == 0 {
			tables = append(tables, ldbtest.TableFile{Level: 1, Number: uint64(5 + i/(n/4))})
		}
		tf := &tables[len(tables)-1]
		tf.Entries = append(tf.Entries, ldbtest.Entry{Key: k, Seq: uint64(i + 1), Kind: 1, Value: v})
		view[i] = [2][]byte{k, v}
		if i%7 == 0 {
			v = append([]byte("new"), v...)
			l0 = append(l0, ldbtest.Entry{Key: k, Seq: uint64(n + i + 1), Kind: 1, Value: v})
			view[i][1] = v
		}
	}
	tables = append(tables, ldbtest.TableFile{Level: 0, Number: 20, Entries: l0})
	if err := ldbtest.WriteDB(dir, tables, nil, 3*n, ldbtest.Options{BlockSize: 256, Snappy: true}); err != nil {
		t.Fatal(err)
	}

	for _, o := range []*TableOptions{nil, {}, {ReadAhead: true}} {
		tb, err := OpenTable(filepath.Join(dir, "000005.ldb"), o)
		if err != nil {
			t.Fatal(err)
		}
		if want := o != nil && o.ReadAhead; tb.core.ReadAhead() != want {
			t.Errorf("OpenTable with %+v: read-ahead %v, want %v", o, tb.core.ReadAhead(), want)
		}
		tb.Close()
	}
	for _, on := range []bool{false, true} {
		db, err := OpenDB(dir, &Options{ReadAhead: on})
		if err != nil {
			t.Fatal(err)
		}
		for _, lt := range db.tables {
			tb, err := lt.Get()
			if err != nil {
				t.Fatal(err)
			}
			if tb.ReadAhead() != on {
				t.Fatalf("OpenDB with ReadAhead %v: table %s reads ahead: %v", on, lt.Path, tb.ReadAhead())
			}
		}
		errs := make(chan error, 4)
		for g := range cap(errs) {
			go func() { errs <- readAheadScans(db, view, uint64(g)) }()
		}
		deadline := time.After(2 * time.Minute)
		for range cap(errs) {
			select {
			case err := <-errs:
				if err != nil {
					t.Fatalf("read-ahead %v: %v", on, err)
				}
			case <-deadline:
				t.Fatalf("read-ahead %v: the scans did not end within 2 minutes", on)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.GOMAXPROCS(0) == 1 {
		t.Log("GOMAXPROCS 1: the read-ahead never starts")
	}
}

// readAheadScans scans db forward from random keys, for random lengths,
// moving back now and then and closing iterators in mid-scan, and
// compares every entry with view.
func readAheadScans(db *DB, view [][2][]byte, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 49))
	for round := range 20 {
		it := db.NewIterator(nil)
		i := 0
		ok := it.First()
		if round%4 != 0 {
			i = rng.IntN(len(view))
			ok = it.SeekGE(view[i][0])
		}
		for steps := rng.IntN(len(view)); ; steps-- {
			if i == len(view) {
				if ok || it.Err() != nil {
					it.Close()
					return fmt.Errorf("round %d: past the last key: %v, %v", round, ok, it.Err())
				}
				break
			}
			if !ok || !bytes.Equal(it.Key(), view[i][0]) || !bytes.Equal(it.Value(), view[i][1]) {
				err := fmt.Errorf("round %d: entry %d is %q (%v, %v), want %q", round, i, it.Key(), ok, it.Err(), view[i][0])
				it.Close()
				return err
			}
			if steps == 0 {
				break // closed in mid-scan
			}
			if i > 0 && rng.IntN(400) == 0 {
				i--
				ok = it.Prev()
			} else {
				i++
				ok = it.Next()
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}
