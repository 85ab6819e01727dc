package bulk_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// TestSortedWriterTableNames checks Options.TableName: names that are
// not a table's base name are refused, and a name given twice, or one
// that exists, is refused rather than replacing the file, with or
// without a manifest, and leaves nothing behind.
func TestSortedWriterTableNames(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", bulk.ManifestName, ".x.sst.123.sst-tmp", ".bulk-sorted-12"} {
		w, err := bulk.NewSortedWriter(t.TempDir(), &bulk.Options{TableName: func(int) string { return bad }, NoManifest: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add([]byte("k"), nil); err == nil {
			t.Errorf("TableName %q accepted", bad)
		}
	}
	for _, noManifest := range []bool{false, true} {
		dir := t.TempDir()
		w, err := bulk.NewSortedWriter(dir, &bulk.Options{
			TableName:       func(int) string { return "same.sst" },
			TargetTableSize: 1, // a table per key
			NoManifest:      noManifest,
		})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Add([]byte("a"), nil)
		if err == nil {
			err = w.Add([]byte("b"), nil) // the second table, named as the first
		}
		if err == nil {
			_, err = w.Finish()
		}
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("NoManifest %v: a name given twice: %v, want fs.ErrExist", noManifest, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("NoManifest %v: %s left behind", noManifest, ents[0].Name())
		}
	}
	// EmptyTable needs NoManifest.
	if _, err := bulk.NewSortedWriter(filepath.Join(t.TempDir(), "x"), &bulk.Options{EmptyTable: true}); err == nil {
		t.Fatal("EmptyTable without NoManifest accepted")
	}
}

// TestSortedWriterAddDeletion checks that AddDeletion counts each
// deletion in the table it lands in, across a cut between tables, and
// that the manifest records the counts.
func TestSortedWriterAddDeletion(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 1}) // a table per key
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c"} {
		add := w.Add
		if i != 1 {
			add = w.AddDeletion
		}
		if err := add([]byte(k), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{1, 0, 1} {
		if tables[i].Deletions != want || m.Tables[i].Deletions != want {
			t.Fatalf("table %d: Deletions %d, manifest %d, want %d", i, tables[i].Deletions, m.Tables[i].Deletions, want)
		}
	}
}
