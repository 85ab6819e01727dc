package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// levelDBSeedTables returns LevelDB tables: written here in LevelDB's
// layout (raw and snappy, goleveldb's compressed metaindex, both filter
// names, none), and LevelDB's own under ../leveldb/testdata/golden.
func levelDBSeedTables(tb testing.TB) [][]byte {
	var es []ldbtest.Entry
	for i := 0; i < 60; i++ {
		e := ldbtest.Entry{Key: []byte(fmt.Sprintf("key%03d", i/2)), Seq: uint64(100 - i), Kind: byte(i % 3 % 2)}
		if e.Kind == 1 {
			e.Value = bytes.Repeat([]byte{byte('a' + i%26)}, i%7*5)
		}
		es = append(es, e)
	}
	var out [][]byte
	for _, o := range []ldbtest.Options{
		{BlockSize: 200},
		{BlockSize: 200, Snappy: true, ShortSeparators: true},
		{BlockSize: 100, Snappy: true, CompressAll: true, FilterName: leveldb.FilterGoLevelDB, RestartInterval: 2},
		{BlockSize: 4096, NoFilter: true, EmptyMetaRestart: true},
	} {
		out = append(out, ldbtest.WriteTable(es, o))
	}
	// Mojang's zlib blocks, and tables of plain keys (distinct: one
	// entry a key).
	var plain []ldbtest.Entry
	for i := 0; i < len(es); i += 2 {
		plain = append(plain, es[i])
	}
	for _, o := range []ldbtest.Options{
		{BlockSize: 150, Snappy: true, Zlib: 2, ShortSeparators: true},
		{BlockSize: 200, Snappy: true, ShortSeparators: true, Plain: true},
		{BlockSize: 150, Snappy: true, CompressAll: true, Zlib: 4, Plain: true},
	} {
		if o.Plain {
			out = append(out, ldbtest.WriteTable(plain, o))
		} else {
			out = append(out, ldbtest.WriteTable(es, o))
		}
	}
	paths, _ := filepath.Glob(filepath.Join("..", "leveldb", "testdata", "golden", "*", "*.ldb"))
	more, _ := filepath.Glob(filepath.Join("..", "leveldb", "testdata", "plain", "*.ldb"))
	paths = append(paths, more...)
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && len(data) < 64<<10 {
			out = append(out, data)
		}
	}
	return out
}

// FuzzLevelDBTable feeds the bytes to leveldb.NewTable (or OpenTable,
// mapped) as a LevelDB table, with or without its block checksums
// repaired first so that mutations reach the block, index, metaindex and
// filter decoders. Whatever opens must iterate the same entries both
// ways without a panic; a table that passes Verify must also find each
// key's newest version by Get, through its filter.
func FuzzLevelDBTable(f *testing.F) {
	for _, data := range levelDBSeedTables(f) {
		f.Add(data, false, false)
		f.Add(data, true, true)
	}
	f.Add([]byte{}, false, false)
	scratch := newScratchFile(f, "t.ldb")
	f.Fuzz(func(t *testing.T, data []byte, repair, mmap bool) {
		if repair {
			data = repairLevelDB(data)
		}
		var tb *leveldb.Table
		var err error
		if mmap {
			tb, err = leveldb.OpenTable(scratch.write(t, data), nil)
		} else {
			tb, err = leveldb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
		}
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("open: error not wrapping ErrCorrupt: %v", err)
			}
			return
		}
		defer tb.Close()
		checkLevelDBTable(t, tb)
	})
}

type ldbEntry struct {
	ikey, value, user []byte
	seq               uint64
}

func checkLevelDBTable(t *testing.T, tb *leveldb.Table) {
	it := tb.NewIter(nil)
	defer it.Close()
	var fwd []ldbEntry
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, ldbEntry{bytes.Clone(it.InternalKey()), bytes.Clone(it.Value()), bytes.Clone(it.Key()), it.Seq()})
	}
	fwdErr := it.Err()
	if fwdErr != nil && !errors.Is(fwdErr, format.ErrCorrupt) {
		t.Fatalf("scan: error not wrapping ErrCorrupt: %v", fwdErr)
	}
	_, verr := tb.Verify()
	if verr != nil {
		if !errors.Is(verr, format.ErrCorrupt) {
			t.Fatalf("Verify: error not wrapping ErrCorrupt: %v", verr)
		}
		return
	}
	if fwdErr != nil {
		t.Fatalf("Verify passed where a scan failed: %v", fwdErr)
	}
	it2 := tb.NewIter(nil)
	defer it2.Close()
	i := len(fwd) - 1
	for ok := it2.Last(); ok; ok = it2.Prev() {
		if i < 0 || !bytes.Equal(it2.InternalKey(), fwd[i].ikey) || !bytes.Equal(it2.Value(), fwd[i].value) {
			t.Fatalf("backward scan differs at %d", i)
		}
		i--
	}
	if it2.Err() != nil || i != -1 {
		t.Fatalf("backward scan ended at %d of %d: %v", i, len(fwd), it2.Err())
	}
	for j, e := range fwd {
		// A table read as plain keys (mutations can make one) has no
		// trailer: the iterator's user key and sequence number say it.
		user := e.user
		if j > 0 && bytes.Equal(fwd[j-1].user, user) {
			continue
		}
		got, err := tb.Get(user, leveldb.MaxSequence)
		if err != nil || got.Seq != e.seq || !bytes.Equal(got.Value, e.value) {
			t.Fatalf("Get(%q) = %+v, %v; the scan's first version is %x", user, got, err, e.ikey)
		}
	}
}

// repairLevelDB recomputes the trailer checksum of every block a LevelDB
// table's footer and index point to, where they lie inside data.
func repairLevelDB(data []byte) []byte {
	data = bytes.Clone(data)
	if len(data) < leveldb.FooterLen {
		return data
	}
	fix := func(h format.BlockHandle) []byte {
		end := h.Offset + h.Length
		if h.Length > uint64(len(data)) || end+format.BlockTrailerLen > uint64(len(data)) || end < h.Offset {
			return nil
		}
		stored, typ := data[h.Offset:end], data[end]
		binary.LittleEndian.PutUint32(data[end+1:], codec.BlockChecksum(stored, typ))
		if typ == format.BlockTypeSnappy {
			if n, err := snappy.DecodedLen(stored); err != nil || n > 1<<20 {
				return nil
			}
			d, _ := snappy.Decode(nil, stored)
			return d
		}
		return stored
	}
	foot := data[len(data)-leveldb.FooterLen:]
	meta, n := codec.DecodeHandle(foot)
	if n <= 0 {
		return data
	}
	idx, m := codec.DecodeHandle(foot[n:])
	if m <= 0 {
		return data
	}
	for _, h := range []format.BlockHandle{meta, idx} {
		contents := fix(h)
		var it codec.BlockIter
		if contents == nil || it.Init("", 0, contents) != nil {
			continue
		}
		for ok := it.First(); ok; ok = it.Next() {
			if bh, k := codec.DecodeHandle(it.Value()); k > 0 {
				fix(bh)
			}
		}
	}
	return data
}

// FuzzLevelDBDB feeds the bytes to OpenDB as a MANIFEST's version edit
// and a log's write batch, each framed as a valid log record so that
// the version edit and write batch decoders see them, beside one valid
// table. Whatever opens must scan the same keys both ways and Get each
// key's scanned value; what does not must fail with a classified error.
func FuzzLevelDBDB(f *testing.F) {
	es := []ldbtest.Entry{{Key: []byte("a"), Seq: 3, Kind: 1, Value: []byte("1")}, {Key: []byte("b"), Seq: 2, Kind: 0}, {Key: []byte("c"), Seq: 1, Kind: 1, Value: []byte("3")}}
	table := ldbtest.WriteTable(es, ldbtest.Options{})
	edit := func(level byte) []byte {
		var e []byte
		e = append(e, 1, 26)
		e = append(e, "leveldb.BytewiseComparator"...)
		e = append(e, 2, 2, 3, 20, 4, 9)
		e = append(e, 7, level, 5)
		e = binary.AppendUvarint(e, uint64(len(table)))
		e = append(e, 9)
		e = append(e, es[0].InternalKey()...)
		e = append(e, 9)
		e = append(e, es[2].InternalKey()...)
		return e
	}
	f.Add(edit(0), ldbtest.Batch(10, []ldbtest.Entry{{Key: []byte("b"), Kind: 1, Value: []byte("x")}, {Key: []byte("a"), Kind: 0}}))
	f.Add(edit(3), []byte{})
	f.Add(append(edit(1), 6, 1, 5), ldbtest.Batch(10, nil))
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "000005.ldb"), table, 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, edit, batch []byte) {
		var m, l ldbtest.Log
		m.Add(edit)
		l.Add(batch)
		if os.WriteFile(filepath.Join(dir, "MANIFEST-000001"), m.Buf, 0o644) != nil || os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644) != nil {
			t.Fatal("write")
		}
		db, err := leveldb.OpenDB(dir, nil)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, leveldb.ErrComparator) {
				t.Fatalf("OpenDB: unclassified error: %v", err)
			}
			return
		}
		defer db.Close()
		if _, err := db.Verify(); err != nil {
			// A table that does not hold what the MANIFEST says it does
			// reads as the MANIFEST says; Verify is what reports it.
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("Verify: unclassified error: %v", err)
			}
			return
		}
		it := db.NewIterator(nil)
		defer it.Close()
		var keys, values [][]byte
		for ok := it.First(); ok; ok = it.Next() {
			keys, values = append(keys, bytes.Clone(it.Key())), append(values, bytes.Clone(it.Value()))
		}
		if err := it.Err(); err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("scan: unclassified error: %v", err)
			}
			return
		}
		i := len(keys) - 1
		for ok := it.Last(); ok; ok = it.Prev() {
			if i < 0 || !bytes.Equal(it.Key(), keys[i]) {
				t.Fatalf("backward scan differs at %d", i)
			}
			i--
		}
		if i != -1 {
			t.Fatalf("backward scan ended at %d", i)
		}
		for i, k := range keys {
			v, err := db.Get(k)
			if err != nil || !bytes.Equal(v, values[i]) {
				t.Fatalf("Get(%q) = %q, %v; scan gave %q", k, v, err, values[i])
			}
		}
		if _, err := db.Get([]byte("zz-absent")); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get of an absent key: %v", err)
		}
	})
}
