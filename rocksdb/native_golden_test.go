package rocksdb_test

import (
	"os"
	"path/filepath"
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
