package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// FuzzLevelDBDB reads databases made from the fuzz input two ways. The
// raw way feeds the bytes to OpenDB as a MANIFEST's version edit and a
// log's write batch, each framed as a valid log record so that the
// version edit and write batch decoders see them, beside one valid
// table: whatever opens must scan the same keys both ways and Get each
// key's scanned value, what does not must fail with a classified error,
// and both log damage policies must agree where the strict one opens.
// The model way decodes the batch bytes into write batches of puts and
// deletions (ldbProgram: the empty key, keys of 0x00 and 0xff bytes and
// of 8 bytes and more, empty values and values long enough to be cut
// into fragments over 32 KiB blocks), writes them as a log over the same
// table, sometimes cut short inside a record (a write torn by a crash),
// and compares the DB's view (scans both ways, seeks, prefix seeks, Gets,
// the last sequence number) with a model map.
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
	// Programs: puts, deletions and a batch end; long values cut into
	// fragments; a cut log; both policies.
	f.Add(edit(1), []byte{0x00, 0x05, 0x02, 0xc4, 0x03, 0x09, 0x33, 0x00, 0xd1})
	f.Add(edit(0), []byte{0x03, 0x0b, 0x80, 0x17, 0x8f, 0xcc, 0x01, 0xff, 0x40, 0x02})
	f.Add(edit(1), []byte{0x06, 0x7f, 0x20, 0x0f, 0x60, 0x1f, 0xff, 0xc2, 0x2a, 0x08, 0x01})
	f.Add(edit(1), []byte{0x05, 0x00, 0x03, 0x05, 0x41, 0xd7, 0xa0, 0x0b, 0xff})
	f.Add(edit(0), []byte{0x01, 0x99, 0x99, 0x05, 0x41, 0xd7, 0xa0, 0x0b, 0xff, 0x25, 0x00})
	dir := f.TempDir()
	modelDir := f.TempDir()
	for _, d := range []string{dir, modelDir} {
		if err := os.WriteFile(filepath.Join(d, "000005.ldb"), table, 0o644); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	var m ldbtest.Log
	m.Add(edit(1))
	if err := os.WriteFile(filepath.Join(modelDir, "MANIFEST-000001"), m.Buf, 0o644); err != nil {
		f.Fatal(err)
	}
	tableView := map[string]string{"a": "1", "c": "3"}
	f.Fuzz(func(t *testing.T, edit, batch []byte) {
		var m, l ldbtest.Log
		m.Add(edit)
		l.Add(batch)
		if os.WriteFile(filepath.Join(dir, "MANIFEST-000001"), m.Buf, 0o644) != nil || os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644) != nil {
			t.Fatal("write")
		}
		strict := checkRawLevelDB(t, dir, false)
		skipping := checkRawLevelDB(t, dir, true)
		if strict != nil && (skipping == nil || strings.Join(strict, "\n") != strings.Join(skipping, "\n")) {
			t.Fatalf("the strict policy reads %q, SkipLogDamage %q", strict, skipping)
		}
		checkModelLevelDB(t, modelDir, batch, tableView)
	})
}

// checkRawLevelDB opens dir and, if it opens, checks that its view reads
// the same both ways and by Get, and returns it (nil when OpenDB or a
// read fails, with a classified error). With skip (SkipLogDamage), the
// damage it reports must be corruption.
func checkRawLevelDB(t *testing.T, dir string, skip bool) []string {
	db, err := leveldb.OpenDB(dir, &leveldb.Options{SkipLogDamage: skip})
	if err != nil {
		if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, leveldb.ErrComparator) {
			t.Fatalf("OpenDB: unclassified error: %v", err)
		}
		return nil
	}
	defer db.Close()
	n, damage := db.LogDamage()
	if n > 0 && !skip || n < len(damage) {
		t.Fatalf("LogDamage: %d, %d errors", n, len(damage))
	}
	for _, err := range damage {
		if !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("LogDamage: %v is not a corruption", err)
		}
	}
	if _, err := db.Verify(); err != nil {
		// A table that does not hold what the MANIFEST says it does
		// reads as the MANIFEST says; Verify is what reports it.
		if !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("Verify: unclassified error: %v", err)
		}
		return nil
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
		return nil
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
	view := make([]string, len(keys))
	for i, k := range keys {
		v, err := db.Get(k)
		if err != nil || !bytes.Equal(v, values[i]) {
			t.Fatalf("Get(%q) = %q, %v; scan gave %q", k, v, err, values[i])
		}
		view[i] = fmt.Sprintf("%x\t%x", k, values[i])
	}
	if _, err := db.Get([]byte("zz-absent")); !errors.Is(err, reader.ErrNotFound) {
		t.Fatalf("Get of an absent key: %v", err)
	}
	return view
}

// ldbKeys are the keys of ldbProgram's writes: the empty key, keys of
// 0x00 and 0xff bytes, keys that are prefixes of others, keys of 8 bytes
// and more sharing their first 8, and the table's a, b (deleted there)
// and c.
var ldbKeys = []string{
	"", "\x00", "\xff", "a", "b", "c", "a\x00", "ab",
	"\xff\xff", "aaaaaaaa", "aaaaaaaa\x00", "aaaaaaab", "\x00\x00\x00\x00\x00\x00\x00\x00", "\xff\xff\xff\xff\xff\xff\xff\xff\x01", "b\xff", "ca",
}

// ldbProgram decodes fuzz bytes into write batches. The first byte holds
// flags: bit 0 cuts the log short, at the fraction of its length bytes 1
// and 2 give (little-endian, of 65536), or with bit 2 at the end of the
// block byte 1 names (mod the blocks, plus one) and byte 2 mod 16 bytes
// more, inside the next fragment's header; bit 1 opens with
// SkipLogDamage. Then each op
// is a byte: bits 0-1 its kind (0 a deletion, 1 and 2 a short value, 3 a
// value whose length is 300 times the next byte: up to 76 KiB, so cut
// into fragments over blocks), bits 2-5 its key (ldbKeys), bits 6-7 both
// set end the batch after it; a short value is the next byte repeated
// (that byte mod 8) times, empty included.
type ldbProgram struct {
	batches [][]ldbtest.Entry
	cut     bool
	atBlock bool
	cutAt   [2]byte
	skip    bool
}

func decodeLDBProgram(b []byte) ldbProgram {
	var p ldbProgram
	if len(b) > 0 {
		p.cut, p.skip, p.atBlock = b[0]&1 != 0, b[0]&2 != 0, b[0]&4 != 0
		b = b[1:]
	}
	if p.cut && len(b) >= 2 {
		p.cutAt = [2]byte(b)
		b = b[2:]
	}
	var cur []ldbtest.Entry
	for ops := 0; len(b) > 0 && ops < 64; ops++ {
		op := b[0]
		b = b[1:]
		e := ldbtest.Entry{Key: []byte(ldbKeys[op>>2&15]), Kind: 1}
		switch op & 3 {
		case 0:
			e.Kind = 0
		case 1, 2:
			if len(b) > 0 {
				e.Value = bytes.Repeat(b[:1], int(b[0]%8))
				b = b[1:]
			}
		case 3:
			if len(b) > 0 {
				e.Value = bytes.Repeat([]byte{op}, 300*int(b[0]))
				b = b[1:]
			}
		}
		if e.Value == nil {
			e.Value = []byte{}
		}
		cur = append(cur, e)
		if op>>6 == 3 {
			p.batches, cur = append(p.batches, cur), nil
		}
	}
	if len(cur) > 0 {
		p.batches = append(p.batches, cur)
	}
	return p
}

// checkModelLevelDB writes the batches program decodes as dir's log,
// over the table whose view is tableView, and checks the DB's view
// against a model.
func checkModelLevelDB(t *testing.T, dir string, program []byte, tableView map[string]string) {
	p := decodeLDBProgram(program)
	var l ldbtest.Log
	var ends []int // each batch's record's end
	seq := uint64(10)
	for _, b := range p.batches {
		l.Add(ldbtest.Batch(seq, b))
		seq += uint64(len(b))
		ends = append(ends, len(l.Buf))
	}
	data := l.Buf
	switch {
	case p.cut && p.atBlock:
		k := 1 + int(p.cutAt[0])%max(1, len(data)>>15)
		data = data[:min(len(data), k<<15+int(p.cutAt[1])%16)]
	case p.cut:
		data = data[:int(binary.LittleEndian.Uint16(p.cutAt[:]))*len(data)/65536]
	}
	if err := os.WriteFile(filepath.Join(dir, "000002.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The model: the table's view, then each batch whose record the cut
	// left whole, in order.
	model := maps.Clone(tableView)
	lastSeq := uint64(9) // the MANIFEST's
	seq = 10
	for i, b := range p.batches {
		if ends[i] > len(data) {
			break
		}
		for _, e := range b {
			if e.Kind == 0 {
				delete(model, string(e.Key))
			} else {
				model[string(e.Key)] = string(e.Value)
			}
		}
		seq += uint64(len(b))
		lastSeq = seq - 1
	}
	keys := slices.Sorted(maps.Keys(model))

	db, err := leveldb.OpenDB(dir, &leveldb.Options{SkipLogDamage: p.skip})
	if err != nil {
		t.Fatalf("OpenDB: %v", err)
	}
	defer db.Close()
	if n, _ := db.LogDamage(); n != 0 || db.LastSequence() != lastSeq {
		t.Fatalf("%d places of damage skipped, last sequence %d; want none, %d", n, db.LastSequence(), lastSeq)
	}
	it := db.NewIterator(nil)
	defer it.Close()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(keys) || string(it.Key()) != keys[i] || string(it.Value()) != model[keys[i]] {
			t.Fatalf("forward %d: %q=%.20q; want %q", i, it.Key(), it.Value(), keys)
		}
		i++
	}
	if it.Err() != nil || i != len(keys) {
		t.Fatalf("forward: %d of %d keys, %v", i, len(keys), it.Err())
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		if i--; i < 0 || string(it.Key()) != keys[i] {
			t.Fatalf("backward %d: %q; want %q", i, it.Key(), keys)
		}
	}
	if it.Err() != nil || i != 0 {
		t.Fatalf("backward: stopped at %d, %v", i, it.Err())
	}
	for _, k := range ldbKeys {
		v, err := db.Get([]byte(k))
		want, ok := model[k]
		if ok != (err == nil) || ok && string(v) != want || !ok && !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) = %.20q, %v; want %.20q, %v", k, v, err, want, ok)
		}
		ge, _ := slices.BinarySearch(keys, k)
		if ok := it.SeekGE([]byte(k)); ok != (ge < len(keys)) || ok && string(it.Key()) != keys[ge] {
			t.Fatalf("SeekGE(%q) = %v %q; want index %d of %q", k, ok, it.Key(), ge, keys)
		}
		if ok := it.SeekLT([]byte(k)); ok != (ge > 0) || ok && string(it.Key()) != keys[ge-1] {
			t.Fatalf("SeekLT(%q) = %v %q; want index %d of %q", k, ok, it.Key(), ge-1, keys)
		}
		// The key's first byte as a prefix, sought from below it: the
		// prefix's first key, as reader.Iterator's prefix seek finds it.
		if k == "" {
			continue
		}
		pre := k[:1]
		j, _ := slices.BinarySearch(keys, pre)
		want2 := j < len(keys) && strings.HasPrefix(keys[j], pre)
		if ok := it.SeekPrefixGE([]byte(pre), nil); ok != want2 || ok && string(it.Key()) != keys[j] {
			t.Fatalf("SeekPrefixGE(%q, nil) = %v %q; want %v at index %d of %q", pre, ok, it.Key(), want2, j, keys)
		}
	}
}
