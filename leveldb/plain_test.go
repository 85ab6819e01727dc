package leveldb_test

// Tables of plain keys: written by LevelDB's TableBuilder directly, with
// the user's keys and no internal key trailer. testdata/plain holds
// golang/leveldb's test tables (see its README): the first 1,710 lines
// of h.txt, a word count of Hamlet's first act, as word -> count.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// hamlet returns the entries golang/leveldb's make-table.cc wrote from
// h.txt: key line[8:], value the count before it.
func hamlet(t *testing.T) (keys, vals []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "plain", "h.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range splitLines(b) {
		if len(l) < 9 {
			t.Fatalf("h.txt line %q", l)
		}
		keys = append(keys, l[8:])
		vals = append(vals, strings.TrimSpace(l[:7]))
	}
	if !sort.StringsAreSorted(keys) || len(keys) != 1710 {
		t.Fatalf("h.txt: %d keys, sorted %v", len(keys), sort.StringsAreSorted(keys))
	}
	return keys, vals
}

// TestPlainGoLevelDBTables reads golang/leveldb's h*.ldb, tables of plain
// keys written by LevelDB's TableBuilder (snappy, raw, raw with a bloom
// filter), detected as plain keys: every entry both ways, Get of each key
// and of absent ones, seeks, Verify.
func TestPlainGoLevelDBTables(t *testing.T) {
	keys, vals := hamlet(t)
	var want []string
	for i := range keys {
		want = append(want, entryLine([]byte(keys[i]), 0, leveldb.KindValue, []byte(vals[i])))
	}
	absent := []string{"", "\x00", "a\x00", "ab", "fore", "youth\x00", "zzz", "\xff"}
	for _, name := range []string{"h.ldb", "h.no-compression.ldb", "h.bloom.no-compression.ldb"} {
		path := filepath.Join("testdata", "plain", name)
		for _, noMmap := range []bool{false, true} {
			tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !tb.PlainKeys() {
				t.Errorf("%s: not detected as a table of plain keys", name)
			}
			for _, backward := range []bool{false, true} {
				got, err := tableLines(tb, backward)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := diffLines(got, want); d != "" {
					t.Fatalf("%s NoMmap=%v backward=%v: %s", name, noMmap, backward, d)
				}
			}
			if n, err := tb.Verify(); err != nil || n != 1710 {
				t.Errorf("%s: Verify = %d, %v; want 1710 entries", name, n, err)
			}
			for i, k := range keys {
				for _, seq := range []uint64{0, 7, leveldb.MaxSequence} {
					e, err := tb.Get([]byte(k), seq)
					if err != nil || string(e.Key) != k || string(e.Value) != vals[i] || e.Seq != 0 || e.Kind != leveldb.KindValue {
						t.Fatalf("%s: Get(%q, %d) = %+v, %v; want %q at 0", name, k, seq, e, err, vals[i])
					}
				}
			}
			for _, k := range absent {
				if e, err := tb.Get([]byte(k), leveldb.MaxSequence); !errors.Is(err, reader.ErrNotFound) {
					t.Errorf("%s: Get(%q) of an absent key = %+v, %v", name, k, e, err)
				}
			}
			it := tb.NewIter(nil)
			for _, k := range append(absent, keys[0], keys[900], keys[1709]) {
				ge := sort.SearchStrings(keys, k)
				if ok := it.SeekGE([]byte(k)); ok != (ge < len(keys)) || ok && (string(it.Key()) != keys[ge] || string(it.InternalKey()) != keys[ge]) {
					t.Errorf("%s: SeekGE(%q) = %v at %q", name, k, ok, it.Key())
				}
				if ok := it.SeekGEAt([]byte(k), 0); ok != (ge < len(keys)) || ok && string(it.Key()) != keys[ge] {
					t.Errorf("%s: SeekGEAt(%q, 0) = %v at %q", name, k, ok, it.Key())
				}
				if ok := it.SeekLT([]byte(k)); ok != (ge > 0) || ok && string(it.Key()) != keys[ge-1] {
					t.Errorf("%s: SeekLT(%q) = %v at %q", name, k, ok, it.Key())
				}
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if info := tb.Info(); (info.Filter != "") != strings.Contains(name, "bloom") {
				t.Errorf("%s: filter %q", name, info.Filter)
			}
			tb.Close()
		}
		// Read as internal keys, the table is corrupt, as before.
		_, err := leveldb.OpenTable(path, &leveldb.TableOptions{Keys: leveldb.KeysInternal})
		if !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "shorter than an internal key") {
			t.Errorf("%s with KeysInternal: %v; want the short separator reported", name, err)
		}
	}
}

// TestPlainFilterConsulted: Get consults the bloom filter of a table of
// plain keys with the whole key. With the table's data blocks damaged,
// a Get the filter turns away never reads a block and finds nothing; one
// it lets through reads the damage. Verify passing on the undamaged
// table shows the filter holds every whole key.
func TestPlainFilterConsulted(t *testing.T) {
	keys, _ := hamlet(t)
	data, err := os.ReadFile(filepath.Join("testdata", "plain", "h.bloom.no-compression.ldb"))
	if err != nil {
		t.Fatal(err)
	}
	for off := 100; off < 12900; off += 500 { // every data block (the filter block starts at 12975)
		data[off] ^= 0x40
	}
	tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), &leveldb.TableOptions{Name: "h.bloom"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Get([]byte(keys[3]), leveldb.MaxSequence); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Get of a present key in a damaged block: %v; want corruption", err)
	}
	turnedAway := 0
	const probes = 1000
	for i := range probes {
		k := keys[i%len(keys)] + "\x01" // absent, between two keys
		_, err := tb.Get([]byte(k), leveldb.MaxSequence)
		switch {
		case errors.Is(err, reader.ErrNotFound):
			turnedAway++
		case !errors.Is(err, format.ErrCorrupt):
			t.Fatalf("Get(%q) = %v", k, err)
		}
	}
	// 10 bits per key: about 1% false positives.
	if turnedAway < probes*95/100 {
		t.Errorf("the filter turned away %d of %d absent keys; want nearly all", turnedAway, probes)
	}
}

// genPlainKeys draws distinct plain keys, sorted: genKey's, and keys of
// 8 to 11 bytes whose byte 8 from the end is 0 or 1 (an internal key's
// kind) and whose last byte is often 0 or 1 (a small sequence number's
// top byte).
func genPlainKeys(t *rapid.T) [][]byte {
	n := rapid.IntRange(0, 150).Draw(t, "n")
	seen := map[string]bool{}
	var keys [][]byte
	for range n {
		var k []byte
		if rapid.Bool().Draw(t, "kindLike") {
			k = rapid.SliceOfN(rapid.SampledFrom(keyBytes), 0, 3).Draw(t, "head")
			k = append(k, rapid.ByteRange(0, 1).Draw(t, "kind"))
			k = append(k, rapid.SliceOfN(rapid.SampledFrom(keyBytes), 6, 6).Draw(t, "seq")...)
			k = append(k, rapid.SampledFrom([]byte{0, 1, 0xff}).Draw(t, "top"))
		} else {
			k = genKey(t, "key")
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	return keys
}

// TestPlainTableModel checks tables of plain keys written as LevelDB's
// TableBuilder writes them (ldbtest's Plain) against the keys written,
// read with KeysPlain and, when detected, KeysDetect: every entry both
// ways, Get through the filter, seeks, Verify.
func TestPlainTableModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		keys := genPlainKeys(t)
		es := make([]ldbtest.Entry, len(keys))
		for i, k := range keys {
			es[i] = ldbtest.Entry{Key: k, Value: rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "value")}
		}
		o := genOptions(t)
		o.Plain = true
		if rapid.Bool().Draw(t, "mojang") {
			o.Zlib = rapid.SampledFrom([]byte{leveldb.CompressionZlib, leveldb.CompressionZlibRaw}).Draw(t, "zlib")
		}
		data := ldbtest.WriteTable(es, o)
		path := filepath.Join(dir, "p.ldb")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		form := rapid.SampledFrom([]leveldb.KeyForm{leveldb.KeysPlain, leveldb.KeysDetect}).Draw(t, "form")
		tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{Keys: form, NoMmap: rapid.Bool().Draw(t, "noMmap")})
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		// LevelDB's last separator is the successor of the last key's
		// first byte that is not 0xff: shorter than 8 bytes, so detected,
		// unless the last key starts with eight 0xff bytes.
		last := []byte(nil)
		if len(keys) > 0 {
			last = keys[len(keys)-1]
		}
		detectable := o.ShortSeparators && len(last) > 0 && !bytes.HasPrefix(last, bytes.Repeat([]byte{0xff}, 7))
		if form == leveldb.KeysDetect && !tb.PlainKeys() {
			if detectable {
				t.Fatalf("not detected as plain keys; last key %q", last)
			}
			return
		}
		if len(keys) > 0 && !tb.PlainKeys() {
			t.Fatalf("KeysPlain: PlainKeys false")
		}
		if n, err := tb.Verify(); err != nil || n != int64(len(es)) {
			t.Fatalf("Verify: %d, %v; want %d entries", n, err, len(es))
		}
		it := tb.NewIter(nil)
		defer it.Close()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if i >= len(es) || !bytes.Equal(it.Key(), es[i].Key) || it.Seq() != 0 || it.Kind() != leveldb.KindValue || !bytes.Equal(it.Value(), es[i].Value) {
				t.Fatalf("forward %d: %q@%d %v", i, it.Key(), it.Seq(), it.Kind())
			}
			i++
		}
		if it.Err() != nil || i != len(es) {
			t.Fatalf("forward: %d of %d, %v", i, len(es), it.Err())
		}
		i = len(es) - 1
		for ok := it.Last(); ok; ok = it.Prev() {
			if i < 0 || !bytes.Equal(it.Key(), es[i].Key) {
				t.Fatalf("backward %d: %q", i, it.Key())
			}
			i--
		}
		if it.Err() != nil || i != -1 {
			t.Fatalf("backward stopped at %d, %v", i, it.Err())
		}
		for _, e := range es {
			got, err := tb.Get(e.Key, rapid.Uint64Range(0, leveldb.MaxSequence).Draw(t, "seq"))
			if err != nil || !bytes.Equal(got.Value, e.Value) || got.Seq != 0 {
				t.Fatalf("Get(%q) = %+v, %v", e.Key, got, err)
			}
		}
		for range 10 {
			k := genKey(t, "probe")
			ge := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], k) >= 0 })
			if ok := it.SeekGE(k); ok != (ge < len(keys)) || ok && !bytes.Equal(it.Key(), keys[ge]) {
				t.Fatalf("SeekGE(%q) = %v at %q; want index %d", k, ok, it.Key(), ge)
			}
			if ok := it.SeekLT(k); ok != (ge > 0) || ok && !bytes.Equal(it.Key(), keys[ge-1]) {
				t.Fatalf("SeekLT(%q) = %v at %q; want index %d", k, ok, it.Key(), ge-1)
			}
			_, err := tb.Get(k, leveldb.MaxSequence)
			if found := ge < len(keys) && bytes.Equal(keys[ge], k); found != (err == nil) || !found && !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q): %v; present %v", k, err, found)
			}
		}
	})
}

// TestPlainDetectionKeepsInternalTables: tables of internal keys, over
// the same edge keys (the empty user key, whose internal key is exactly
// 8 bytes; keys whose bytes look like trailers), with separators whole
// or shortened, are never read as plain keys.
func TestPlainDetectionKeepsInternalTables(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		var es []ldbtest.Entry
		if rapid.Bool().Draw(t, "kindLike") {
			for i, k := range genPlainKeys(t) {
				es = append(es, ldbtest.Entry{Key: k, Seq: uint64(i + 1), Kind: rapid.ByteRange(0, 1).Draw(t, "kind")})
			}
		} else {
			es = genEntries(t, 100)
		}
		tb := openTable(t, dir, es, genOptions(t))
		defer tb.Close()
		if tb.PlainKeys() {
			t.Fatalf("a table of internal keys read as plain keys")
		}
		if n, err := tb.Verify(); err != nil || n != int64(len(es)) {
			t.Fatalf("Verify: %d, %v; want %d entries", n, err, len(es))
		}
	})
}

// TestPlainKeysForced: KeysPlain reads a table of internal keys as the
// bytes it holds, trailers and all; KeysInternal reads a table of plain
// keys as corrupt.
func TestPlainKeysForced(t *testing.T) {
	es := []ldbtest.Entry{{Key: []byte(""), Seq: 5, Kind: 1, Value: []byte("e")}, {Key: []byte("abc"), Seq: 3, Kind: 0}}
	data := ldbtest.WriteTable(es, ldbtest.Options{ShortSeparators: true})
	tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), &leveldb.TableOptions{Keys: leveldb.KeysPlain})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tableLines(tb, false)
	tb.Close()
	want := []string{
		entryLine(es[0].InternalKey(), 0, leveldb.KindValue, []byte("e")),
		entryLine(es[1].InternalKey(), 0, leveldb.KindValue, nil),
	}
	if err != nil || diffLines(lines, want) != "" {
		t.Fatalf("KeysPlain over internal keys: %q, %v; want %q", lines, err, want)
	}
	for _, o := range []ldbtest.Options{{ShortSeparators: true, Plain: true}, {Plain: true}} {
		data := ldbtest.WriteTable([]ldbtest.Entry{{Key: []byte("abcdefghij")}, {Key: []byte("k")}}, o)
		tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), &leveldb.TableOptions{Keys: leveldb.KeysInternal})
		if err == nil {
			_, err = tb.Verify()
			tb.Close()
		}
		if !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("KeysInternal over plain keys (%+v): %v; want corruption", o, err)
		}
	}
}
