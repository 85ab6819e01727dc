package rocksdb_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/rocksdb"
)

// TestTablesAheadOfDamagedLog: when the replay ends at damage in an older
// log while a column family's tables already hold writes made after that
// log (a family flushed alone), the logs cannot give a consistent view
// and OpenDB refuses, as RocksDB's read-only open does ("SST file is
// ahead of WALs"), rather than show that family's tables beside the
// other families' truncated logs. Damage to the newest log is read, as
// RocksDB reads it.
func TestTablesAheadOfDamagedLog(t *testing.T) {
	src := "testdata/golden/native-db/fv6-cfs-tail/db"
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, e.Name())
		}
	}
	sort.Strings(logs)
	if len(logs) < 2 {
		t.Fatalf("%s holds %d logs; the test needs two", src, len(logs))
	}
	for i, name := range []string{logs[0], logs[len(logs)-1]} {
		dir := t.TempDir()
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == name {
				b = b[:len(b)/2] // torn halfway
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		db, err := rocksdb.OpenDB(dir, nil)
		if i == 0 {
			if !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), "ahead of the logs") || !strings.Contains(err.Error(), name) {
				t.Fatalf("older log %s torn: %v, want a corruption naming it and the tables ahead of it", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("newest log %s torn: %v, want the view up to the damage", name, err)
		}
		db.Close()
	}
}
