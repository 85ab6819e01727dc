package rocksdb_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNativeGolden checks tables RocksDB 10.5.1 wrote at format_version 6
// and 7, with Bloom and Ribbon filters, kept in testdata/golden/native
// with the view RocksDB printed of them (see its README), so that the
// check runs without node. TestNativeRocksDB runs the same checks on
// tables written afresh.
func TestNativeGolden(t *testing.T) {
	root := filepath.Join("testdata", "golden", "native")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	type kind struct {
		version uint32
		filter  string
	}
	seen := map[kind]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		nc := readNativeCase(t, dir)
		seen[kind{nc.FormatVersion, nc.Filter}] = true
		t.Run(e.Name(), func(t *testing.T) { checkNativeCase(t, nc, dir, dir) })
	}
	for _, v := range []uint32{6, 7} {
		for _, f := range []string{"bloom", "ribbon"} {
			if !seen[kind{v, f}] {
				t.Errorf("no golden case at format_version %d with a %s filter", v, f)
			}
		}
	}
}

// TestNativeDBGolden checks OpenDB on a database directory RocksDB 10.5.1
// wrote, kept in testdata/golden/native-db (see its README) with what
// RocksDB's read-only open read from it, so that the check runs without
// node: column families, tables on level 0, and a log tail over two logs,
// the older holding records one family has since flushed.
// TestNativeRocksDB runs the same checks (checkNativeDB) on databases
// written afresh.
func TestNativeDBGolden(t *testing.T) {
	root := filepath.Join("testdata", "golden", "native-db")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(root, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			nc := readNativeCase(t, dir)
			dbDir := filepath.Join(dir, "db")
			logs, err := filepath.Glob(filepath.Join(dbDir, "*.log"))
			if err != nil {
				t.Fatal(err)
			}
			// The corpus must keep covering what it was chosen for.
			if !nc.Tail || len(nc.ColumnFamilies) < 2 || len(logs) < 2 {
				t.Fatalf("a golden database with a log tail (%v), column families (%q) and two logs or more (%d)", nc.Tail, nc.ColumnFamilies, len(logs))
			}
			checkNativeDB(t, nc, dbDir, gunzipTemp(t, filepath.Join(dir, "db-want.txt.gz")))
		})
	}
	if n == 0 {
		t.Fatalf("no golden database in %s", root)
	}
}

// gunzipTemp decompresses the gzip file at path into a file of t's and
// returns that file's path.
func gunzipTemp(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".gz"))
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
