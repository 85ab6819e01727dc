package rocksdb_test

// Golden databases written by RocksDB 7.8.3 (the database oracle's
// -small workloads, testdata/golden/db-7.8.3/regen.sh), with what
// RocksDB's read-only open read from them: the checks of
// TestRocksDBDatabaseOracle, without RocksDB installed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRocksDBDatabaseGolden(t *testing.T) {
	root := filepath.Join("testdata", "golden", "db-7.8.3")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	// The corpus must keep covering what it was chosen for.
	seen := map[string]bool{}
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "s") {
			continue
		}
		base := filepath.Join(root, e.Name())
		dirs = append(dirs, base)
		info := readDBOInfo(t, filepath.Join(base, "info"))
		want := readDBODump(t, filepath.Join(base, "want"))
		seen["drop="+info.config["drop"]] = true
		seen["ending="+info.config["ending"]] = true
		if _, tail := dboNewestLogTail(t, filepath.Join(base, "db")); tail > 0 && info.config["recycle"] != "0" {
			seen["recycled log with a stale tail"] = true
		}
		for _, lv := range info.levels {
			if lv["blobs"] > 0 {
				seen["blob files"] = true
			}
			if lv["L0"] > 0 {
				seen["level 0 tables"] = true
			}
		}
		for _, c := range want.cfs {
			if len(c.mergedGets) > 0 {
				seen["merges in "+c.name] = true
			}
		}
	}
	var missing []string
	for _, k := range []string{"drop=1", "drop=2", "ending=1", "ending=2", "recycled log with a stale tail",
		"blob files", "level 0 tables", "merges in cf-with-append", "merges in cf-with-add"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the golden databases (%d) lack %q", len(dirs), missing)
	}
	for _, base := range dirs {
		t.Run(filepath.Base(base), func(t *testing.T) {
			t.Parallel()
			st := checkDBOracle(t, filepath.Join(base, "db"), readDBODump(t, filepath.Join(base, "want")))
			t.Logf("%d column families, %d live keys, %d Gets (%d needing a merge operator)", st.families, st.keys, st.gets, st.mergedKeys)
		})
	}
}
