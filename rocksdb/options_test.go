package rocksdb_test

import (
	"slices"
	"testing"

	"github.com/sstkit/sstable/rocksdb"
)

// TestOptionsMergeOperators: with OptionsMergeOperators, the built-in
// operators the OPTIONS file names read every column family as the same
// operators given by the caller do, and without either a merged key is
// an ErrUnresolved error.
func TestOptionsMergeOperators(t *testing.T) {
	dir := "testdata/golden/db-7.8.3/s5/db"
	given, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{MergeOperators: dbMergeOperators()})
	if err != nil {
		t.Fatal(err)
	}
	defer given.Close()
	named, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{OptionsMergeOperators: true})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	merged := 0
	for _, cf := range given.ColumnFamilies() {
		want, err := dboView(given, cf, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dboView(named, cf, false)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("column family %q: %d lines, %v; want the %d lines read with the operators given", cf, len(got), err, len(want))
		}
		if op := named.ColumnFamilyOptions(cf)["merge_operator"]; op != "" && op != "nullptr" {
			merged++
		}
	}
	if merged < 2 {
		t.Fatalf("%d column families name a merge operator; the golden database has two", merged)
	}
}
