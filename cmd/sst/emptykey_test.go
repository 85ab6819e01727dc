package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// compactedEntries runs compact with args into a new directory and
// returns its report and what its tables hold, scanned one by one.
func compactedEntries(t *testing.T, args ...string) (report, held string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	report = mustSST(t, append([]string{"compact", "-o", out}, args...)...)
	var raw strings.Builder
	for _, tb := range manifestTables(t, out) {
		raw.WriteString(mustSST(t, "scan", tb))
	}
	return report, raw.String()
}

// TestCompactEmptyKey compacts a table whose first key is the empty key:
// compact wrote only the other tables' entries (or "0 tables") with exit
// status 0, for the merged view skipped the table.
func TestCompactEmptyKey(t *testing.T) {
	a := buildText(t, "\tx", "a\t1", "b\t2") // the line "\tx" is the empty key's
	b := buildText(t, "b\t20", "c\t3")
	if got := mustSST(t, "scan", a); got != lines("\tx", "a\t1", "b\t2") {
		t.Fatalf("scan of the table built: %q", got)
	}
	view := lines("\tx", "a\t1", "b\t2", "c\t3")
	if got := mustSST(t, "scan", "-merge", a, b); got != view {
		t.Errorf("scan -merge: %q, want %q", got, view)
	}
	aOverB, bOverA := view, lines("\tx", "a\t1", "b\t20", "c\t3")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a, b}, aOverB},
		{[]string{"-bottom", a, b}, aOverB},
		{[]string{"-bottom", b, a}, bOverA},
		{[]string{"-split", "1", a, b}, aOverB},
		{[]string{"-bottom", a}, lines("\tx", "a\t1", "b\t2")},
	} {
		report, held := compactedEntries(t, tc.args...)
		if held != tc.want {
			t.Errorf("compact %q: the tables hold %q, want %q", tc.args, held, tc.want)
		}
		if n := strings.Count(tc.want, "\n"); !regexp.MustCompile(fmt.Sprintf(`(?m)^entries:\s+%d$`, n)).MatchString(report) {
			t.Errorf("compact %q: report does not count %d entries:\n%s", tc.args, n, report)
		}
	}
}

// writeLevelDBLog writes a LevelDB database in dir whose MANIFEST names
// no table and whose log 000001.log holds one write batch (LevelDB's
// db/write_batch.cc: sequence, count, then kind 1, key and value, each
// length-prefixed) of puts, in one FULL log record (doc/log_format.md).
func writeLevelDBLog(t *testing.T, dir string, puts ...[2]string) {
	t.Helper()
	writeManifest(t, dir, "leveldb.BytewiseComparator")
	batch := binary.LittleEndian.AppendUint64(nil, 1) // sequence
	batch = binary.LittleEndian.AppendUint32(batch, uint32(len(puts)))
	for _, p := range puts {
		batch = append(batch, 1) // a value
		for _, s := range p {
			batch = binary.AppendUvarint(batch, uint64(len(s)))
			batch = append(batch, s...)
		}
	}
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	crc.Write([]byte{1}) // FULL
	crc.Write(batch)
	c := crc.Sum32()
	c = (c>>15 | c<<17) + 0xa282ead8 // masked, as LevelDB stores it
	rec := binary.LittleEndian.AppendUint32(nil, c)
	rec = binary.LittleEndian.AppendUint16(rec, uint16(len(batch)))
	rec = append(append(rec, 1), batch...)
	writeFile(t, filepath.Join(dir, "000001.log"), rec)
}

// TestLevelDBEmptyKeyCompact converts a LevelDB database holding the
// empty key into a table and compacts it: compact -bottom wrote "0
// tables, entries: 0".
func TestLevelDBEmptyKeyCompact(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	writeLevelDBLog(t, db, [2]string{"", "empty"}, [2]string{"k", "v"})
	want := lines("\tempty", "k\tv")
	if got := mustSST(t, "scan", "-leveldb", db); got != want {
		t.Fatalf("scan -leveldb: %q, want %q", got, want)
	}
	view := filepath.Join(t.TempDir(), "view.sst")
	mustSST(t, "build", "-leveldb", db, "-o", view)
	if got := mustSST(t, "scan", view); got != want {
		t.Fatalf("scan of the converted table: %q, want %q", got, want)
	}
	report, held := compactedEntries(t, "-bottom", view)
	if held != want || !regexp.MustCompile(`(?m)^entries:\s+2$`).MatchString(report) {
		t.Errorf("compact -bottom of the converted table: the tables hold %q, want %q; report:\n%s", held, want, report)
	}
}
