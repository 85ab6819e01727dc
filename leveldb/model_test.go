package leveldb_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// keyBytes are the bytes of drawn keys: the least and greatest among
// them.
var keyBytes = []byte{0x00, 'a', 'b', 0xff}

// genKey draws a user key from a small alphabet, so that keys repeat,
// share prefixes and are prefixes of one another: the empty key (the
// least, which merge once lost), keys of 0x00 and 0xff bytes, and one
// in four of 8 to 10 bytes sharing their first 8 (merge's heap compares
// 8-byte prefixes, zero-padded, before whole keys).
func genKey(t *rapid.T, label string) []byte {
	if rapid.IntRange(0, 3).Draw(t, label+"Long") == 0 {
		k := bytes.Repeat([]byte{rapid.SampledFrom(keyBytes).Draw(t, label+"Fill")}, 8)
		return append(k, rapid.SliceOfN(rapid.SampledFrom(keyBytes), 0, 2).Draw(t, label)...)
	}
	return rapid.SliceOfN(rapid.SampledFrom(keyBytes), 0, 4).Draw(t, label)
}

// genEntries draws internal entries, sorted and distinct: several
// versions of some user keys, values and deletions, sequence numbers
// unique.
func genEntries(t *rapid.T, maxKeys int) []ldbtest.Entry {
	n := rapid.IntRange(0, maxKeys).Draw(t, "keys")
	seen := map[string]bool{}
	var es []ldbtest.Entry
	seqs := rapid.Permutation(seqRange(4*maxKeys)).Draw(t, "seqs")
	for i := 0; i < n; i++ {
		k := genKey(t, "key")
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		versions := rapid.IntRange(1, 3).Draw(t, "versions")
		for v := 0; v < versions; v++ {
			e := ldbtest.Entry{Key: k, Seq: seqs[0], Kind: 1}
			seqs = seqs[1:]
			if rapid.IntRange(0, 3).Draw(t, "del") == 0 {
				e.Kind = 0
			} else {
				e.Value = rapid.SliceOfN(rapid.Byte(), 0, rapid.SampledFrom([]int{3, 40, 300}).Draw(t, "vlen")).Draw(t, "value")
			}
			es = append(es, e)
		}
	}
	sortEntries(es)
	return es
}

func seqRange(n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

func sortEntries(es []ldbtest.Entry) {
	sort.Slice(es, func(i, j int) bool {
		if c := bytes.Compare(es[i].Key, es[j].Key); c != 0 {
			return c < 0
		}
		return es[i].Seq > es[j].Seq
	})
}

func genOptions(t *rapid.T) ldbtest.Options {
	return ldbtest.Options{
		BlockSize:        rapid.SampledFrom([]int{1, 64, 300, 4096}).Draw(t, "blockSize"),
		Snappy:           rapid.Bool().Draw(t, "snappy"),
		CompressAll:      rapid.Bool().Draw(t, "compressAll"),
		NoFilter:         rapid.IntRange(0, 3).Draw(t, "nofilter") == 0,
		FilterName:       rapid.SampledFrom([]string{"", "filter.leveldb.BuiltinBloomFilter"}).Draw(t, "filterName"),
		ShortSeparators:  rapid.Bool().Draw(t, "short"),
		RestartInterval:  rapid.SampledFrom([]int{1, 2, 16}).Draw(t, "restart"),
		EmptyMetaRestart: rapid.Bool().Draw(t, "emptyMeta"),
	}
}

// openTable writes es as a table and opens it, mapped or over ReaderAt.
func openTable(t *rapid.T, dir string, es []ldbtest.Entry, o ldbtest.Options) *leveldb.Table {
	data := ldbtest.WriteTable(es, o)
	path := filepath.Join(dir, "t.ldb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var tb *leveldb.Table
	var err error
	if rapid.Bool().Draw(t, "mapped") {
		tb, err = leveldb.OpenTable(path, nil)
	} else {
		tb, err = leveldb.NewTable(bytes.NewReader(data), int64(len(data)), &leveldb.TableOptions{Name: "t.ldb"})
	}
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func sameEntry(it *leveldb.TableIterator, e ldbtest.Entry) bool {
	return bytes.Equal(it.Key(), e.Key) && it.Seq() == e.Seq && byte(it.Kind()) == e.Kind && bytes.Equal(it.Value(), e.Value)
}

// TestTableModel checks a table's iterator and Get against the sorted
// entries written, over block sizes, restart intervals, compression of
// each block kind, filters of both names or none, and separators full
// or shortened as LevelDB writes them.
func TestTableModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		es := genEntries(t, rapid.SampledFrom([]int{30, 30, 200}).Draw(t, "maxKeys"))
		tb := openTable(t, dir, es, genOptions(t))
		defer tb.Close()
		if n, err := tb.Verify(); err != nil || n != int64(len(es)) {
			t.Fatalf("Verify: %d entries, %v; want %d", n, err, len(es))
		}
		var lower, upper []byte
		if rapid.Bool().Draw(t, "bounded") {
			lower, upper = genKey(t, "lower"), genKey(t, "upper")
		}
		var want []ldbtest.Entry
		for _, e := range es {
			if (lower == nil || bytes.Compare(e.Key, lower) >= 0) && (upper == nil || bytes.Compare(e.Key, upper) < 0) {
				want = append(want, e)
			}
		}
		it := tb.NewIter(&leveldb.IterOptions{LowerBound: lower, UpperBound: upper})
		defer it.Close()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if i >= len(want) || !sameEntry(it, want[i]) {
				t.Fatalf("forward %d: got %q@%d", i, it.Key(), it.Seq())
			}
			i++
		}
		if it.Err() != nil || i != len(want) {
			t.Fatalf("forward: %d of %d, %v", i, len(want), it.Err())
		}
		i = len(want) - 1
		for ok := it.Last(); ok; ok = it.Prev() {
			if i < 0 || !sameEntry(it, want[i]) {
				t.Fatalf("backward %d: got %q@%d", i, it.Key(), it.Seq())
			}
			i--
		}
		if it.Err() != nil || i != -1 {
			t.Fatalf("backward stopped at %d, %v", i, it.Err())
		}
		// Every key's newest version, through the filter of its block.
		for j, e := range es {
			if j > 0 && bytes.Equal(es[j-1].Key, e.Key) {
				continue
			}
			if got, err := tb.Get(e.Key, leveldb.MaxSequence); err != nil || got.Seq != e.Seq {
				t.Fatalf("Get(%q) = %+v, %v; want seq %d", e.Key, got, err, e.Seq)
			}
		}
		for range 10 {
			k := genKey(t, "seek")
			ge := sort.Search(len(want), func(i int) bool { return bytes.Compare(want[i].Key, k) >= 0 })
			if ok := it.SeekGE(k); ok != (ge < len(want)) || ok && !sameEntry(it, want[ge]) {
				t.Fatalf("SeekGE(%q) = %v at %q, want index %d of %d", k, ok, it.Key(), ge, len(want))
			}
			if ok := it.SeekLT(k); ok != (ge > 0) || ok && !sameEntry(it, want[ge-1]) {
				t.Fatalf("SeekLT(%q) = %v at %q, want index %d", k, ok, it.Key(), ge-1)
			}
			// Get at a sequence number: the newest version at or below it.
			seq := rapid.Uint64Range(0, 130).Draw(t, "seq")
			var wantE *ldbtest.Entry
			for j := range es {
				if bytes.Equal(es[j].Key, k) && es[j].Seq <= seq {
					wantE = &es[j]
					break
				}
			}
			got, err := tb.Get(k, seq)
			switch {
			case wantE == nil && !errors.Is(err, reader.ErrNotFound):
				t.Fatalf("Get(%q, %d) = %+v, %v; want not found", k, seq, got, err)
			case wantE != nil && (err != nil || got.Seq != wantE.Seq || byte(got.Kind) != wantE.Kind || !bytes.Equal(got.Value, wantE.Value)):
				t.Fatalf("Get(%q, %d) = %+v, %v; want %+v", k, seq, got, err, *wantE)
			}
		}
	})
}

// genPrefix draws a prefix for the prefix seeks: empty, a byte, or two.
func genPrefix(t *rapid.T) []byte {
	return rapid.SliceOfN(rapid.SampledFrom(keyBytes), 0, 2).Draw(t, "prefix")
}

// checkPrefixMoves checks a prefix seek that returned ok against keys[j]
// (none unless 0 <= j < len(keys) and keys[j] has prefix p), then the
// moves (move, in direction dir) through the prefix's keys after it.
func checkPrefixMoves(t *rapid.T, it *merge.Iterator, what string, ok bool, move func() bool, keys []string, j int, p []byte, dir int) {
	has := func(j int) bool { return j >= 0 && j < len(keys) && strings.HasPrefix(keys[j], string(p)) }
	for n := 0; ; n++ {
		if ok != has(j) || ok && string(it.Key()) != keys[j] || it.Err() != nil {
			want := "none"
			if has(j) {
				want = fmt.Sprintf("%q", keys[j])
			}
			t.Fatalf("%s, then %d moves = %v %q, %v; want %s (keys %q)", what, n, ok, it.Key(), it.Err(), want, keys)
		}
		if !ok || n == 3 {
			return
		}
		ok, j = move(), j+dir
	}
}

// liveView returns the newest version of every user key across levels
// (each newest first, sorted), deletions dropped.
func liveView(levels [][]ldbtest.Entry) map[string][]byte {
	seen := map[string]bool{}
	live := map[string][]byte{}
	for _, l := range levels {
		for _, e := range l {
			if seen[string(e.Key)] {
				continue
			}
			seen[string(e.Key)] = true
			if e.Kind == 1 {
				live[string(e.Key)] = e.Value
			}
		}
	}
	return live
}

// TestDBModel writes databases (a log, level 0 tables that overlap,
// levels 1 and up whose tables split user keys' versions between them)
// and checks the live view OpenDB gives against a model: scans both
// ways, seeks, prefix seeks and the moves in their prefix, within bounds
// (IterOptions, then SetBounds) or none, and Gets.
func TestDBModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "ldbmodel")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		seq := uint64(1000)
		nextSeq := func() uint64 { seq--; return seq }
		var tables []ldbtest.TableFile
		var byAge [][]ldbtest.Entry // newest first, for the model
		num := uint64(10)
		// Levels 3, 2, 1 (oldest first, so sequence numbers fall with age),
		// then level 0 tables, newest file number last.
		var perLevel [][]ldbtest.Entry
		for level := 0; level <= 3; level++ {
			es := genEntries(t, 12)
			for i := range es {
				es[i].Seq = 0
			}
			perLevel = append(perLevel, es)
		}
		// Assign sequence numbers: newer levels get larger ones.
		for level := 0; level <= 3; level++ {
			es := perLevel[level]
			for i := range es {
				es[i].Seq = nextSeq()
			}
			// Within a user key, versions must descend: reverse the run.
			sortEntries(es)
		}
		for level := 3; level >= 1; level-- {
			es := perLevel[level]
			byAge = append([][]ldbtest.Entry{es}, byAge...)
			// Cut into tables at random entries, possibly between versions.
			for len(es) > 0 {
				n := rapid.IntRange(1, len(es)).Draw(t, "tableLen")
				num++
				tables = append(tables, ldbtest.TableFile{Level: level, Number: num, Entries: es[:n]})
				es = es[n:]
			}
		}
		// Level 0: perLevel[0] split into up to 3 overlapping tables by
		// sequence number, the newest (largest numbers) in the newest file.
		l0 := perLevel[0]
		nl0 := rapid.IntRange(1, 3).Draw(t, "l0tables")
		parts := make([][]ldbtest.Entry, nl0)
		for _, e := range l0 {
			p := rapid.IntRange(0, nl0-1).Draw(t, "l0part")
			parts[p] = append(parts[p], e)
		}
		// Make part i hold only sequence numbers below part i+1's.
		var all []ldbtest.Entry
		for _, p := range parts {
			all = append(all, p...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
		k := 0
		for i := range parts {
			n := len(parts[i])
			parts[i] = append([]ldbtest.Entry(nil), all[k:k+n]...)
			k += n
			sortEntries(parts[i])
		}
		for i := range parts {
			num++
			tables = append(tables, ldbtest.TableFile{Level: 0, Number: num, Entries: parts[i]})
			byAge = append([][]ldbtest.Entry{parts[i]}, byAge...)
		}
		// The log: batches newer than every table.
		var batches [][]ldbtest.Entry
		for range rapid.IntRange(0, 3).Draw(t, "batches") {
			var b []ldbtest.Entry
			for range rapid.IntRange(1, 4).Draw(t, "ops") {
				e := ldbtest.Entry{Key: genKey(t, "logKey"), Kind: 1}
				if rapid.IntRange(0, 2).Draw(t, "logDel") == 0 {
					e.Kind = 0
				} else {
					e.Value = []byte(rapid.StringN(0, 5, -1).Draw(t, "logValue"))
				}
				b = append(b, e)
			}
			batches = append(batches, b)
		}
		// Within memModel, newest first: later batches first, and within
		// a batch later ops first.
		var mem []ldbtest.Entry
		for i := len(batches) - 1; i >= 0; i-- {
			for j := len(batches[i]) - 1; j >= 0; j-- {
				mem = append(mem, batches[i][j])
			}
		}
		if err := ldbtest.WriteDB(dir, tables, batches, 1000, genOptions(t)); err != nil {
			t.Fatal(err)
		}
		model := liveView(append([][]ldbtest.Entry{mem}, byAge...))
		live := make([]string, 0, len(model))
		for k := range model {
			live = append(live, k)
		}
		sort.Strings(live)
		// keys are the model's within the bounds.
		var keys []string
		var lower, upper []byte
		drawBounds := func() {
			lower, upper = nil, nil
			if rapid.Bool().Draw(t, "lowerBound") {
				lower = genKey(t, "lower")
			}
			if rapid.Bool().Draw(t, "upperBound") {
				upper = genKey(t, "upper")
			}
			keys = keys[:0]
			for _, k := range live {
				if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
					keys = append(keys, k)
				}
			}
		}
		drawBounds()

		db, err := leveldb.OpenDB(dir, &leveldb.Options{NoMmap: rapid.Bool().Draw(t, "nommap")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		it := db.NewIterator(&leveldb.IterOptions{LowerBound: lower, UpperBound: upper})
		defer it.Close()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if i >= len(keys) || string(it.Key()) != keys[i] || !bytes.Equal(it.Value(), model[keys[i]]) {
				t.Fatalf("forward %d: got %q=%q; want %q", i, it.Key(), it.Value(), keys)
			}
			i++
		}
		if it.Err() != nil || i != len(keys) {
			t.Fatalf("forward: %d of %d keys, %v", i, len(keys), it.Err())
		}
		i = len(keys) - 1
		for ok := it.Last(); ok; ok = it.Prev() {
			if i < 0 || string(it.Key()) != keys[i] {
				t.Fatalf("backward %d: got %q; want %q", i, it.Key(), keys)
			}
			i--
		}
		if it.Err() != nil || i != -1 {
			t.Fatalf("backward stopped at %d, %v", i, it.Err())
		}
		for range 20 {
			k := genKey(t, "probe")
			ge := sort.SearchStrings(keys, string(k))
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 0:
				if ok := it.SeekGE(k); ok != (ge < len(keys)) || ok && string(it.Key()) != keys[ge] {
					t.Fatalf("SeekGE(%q) = %v %q", k, ok, it.Key())
				}
				if ge == len(keys) {
					break // an exhausted iterator stays so
				}
				if ok := it.Prev(); ok != (ge > 0) || ok && string(it.Key()) != keys[ge-1] {
					t.Fatalf("SeekGE(%q) then Prev = %v %q", k, ok, it.Key())
				}
			case 1:
				if ok := it.SeekLT(k); ok != (ge > 0) || ok && string(it.Key()) != keys[ge-1] {
					t.Fatalf("SeekLT(%q) = %v %q", k, ok, it.Key())
				}
				if ge > 0 {
					if ok := it.Next(); ok != (ge < len(keys)) || ok && string(it.Key()) != keys[ge] {
						t.Fatalf("SeekLT(%q) then Next = %v %q", k, ok, it.Key())
					}
				}
			case 2:
				// SeekPrefixGE: the first key >= k with the prefix, then Next
				// within the prefix. A key below the prefix seeks from it.
				p := genPrefix(t)
				j := ge
				for j < len(keys) && !strings.HasPrefix(keys[j], string(p)) && keys[j] < string(p) {
					j++
				}
				checkPrefixMoves(t, it, fmt.Sprintf("SeekPrefixGE(%q, %q)", p, k), it.SeekPrefixGE(p, k), it.Next, keys, j, p, 1)
			case 3:
				// SeekPrefixLT: the last key < k with the prefix, then Prev
				// within the prefix. A key above the prefix's keys finds
				// their last.
				p := genPrefix(t)
				j := ge - 1
				for j >= 0 && !strings.HasPrefix(keys[j], string(p)) && keys[j] > string(p) {
					j--
				}
				checkPrefixMoves(t, it, fmt.Sprintf("SeekPrefixLT(%q, %q)", p, k), it.SeekPrefixLT(p, k), it.Prev, keys, j, p, -1)
			case 4:
				// New bounds, copied: the caller's slices are changed after.
				drawBounds()
				it.SetBounds(lower, upper)
				for _, b := range [][]byte{lower, upper} {
					for i := range b {
						b[i] ^= 0x5a
					}
				}
				if ok := it.First(); ok != (len(keys) > 0) || ok && string(it.Key()) != keys[0] {
					t.Fatalf("SetBounds then First = %v %q; want %q", ok, it.Key(), keys)
				}
				if ok := it.Last(); ok != (len(keys) > 0) || ok && string(it.Key()) != keys[len(keys)-1] {
					t.Fatalf("SetBounds then Last = %v %q; want %q", ok, it.Key(), keys)
				}
			default:
				v, err := db.Get(k)
				want, ok := model[string(k)]
				if ok != (err == nil) || ok && !bytes.Equal(v, want) || !ok && !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("Get(%q) = %q, %v; want %q, %v", k, v, err, want, ok)
				}
			}
		}
		if _, err := db.Verify(); err != nil {
			t.Fatal(err)
		}
	})
}
