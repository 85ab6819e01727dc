package leveldb_test

// Mojang's fork of LevelDB (Minecraft Bedrock Edition's worlds) stores
// blocks zlib-compressed, types 2 (a zlib stream) and 4 (raw deflate).
// testdata/mojang (see its README) holds a Bedrock world's database from
// a public repository and one written by Mojang's LevelDB itself, with
// the count and SHA-256 of what Mojang's LevelDB reads from them.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// linesSum returns "COUNT SHA256" of lines, each ended by a newline.
func linesSum(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return fmt.Sprintf("%d %x", len(lines), h.Sum(nil))
}

// indexBlockType returns the compression type byte of a table file's
// index block.
func indexBlockType(t *testing.T, path string) byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foot := data[len(data)-48:]
	_, n := binary.Uvarint(foot)
	_, m := binary.Uvarint(foot[n:])
	ih, _, err := readHandle(foot[n+m:])
	if err != nil {
		t.Fatal(err)
	}
	return data[ih.off+ih.n]
}

// TestMojangGolden reads the Bedrock databases of testdata/mojang and
// compares them with what Mojang's LevelDB read: the live view and each
// table's entries, by count and SHA-256; Verify must pass.
func TestMojangGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  byte // the compression type its tables' index blocks hold
	}{{"mctestdb", leveldb.CompressionZlibRaw}, {"zlib", leveldb.CompressionZlib}} {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join("testdata", "mojang", c.name)
			sums, err := os.ReadFile(src + ".sums")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, l := range splitLines(sums) {
				name, rest, _ := strings.Cut(l, " ")
				want[name] = rest
			}
			dir := filepath.Join(t.TempDir(), c.name)
			copyDir(t, src, dir, false)
			for _, noMmap := range []bool{false, true} {
				checkMojangDB(t, dir, want, c.typ, noMmap)
			}
		})
	}
}

func checkMojangDB(t *testing.T, dir string, want map[string]string, typ byte, noMmap bool) {
	db, err := leveldb.OpenDB(dir, &leveldb.Options{NoMmap: noMmap})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, backward := range []bool{false, true} {
		lines, err := ourView(db, backward)
		if err != nil {
			t.Fatal(err)
		}
		if got := linesSum(lines); got != want["view"] {
			t.Fatalf("NoMmap=%v backward=%v: view (count sha256) %s, Mojang's LevelDB read %s", noMmap, backward, got, want["view"])
		}
		if !backward {
			for _, l := range lines {
				v := parseView(t, []string{l})
				got, err := db.Get([]byte(v.keys[0]))
				if err != nil || string(got) != v.vals[0] {
					t.Fatalf("Get(%x) = %.40x, %v; the view holds %.40x", v.keys[0], got, err, v.vals[0])
				}
			}
		}
	}
	if _, err := db.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	tables := 0
	for _, f := range db.Files() {
		name := fmt.Sprintf("%06d.ldb", f.Number)
		path := filepath.Join(dir, name)
		if got := indexBlockType(t, path); got != typ {
			t.Errorf("%s: index block of type %d; the fixture is meant to hold type %d", name, got, typ)
		}
		tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		lines, err := tableLines(tb, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := linesSum(lines); got != want[name] {
			t.Errorf("%s: entries (count sha256) %s, Mojang's leveldb::Table read %s", name, got, want[name])
		}
		if n, err := tb.Verify(); err != nil || n != int64(len(lines)) {
			t.Errorf("%s: Verify = %d, %v; want %d entries", name, n, err, len(lines))
		}
		if tb.PlainKeys() {
			t.Errorf("%s: read as plain keys", name)
		}
		tb.Close()
		tables++
	}
	if tables != len(want)-1 {
		t.Errorf("%d live tables, Mojang's LevelDB read %d", tables, len(want)-1)
	}
}

// TestMojangTableModel checks tables whose blocks are zlib streams or raw
// deflate (ldbtest's Zlib) against their entries, as TestTableModel does
// for snappy.
func TestMojangTableModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		es := genEntries(t, rapid.SampledFrom([]int{30, 200}).Draw(t, "maxKeys"))
		o := genOptions(t)
		o.Snappy = true
		o.Zlib = rapid.SampledFrom([]byte{leveldb.CompressionZlib, leveldb.CompressionZlibRaw}).Draw(t, "zlib")
		tb := openTable(t, dir, es, o)
		defer tb.Close()
		if n, err := tb.Verify(); err != nil || n != int64(len(es)) {
			t.Fatalf("Verify: %d entries, %v; want %d", n, err, len(es))
		}
		it := tb.NewIter(nil)
		defer it.Close()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if i >= len(es) || !sameEntry(it, es[i]) {
				t.Fatalf("entry %d: got %q@%d", i, it.Key(), it.Seq())
			}
			i++
		}
		if it.Err() != nil || i != len(es) {
			t.Fatalf("scan: %d of %d, %v", i, len(es), it.Err())
		}
		for j, e := range es {
			if j > 0 && bytes.Equal(es[j-1].Key, e.Key) {
				continue
			}
			got, err := tb.Get(e.Key, leveldb.MaxSequence)
			if err != nil || got.Seq != e.Seq || !bytes.Equal(got.Value, e.Value) {
				t.Fatalf("Get(%q) = %+v, %v; want %+v", e.Key, got, err, e)
			}
		}
	})
}

// TestMojangBadBlocks: a zlib block must hold what its type says. A type
// 2 block holding raw deflate, a type 4 block holding a zlib stream, bad
// deflate data, a zlib stream whose Adler-32 is wrong and a type 3 block
// that is no zstd frame are each an error wrapping format.ErrCorrupt,
// with the block's checksum right; so is a type no LevelDB writes (5).
func TestMojangBadBlocks(t *testing.T) {
	es := []ldbtest.Entry{{Key: []byte("k1"), Seq: 2, Kind: 1, Value: bytes.Repeat([]byte("v"), 100)}}
	good := ldbtest.WriteTable(es, ldbtest.Options{NoFilter: true})
	var raw []byte // the data block's contents
	if _, err := rebuildTable(good, func(block int, contents []byte) ([]byte, byte) {
		if block == 0 {
			raw = contents
		}
		return contents, 0
	}); err != nil || raw == nil {
		t.Fatalf("%v; data block %q", err, raw)
	}
	zl := encodeBlock(raw, 2)
	badAdler := append([]byte(nil), zl...)
	badAdler[len(badAdler)-1] ^= 1
	for _, c := range []struct {
		name   string
		stored []byte
		typ    byte
		msg    string
	}{
		{"raw deflate as type 2", encodeBlock(raw, 4), 2, "zlib"},
		{"zlib stream as type 4", zl, 4, ""},
		{"bad deflate", []byte{0xff, 0xff, 0xff, 0xff}, 4, ""},
		{"bad adler", badAdler, 2, "checksum"},
		{"type 3 not zstd", raw, 3, "zstd"},
		{"type 5", raw, 5, "compression type 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := rebuildTable(good, func(block int, contents []byte) ([]byte, byte) {
				if block == 0 {
					return c.stored, c.typ
				}
				return contents, 0
			})
			if err != nil {
				t.Fatal(err)
			}
			tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), &leveldb.TableOptions{Name: "t.ldb"})
			if err == nil {
				_, err = tb.Get([]byte("k1"), leveldb.MaxSequence)
				if err == nil || errors.Is(err, reader.ErrNotFound) {
					_, err = tb.Verify()
				}
				tb.Close()
			}
			if !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v; want an error wrapping format.ErrCorrupt saying %q", err, c.msg)
			}
		})
	}
}

// countingReader counts the ReadAt calls that reach the file.
type countingReader struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestMojangBlocksCached: a zlib block, whose decoded size only decoding
// tells, is cached once read, as a snappy block is: a second Get in it
// reads nothing from the file.
func TestMojangBlocksCached(t *testing.T) {
	c, err := cache.New(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var es []ldbtest.Entry
	for i := range 200 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("key%04d", i)), Seq: uint64(i + 1), Kind: 1, Value: bytes.Repeat([]byte{byte(i)}, 50)})
	}
	for _, typ := range []byte{leveldb.CompressionSnappy, leveldb.CompressionZlib, leveldb.CompressionZlibRaw} {
		o := ldbtest.Options{Snappy: true, BlockSize: 1024}
		if typ != leveldb.CompressionSnappy {
			o.Zlib = typ
		}
		data := ldbtest.WriteTable(es, o)
		cr := &countingReader{r: bytes.NewReader(data)}
		tb, err := leveldb.NewTable(cr, int64(len(data)), &leveldb.TableOptions{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		var reads []int
		for _, k := range []string{"key0100", "key0100"} {
			before := cr.reads
			e, err := tb.Get([]byte(k), leveldb.MaxSequence)
			if err != nil || !bytes.Equal(e.Value, bytes.Repeat([]byte{100}, 50)) {
				t.Fatalf("type %d: Get(%s) = %+v, %v", typ, k, e, err)
			}
			reads = append(reads, cr.reads-before)
		}
		if reads[0] == 0 || reads[1] != 0 {
			t.Errorf("type %d: two Gets in one block read the file %v times; want the block cached after the first", typ, reads)
		}
		tb.Close()
	}
}

// TestZstdBlocks: a zstd frame, under Mojang's type 3 or LevelDB's type 2
// (LevelDB after 1.23), reads as its contents.
func TestZstdBlocks(t *testing.T) {
	var es []ldbtest.Entry
	for i := range 40 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("key%02d", i)), Seq: uint64(i + 1), Kind: 1, Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 30)})
	}
	good := ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 256, ShortSeparators: true})
	for _, typ := range []byte{leveldb.CompressionZstd, leveldb.CompressionZlib} {
		data, err := rebuildTable(good, func(block int, contents []byte) ([]byte, byte) {
			return codec.AppendZstd(nil, contents, format.LevelDefault), typ
		})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := leveldb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatalf("type %d: %v", typ, err)
		}
		if info := tb.Info(); info.IndexCompression != typ || info.DataBlocks < 4 {
			t.Fatalf("type %d: index type %d, %d data blocks", typ, info.IndexCompression, info.DataBlocks)
		}
		if n, err := tb.Verify(); err != nil || n != int64(len(es)) {
			t.Fatalf("type %d: Verify = %d, %v", typ, n, err)
		}
		for _, e := range es {
			if got, err := tb.Get(e.Key, leveldb.MaxSequence); err != nil || !bytes.Equal(got.Value, e.Value) {
				t.Fatalf("type %d: Get(%s) = %+v, %v", typ, e.Key, got, err)
			}
		}
		tb.Close()
	}
}
