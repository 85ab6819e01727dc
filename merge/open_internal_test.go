package merge

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestOpenTablesBounded scans a level of 12 tables both ways and checks
// that the level's iterator never holds more than maxOpenTables table
// iterators, so that a scan or a compaction of a level of any size holds
// a bounded number of them.
func TestOpenTablesBounded(t *testing.T) {
	dir := t.TempDir()
	var rs []*reader.Reader
	for ti := range 12 {
		path := filepath.Join(dir, fmt.Sprintf("%02d.sst", ti))
		b, err := builder.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := b.Add(fmt.Appendf(nil, "k%02d-%02d", ti, i), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		r, err := reader.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	l := Tables(rs...).(*tablesLevel)
	it := l.newIter(nil)
	defer it.Close()
	n, most := 0, 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		most = max(most, it.open)
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		n++
		most = max(most, it.open)
	}
	if n != 240 || most > maxOpenTables || most < 2 {
		t.Fatalf("%d entries seen, at most %d table iterators open (want 240, 2 to %d)", n, most, maxOpenTables)
	}
}
