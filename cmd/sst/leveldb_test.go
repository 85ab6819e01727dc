package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
)

// The LevelDB fixtures, written once by goleveldb (testdata/leveldb/README.md):
// a database over two levels with writes left in its log, what goleveldb's
// own iterator prints of its live view, and what goleveldb's table reader
// prints of one of its tables.
const (
	ldbDir      = "testdata/leveldb/db"
	ldbViewHex  = "testdata/leveldb/db.hex.gz" // hexkey TAB hexvalue, goleveldb's iterator
	ldbTable    = "testdata/leveldb/db/000029.ldb"
	ldbTableHex = "testdata/leveldb/000029.hex" // hexkey TAB seq TAB kind TAB hexvalue
)

// copyLevelDB copies the fixture database into a new directory, so that
// a test may lock or damage it, and returns the copy's path.
func copyLevelDB(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.CopyFS(dir, os.DirFS(ldbDir)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ldbView returns goleveldb's view of the fixture: its lines and the
// pairs they hold.
func ldbView(t *testing.T) (lines []string, keys, values [][]byte) {
	t.Helper()
	f, err := os.Open(ldbViewHex)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		hk, hv, _ := strings.Cut(line, "\t")
		k, err1 := hex.DecodeString(hk)
		v, err2 := hex.DecodeString(hv)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", ldbViewHex, line)
		}
		lines, keys, values = append(lines, line), append(keys, k), append(values, v)
	}
	return lines, keys, values
}

// ldbVersion is one entry of the fixture table, as goleveldb read it.
type ldbVersion struct {
	key, value []byte
	seq        uint64
	deletion   bool
}

func ldbTableVersions(t *testing.T) []ldbVersion {
	t.Helper()
	data, err := os.ReadFile(ldbTableHex)
	if err != nil {
		t.Fatal(err)
	}
	var vs []ldbVersion
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		k, err1 := hex.DecodeString(f[0])
		seq, err2 := strconv.ParseUint(f[1], 10, 64)
		v, err3 := hex.DecodeString(f[3])
		if len(f) != 4 || err1 != nil || err2 != nil || err3 != nil || (f[2] != "0" && f[2] != "1") {
			t.Fatalf("%s: bad line %q", ldbTableHex, line)
		}
		vs = append(vs, ldbVersion{key: k, value: v, seq: seq, deletion: f[2] == "0"})
	}
	return vs
}

// rawLines renders pairs as scan prints them without -hex.
func rawLines(keys, values [][]byte) string {
	var b bytes.Buffer
	for i := range keys {
		b.Write(keys[i])
		b.WriteByte('\t')
		b.Write(values[i])
		b.WriteByte('\n')
	}
	return b.String()
}

func TestLevelDBScanDB(t *testing.T) {
	lines, keys, values := ldbView(t)
	if len(lines) < 500 {
		t.Fatalf("fixture view has %d keys", len(lines))
	}
	want := strings.Join(lines, "\n") + "\n"
	if got := mustSST(t, "scan", "-leveldb", "-hex", ldbDir); got != want {
		t.Errorf("scan -leveldb -hex differs from goleveldb's iterator:\n%s", firstDiff(got, want))
	}
	raw := mustSST(t, "scan", "-leveldb", ldbDir)
	if raw != rawLines(keys, values) {
		t.Errorf("scan -leveldb differs from goleveldb's iterator:\n%s", firstDiff(raw, rawLines(keys, values)))
	}
	// Bounds, prefix, limit and keys-only, as for a table.
	lo, hi := "key00100", "key00200"
	i, j := 0, 0
	for i < len(keys) && string(keys[i]) < lo {
		i++
	}
	for j = i; j < len(keys) && string(keys[j]) < hi; j++ {
	}
	if got := mustSST(t, "scan", "-leveldb", ldbDir, "-start", lo, "-end", hi); got != rawLines(keys[i:j], values[i:j]) {
		t.Errorf("scan -leveldb -start %s -end %s:\n%s", lo, hi, firstDiff(got, rawLines(keys[i:j], values[i:j])))
	}
	if got := mustSST(t, "scan", "-leveldb", "-prefix", "key001", ldbDir); got != rawLines(keys[i:j], values[i:j]) {
		t.Errorf("scan -leveldb -prefix key001:\n%s", firstDiff(got, rawLines(keys[i:j], values[i:j])))
	}
	if got, want := mustSST(t, "scan", "-leveldb", "-limit", "3", "-keys-only", ldbDir), string(keys[0])+"\n"+string(keys[1])+"\n"+string(keys[2])+"\n"; got != want {
		t.Errorf("scan -leveldb -limit 3 -keys-only = %q, want %q", got, want)
	}
	if got := mustSST(t, "scan", "-leveldb", "-end", "", ldbDir); got != "" {
		t.Errorf("scan -leveldb -end \"\" = %q, want nothing", got)
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: got %q, want %q (%d and %d lines)", i+1, a, b, len(g), len(w))
		}
	}
	return "equal"
}

func TestLevelDBGetDB(t *testing.T) {
	_, keys, values := ldbView(t)
	// One KEY: the exact bytes, a value written in the log included.
	if got := mustSST(t, "get", "-leveldb", ldbDir, "key00001"); got != "in the log" {
		t.Errorf("get -leveldb key00001 = %q, want the value left in the log", got)
	}
	// Every 7th live key, and absent ones, with -hex: line N answers KEY N.
	args := []string{"get", "-hex", "-leveldb", ldbDir}
	var want strings.Builder
	for i := 0; i < len(keys); i += 7 {
		args = append(args, hex.EncodeToString(keys[i]))
		want.WriteString(hex.EncodeToString(values[i]) + "\n")
	}
	absent := []string{"key00002", "key00003", "no such key"} // deleted in the log, deleted in a table, never written
	for _, k := range absent {
		args = append(args, hex.EncodeToString([]byte(k)))
		want.WriteString(absentHex + "\n")
	}
	out, errs, status := sst(t, args...)
	if status != 1 || out != want.String() {
		t.Errorf("get -hex -leveldb: status %d, output:\n%s", status, firstDiff(out, want.String()))
	}
	if n := strings.Count(errs, "\n"); n != len(absent) || !strings.Contains(errs, "sst: get: "+ldbDir+": key \"6b65793030303032\" not found\n") {
		t.Errorf("get -hex -leveldb: stderr %q, want %d reports naming %s", errs, len(absent), ldbDir)
	}
	// Several raw KEYs: each value and a newline.
	if got := mustSST(t, "get", "-leveldb", ldbDir, "empty", "key00100"); got != "\nback again\n" {
		t.Errorf("get -leveldb empty key00100 = %q", got)
	}
}

func TestLevelDBTable(t *testing.T) {
	vs := ldbTableVersions(t)
	var hexOut, rawOut strings.Builder
	deletions, users := 0, 0
	for i, v := range vs {
		kind := "value"
		if v.deletion {
			kind = "delete"
			deletions++
		}
		if i == 0 || !bytes.Equal(v.key, vs[i-1].key) {
			users++
		}
		fmt.Fprintf(&hexOut, "%x @%d %s\t%x\n", v.key, v.seq, kind, v.value)
		fmt.Fprintf(&rawOut, "%s @%d %s\t%s\n", v.key, v.seq, kind, v.value)
	}
	if deletions == 0 || users == len(vs) {
		t.Fatalf("fixture table: %d deletions, %d user keys of %d entries: want some of each", deletions, users, len(vs))
	}
	if got := mustSST(t, "scan", "-hex", ldbTable); got != hexOut.String() {
		t.Errorf("scan -hex of a LevelDB table:\n%s", firstDiff(got, hexOut.String()))
	}
	if got := mustSST(t, "scan", ldbTable); got != rawOut.String() {
		t.Errorf("scan of a LevelDB table:\n%s", firstDiff(got, rawOut.String()))
	}
	first := strings.SplitAfter(rawOut.String(), "\n")
	if got, want := mustSST(t, "scan", "-limit", "2", ldbTable), first[0]+first[1]; got != want {
		t.Errorf("scan -limit 2 = %q, want %q", got, want)
	}
	k := string(vs[0].key)
	if got, want := mustSST(t, "scan", "-keys-only", "-limit", "1", ldbTable), fmt.Sprintf("%s @%d value\n", k, vs[0].seq); got != want {
		t.Errorf("scan -keys-only -limit 1 = %q, want %q", got, want)
	}
	// Bounds are on user keys: every version of the keys in [lo, hi).
	lo, hi := "key00100", "key00200"
	var bounded strings.Builder
	for _, line := range first {
		if line >= lo && line < hi {
			bounded.WriteString(line)
		}
	}
	if got := mustSST(t, "scan", "-start", lo, "-end", hi, ldbTable); got != bounded.String() {
		t.Errorf("scan -start -end of a LevelDB table:\n%s", firstDiff(got, bounded.String()))
	}

	// get: the newest version; older ones with -seq; deletions absent.
	checked := 0
	for i, v := range vs {
		newest := i == 0 || !bytes.Equal(v.key, vs[i-1].key)
		args := []string{"get", "-hex", ldbTable, hex.EncodeToString(v.key)}
		if !newest {
			args = append(args, "-seq", strconv.FormatUint(v.seq, 10))
		} else if i%5 != 0 && !v.deletion {
			continue
		}
		out, errs, status := sst(t, args...)
		switch {
		case v.deletion:
			if status != 1 || out != "-\n" || !strings.Contains(errs, fmt.Sprintf("not found")) || newest && !strings.Contains(errs, fmt.Sprintf("(deleted at sequence %d)", v.seq)) {
				t.Errorf("sst %q: status %d, out %q, stderr %q: want the deletion reported", args, status, out, errs)
			}
		case status != 0 || out != hex.EncodeToString(v.value)+"\n":
			t.Errorf("sst %q: status %d, out %q, stderr %q; want %x", args, status, out, errs, v.value)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("only %d gets checked", checked)
	}
	wantError(t, []string{"get", "-seq", "1", ldbTable, "key00000"}, 1, "not found at sequence 1")

	// verify and info.
	out := mustSST(t, "verify", ldbTable)
	if !strings.HasPrefix(out, fmt.Sprintf("ok: %d entries, ", len(vs))) {
		t.Errorf("verify of a LevelDB table: %q", out)
	}
	info := mustSST(t, "info", ldbTable)
	for _, s := range []string{
		"format: LevelDB table (magic 0xdb4775248b80fb57)",
		"index block:        snappy-compressed",
		"metaindex block:    snappy-compressed", // goleveldb compresses it
		fmt.Sprintf("entries:            %d (%d values, %d deletions)", len(vs), len(vs)-deletions, deletions),
		fmt.Sprintf("user keys:          %d", users),
		fmt.Sprintf("smallest key:       %q @%d value", vs[0].key, vs[0].seq),
		fmt.Sprintf("largest key:        %q @%d delete", vs[len(vs)-1].key, vs[len(vs)-1].seq),
		"footer ",
	} {
		if !strings.Contains(info, s) {
			t.Errorf("info of a LevelDB table lacks %q:\n%s", s, info)
		}
	}
	if info := mustSST(t, "info", "-hex", ldbTable); !strings.Contains(info, fmt.Sprintf("smallest key:       %x @%d value\n", vs[0].key, vs[0].seq)) {
		t.Errorf("info -hex of a LevelDB table:\n%s", info)
	}
}

// TestLevelDBBuild converts the fixture's live view into a table, and
// into a directory of tables, whose scan is the view's.
func TestLevelDBBuild(t *testing.T) {
	want := mustSST(t, "scan", "-leveldb", ldbDir)
	out := t.TempDir()
	table := filepath.Join(out, "view.sst")
	built := mustSST(t, "build", "-leveldb", ldbDir, "-o", table)
	if !strings.Contains(built, "wrote "+table+"\n") || !strings.Contains(built, fmt.Sprintf("entries:           %d\n", strings.Count(want, "\n")-1)) {
		// One live value holds a newline: its line is two.
		t.Errorf("build -leveldb printed:\n%s", built)
	}
	if got := mustSST(t, "scan", table); got != want {
		t.Errorf("scan of the converted table:\n%s", firstDiff(got, want))
	}
	mustSST(t, "verify", table)
	wantError(t, []string{"build", "-leveldb", ldbDir, "-o", table}, 1, "already exists", "-f")
	mustSST(t, "build", "-f", "-leveldb", ldbDir, "-o", table, "-compression", "none", "-block-size", "512")
	if got := mustSST(t, "scan", table); got != want {
		t.Errorf("scan of the table rebuilt with -f:\n%s", firstDiff(got, want))
	}
	if names := dirNames(t, out); !slices.Equal(names, []string{"view.sst"}) {
		t.Errorf("after the builds, %s holds %q", out, names)
	}

	split := filepath.Join(out, "split")
	printed := mustSST(t, "build", "-leveldb", ldbDir, "-split", "8KiB", "-o", split)
	if !strings.Contains(printed, "manifest.json") {
		t.Errorf("build -leveldb -split printed:\n%s", printed)
	}
	var tables []string
	for _, name := range dirNames(t, split) {
		if strings.HasSuffix(name, ".sst") {
			tables = append(tables, filepath.Join(split, name))
		} else if name != "manifest.json" {
			t.Errorf("%s holds %s", split, name)
		}
	}
	if len(tables) < 3 {
		t.Fatalf("build -split 8KiB wrote %d tables", len(tables))
	}
	slices.Reverse(tables) // -merge reads the newest first; they do not overlap
	if got := mustSST(t, append([]string{"scan", "-merge"}, tables...)...); got != want {
		t.Errorf("scan -merge of the -split tables:\n%s", firstDiff(got, want))
	}
	wantError(t, []string{"build", "-leveldb", ldbDir, "-split", "8KiB", "-o", split}, 1, "earlier build", "-f")

	// A damaged database: the build fails naming the table, and leaves
	// no table, no working directory and the earlier build as it was.
	db := copyLevelDB(t)
	damage(t, filepath.Join(db, "000004.ldb"), 100)
	before := dirNames(t, split)
	wantError(t, []string{"build", "-leveldb", db, "-o", filepath.Join(out, "bad.sst")}, 1, "000004.ldb", "corrupt")
	wantError(t, []string{"build", "-f", "-leveldb", db, "-split", "8KiB", "-o", split}, 1, "000004.ldb", "corrupt")
	wantError(t, []string{"build", "-leveldb", db, "-split", "8KiB", "-o", filepath.Join(out, "newsplit")}, 1, "000004.ldb", "corrupt")
	if names := dirNames(t, out); !slices.Equal(names, []string{"split", "view.sst"}) {
		t.Errorf("after the failed builds, %s holds %q", out, names)
	}
	if names := dirNames(t, split); !slices.Equal(names, before) {
		t.Errorf("after a failed -f build, %s holds %q, want %q", split, names, before)
	}
	wantError(t, []string{"build", "-leveldb", ldbDir, "-spans", "x", "-o", filepath.Join(out, "x.sst")}, 2, "-spans")
	wantError(t, []string{"build", "-leveldb", ldbDir, ldbDir, "-o", filepath.Join(out, "x.sst")}, 2, "exactly one")
}

// damage flips a byte of the file at path, at offset off.
func damage(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestLevelDBVerifyDB(t *testing.T) {
	lines, _, _ := ldbView(t)
	out := mustSST(t, "verify", "-leveldb", ldbDir)
	if !strings.HasPrefix(out, "ok: ") || !strings.Contains(out, fmt.Sprintf("live view: %d keys", len(lines))) {
		t.Errorf("verify -leveldb: %q", out)
	}
	db := copyLevelDB(t)
	damage(t, filepath.Join(db, "000029.ldb"), 50)
	wantError(t, []string{"verify", "-leveldb", db}, 1, filepath.Join(db, "000029.ldb"), "corrupt")
	wantError(t, []string{"scan", "-leveldb", db}, 1, filepath.Join(db, "000029.ldb"), "corrupt")
	wantError(t, []string{"verify", filepath.Join(db, "000029.ldb")}, 1, filepath.Join(db, "000029.ldb"), "corrupt")
	wantError(t, []string{"info", filepath.Join(db, "000029.ldb")}, 1, filepath.Join(db, "000029.ldb"), "corrupt")
}

// writeManifest writes a database in dir whose MANIFEST holds one version
// edit naming the comparator cmp and no table: a log record (LevelDB's
// doc/log_format.md) of a version edit (db/version_edit.cc).
func writeManifest(t *testing.T, dir, cmp string) {
	t.Helper()
	var edit []byte
	edit = binary.AppendUvarint(edit, 1) // comparator
	edit = binary.AppendUvarint(edit, uint64(len(cmp)))
	edit = append(edit, cmp...)
	for _, f := range [][2]uint64{{2, 1}, {3, 3}, {4, 0}} { // log number, next file, last sequence
		edit = binary.AppendUvarint(binary.AppendUvarint(edit, f[0]), f[1])
	}
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	crc.Write([]byte{1}) // FULL
	crc.Write(edit)
	c := crc.Sum32()
	c = (c>>15 | c<<17) + 0xa282ead8
	rec := binary.LittleEndian.AppendUint32(nil, c)
	rec = binary.LittleEndian.AppendUint16(rec, uint16(len(edit)))
	rec = append(append(rec, 1), edit...)
	writeFile(t, filepath.Join(dir, "MANIFEST-000002"), rec)
	writeFile(t, filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000002\n"))
}

func TestLevelDBErrors(t *testing.T) {
	// An empty database reads as empty; another comparator is refused.
	empty := filepath.Join(t.TempDir(), "empty")
	writeManifest(t, empty, "leveldb.BytewiseComparator")
	if out := mustSST(t, "scan", "-leveldb", empty); out != "" {
		t.Errorf("scan -leveldb of an empty database: %q", out)
	}
	if out := mustSST(t, "verify", "-leveldb", empty); !strings.HasPrefix(out, "ok: 0 entries in 0 tables") {
		t.Errorf("verify -leveldb of an empty database: %q", out)
	}
	table := filepath.Join(t.TempDir(), "empty.sst")
	mustSST(t, "build", "-leveldb", empty, "-o", table)
	if out := mustSST(t, "scan", table); out != "" {
		t.Errorf("the table built from an empty database holds %q", out)
	}
	rev := filepath.Join(t.TempDir(), "rev")
	writeManifest(t, rev, "leveldb.ReverseComparator")
	wantError(t, []string{"scan", "-leveldb", rev}, 1, "comparator", "leveldb.ReverseComparator", "MANIFEST-000002")
	wantError(t, []string{"get", "-leveldb", rev, "k"}, 1, "comparator")

	// A live table missing; a directory that holds no database.
	db := copyLevelDB(t)
	if err := os.Remove(filepath.Join(db, "000031.ldb")); err != nil {
		t.Fatal(err)
	}
	wantError(t, []string{"get", "-leveldb", db, "k"}, 1, "000031.ldb")
	wantError(t, []string{"scan", "-leveldb", t.TempDir()}, 1, "no LevelDB database")
	wantError(t, []string{"scan", "-leveldb", filepath.Join(t.TempDir(), "nothing")}, 1, "nothing")

	// Usage: a database without -leveldb, a table with it, flags that do
	// not apply.
	wantError(t, []string{"scan", ldbDir}, 2, ldbDir, "add -leveldb")
	wantError(t, []string{"get", ldbDir, "k"}, 2, "add -leveldb")
	wantError(t, []string{"verify", ldbDir}, 1, "add -leveldb")
	wantError(t, []string{"info", ldbDir}, 2, "add -leveldb")
	wantError(t, []string{"scan", "-leveldb", ldbTable}, 2, "drop -leveldb")
	wantError(t, []string{"scan", "-leveldb", "-merge", ldbDir}, 2, "-merge")
	wantError(t, []string{"scan", "-spans", ldbTable}, 2, "no spans")
	wantError(t, []string{"get", "-leveldb", "-seq", "5", ldbDir, "k"}, 2, "-seq")
	wantError(t, []string{"verify", "-leveldb", ldbDir, ldbDir}, 2, "one DIR")
	ours := filepath.Join(t.TempDir(), "ours.sst")
	mustSST(t, "build", "-leveldb", ldbDir, "-o", ours)
	wantError(t, []string{"get", "-seq", "5", ours, "k"}, 2, "-seq applies to a LevelDB table")

	for _, cmd := range []string{"scan", "get", "verify", "build", "info"} {
		if text, _ := commandUsage(cmd); !strings.Contains(text, "\nLevelDB: ") {
			t.Errorf("sst help %s lacks the LevelDB paragraph", cmd)
		}
	}
}

// TestLevelDBTableFilter reads a table laid out as LevelDB 1.23 writes
// one (internal/ldbtest): raw blocks and its bloom filter, which info
// reports and get consults.
func TestLevelDBTableFilter(t *testing.T) {
	var entries []ldbtest.Entry
	for i := range 500 {
		e := ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", i)), Seq: uint64(1000 + i), Kind: 1, Value: []byte(fmt.Sprintf("v%d", i))}
		if i%10 == 3 {
			e.Kind, e.Value = 0, nil
		}
		entries = append(entries, e)
		if i%25 == 0 { // an older version below
			entries = append(entries, ldbtest.Entry{Key: e.Key, Seq: uint64(i), Kind: 1, Value: []byte("old")})
		}
	}
	path := filepath.Join(t.TempDir(), "000005.ldb")
	writeFile(t, path, ldbtest.WriteTable(entries, ldbtest.Options{BlockSize: 256}))
	info := mustSST(t, "info", path)
	for _, s := range []string{
		"index block:        raw",
		"meta blocks:        filter.leveldb.BuiltinBloomFilter2",
		"filter policy:      leveldb.BuiltinBloomFilter2, ",
		fmt.Sprintf("entries:            %d (%d values, 50 deletions)", len(entries), len(entries)-50),
		"user keys:          500",
	} {
		if !strings.Contains(info, s) {
			t.Errorf("info lacks %q:\n%s", s, info)
		}
	}
	if out := mustSST(t, "verify", path); out != fmt.Sprintf("ok: %d entries, %d data blocks\n", len(entries), dataBlocks(t, info)) {
		t.Errorf("verify: %q", out)
	}
	if got := mustSST(t, "get", path, "k0100", "k0101"); got != "v100\nv101\n" {
		t.Errorf("get = %q", got)
	}
	if got := mustSST(t, "get", "-seq", "200", path, "k0100"); got != "old" {
		t.Errorf("get -seq 200 = %q, want the older version", got)
	}
	wantError(t, []string{"get", path, "k0103"}, 1, "(deleted at sequence 1103)")
	wantError(t, []string{"get", path, "absent"}, 1, "key \"absent\" not found")
	if got := mustSST(t, "scan", "-prefix", "k0100", path); got != "k0100 @1100 value\tv100\nk0100 @100 value\told\n" {
		t.Errorf("scan -prefix k0100 = %q", got)
	}
}

// dataBlocks returns the "data blocks:" count info printed.
func dataBlocks(t *testing.T, info string) int {
	t.Helper()
	_, rest, _ := strings.Cut(info, "data blocks:")
	n, err := strconv.Atoi(strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("info: no data block count:\n%s", info)
	}
	return n
}

// TestLevelDBTableDamage: every truncation and a sweep of bit flips of the
// fixture table give an error or a clean run (a flip in bytes no read
// depends on), never a panic, and verify never passes a damaged table
// that scan reads differently.
func TestLevelDBTableDamage(t *testing.T) {
	data, err := os.ReadFile(ldbTable)
	if err != nil {
		t.Fatal(err)
	}
	want := mustSST(t, "scan", ldbTable)
	path := filepath.Join(t.TempDir(), "000029.ldb")
	step := 1
	if testing.Short() {
		step = 17
	}
	for n := 0; n < len(data); n += step * 31 {
		writeFile(t, path, data[:n])
		for _, cmd := range []string{"scan", "verify", "info"} {
			if _, errs, status := sst(t, cmd, path); status == 0 || strings.Contains(errs, "internal error") {
				t.Fatalf("%s of the table cut to %d bytes: status %d, stderr %q", cmd, n, status, errs)
			}
		}
	}
	for off := 0; off < len(data); off += step * 13 {
		d := bytes.Clone(data)
		d[off] ^= 0x10
		writeFile(t, path, d)
		out, errs, status := sst(t, "scan", path)
		if strings.Contains(errs, "internal error") {
			t.Fatalf("scan with a bit flipped at %d: %s", off, errs)
		}
		vout, verrs, vstatus := sst(t, "verify", path)
		if strings.Contains(verrs, "internal error") {
			t.Fatalf("verify with a bit flipped at %d: %s", off, verrs)
		}
		if vstatus == 0 && (status != 0 || out != want) {
			t.Errorf("bit flipped at %d: verify passed (%q) but scan read status %d, %s", off, vout, status, firstDiff(out, want))
		}
	}
}

// TestInfoLevelDBDir: info -leveldb DIR prints the database's summary
// from its MANIFEST and logs, as info -rocksdb does, and names a table
// whose file's size is not the MANIFEST's.
func TestInfoLevelDBDir(t *testing.T) {
	out := mustSST(t, "info", "-leveldb", ldbDir)
	for _, want := range []string{
		"database: " + ldbDir + "\n",
		"format: LevelDB database (CURRENT names MANIFEST-000000)\n",
		"last sequence: 1542\n", // as verify -leveldb reads it
		"log entries: 229 (writes replayed from the write-ahead logs)\n",
		"tables: 14 (73156 bytes)\n",
		"  level 0: 4 tables, 31659 bytes\n",
		"    000029.ldb  7707 bytes  \"key00000\" @990 value .. \"key00596\" @989 delete\n",
		"  level 1: 10 tables, 41497 bytes\n",
		"    000015.ldb  4377 bytes  \"bin\\x00\\x01\" @662 value .. \"key00068\" @130 value\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info -leveldb lacks %q:\n%s", want, out)
		}
	}
	if out := mustSST(t, "info", "-leveldb", "-hex", ldbDir); !strings.Contains(out, "000015.ldb  4377 bytes  62696e0001 @662 value .. 6b65793030303638 @130 value\n") {
		t.Errorf("info -leveldb -hex:\n%s", out)
	}
	db := copyLevelDB(t)
	if err := os.Truncate(filepath.Join(db, "000029.ldb"), 7000); err != nil {
		t.Fatal(err)
	}
	if out := mustSST(t, "info", "-leveldb", db); !strings.Contains(out, "000029.ldb  7707 bytes (the MANIFEST's size; the file holds 7000)  ") {
		t.Errorf("info -leveldb of a truncated table:\n%s", out)
	}
}

// TestTruncatedTable cuts a LevelDB, a RocksDB and an sstkit table short:
// each command says the file is too short for a table, or ends in no
// known footer, naming the formats tried, where it once quoted only this
// module's magic number ("bad magic number ... (want 0x0a1a0a0d5453538b)")
// for a LevelDB table. A
// known footer damaged otherwise keeps the reader's own error.
func TestTruncatedTable(t *testing.T) {
	dir := t.TempDir()
	ours := buildText(t, "a\t1", "b\t2")
	rTables, _ := filepath.Glob("../../rocksdb/testdata/golden/native/fv6-bloom10/*.sst")
	if len(rTables) == 0 {
		t.Fatal("no RocksDB table")
	}
	for _, src := range []string{ldbTable, rTables[0], ours} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 10, 47, 48, 100, len(data) / 2, len(data) - 1} {
			file := filepath.Join(dir, fmt.Sprintf("cut-%d.ldb", n))
			writeFile(t, file, data[:n])
			want := []string{"truncated, or not a table", "0xdb4775248b80fb57", "0x88e241b785f4cff7", "0x0a1a0a0d5453538b"}
			if n < leveldb.FooterLen {
				want = []string{fmt.Sprintf("file of %d bytes is too short for a table", n), "truncated, or not a table"}
			} else {
				want = append(want, "ends in no known table footer")
			}
			for _, args := range [][]string{{"info", file}, {"scan", file}, {"verify", file}, {"get", file, "k"}, {"scan", "-merge", file, ours}} {
				if errs := wantError(t, args, 1, append(want, file)...); strings.Contains(errs, "(want ") {
					t.Errorf("sst %q: %q", args, errs)
				}
			}
		}
	}
	// Our footer with a bad checksum; a Pebble table's magic number.
	data, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.sst")
	data[len(data)-12] ^= 1
	writeFile(t, bad, data)
	wantError(t, []string{"info", bad}, 1, "footer checksum")
	pebble := filepath.Join(dir, "pebble.sst")
	writeFile(t, pebble, binary.LittleEndian.AppendUint64(make([]byte, 100), pebbleMagic))
	wantError(t, []string{"scan", pebble}, 1, "a Pebble table")
}

// TestLevelDBTableSizeMismatch: a live table whose file is shorter or
// longer than the MANIFEST records fails on its footer, and every -leveldb
// command's error gives both sizes.
func TestLevelDBTableSizeMismatch(t *testing.T) {
	for _, size := range []int64{7000, 7707 + 100} {
		db := copyLevelDB(t)
		table := filepath.Join(db, "000029.ldb")
		data, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 7707 {
			t.Fatalf("%s: %d bytes, want the 7707 its MANIFEST records", table, len(data))
		}
		data = append(data, make([]byte, 100)...)[:size]
		writeFile(t, table, data)
		want := fmt.Sprintf("the MANIFEST records 7707 bytes for 000029.ldb; the file holds %d", size)
		for _, args := range [][]string{
			{"scan", "-leveldb", db},
			{"get", "-leveldb", db, "key00001", "key00500"},
			{"verify", "-leveldb", db},
			{"build", "-leveldb", db, "-o", filepath.Join(t.TempDir(), "out.sst")},
		} {
			_, errs, status := sst(t, args...)
			if status != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, table) {
				t.Errorf("sst %q: status %d, stderr %q; want 1 and %q", args, status, errs, want)
			}
		}
	}
}
