package leveldb_test

// Golden databases written by the real LevelDB 1.23 (the oracle's gen,
// testdata/golden/regen.sh), read without needing LevelDB: the live view
// must equal the dump LevelDB printed of it, and each table's entries the
// count and hash of those leveldb::Table read.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

func TestGoldenLevelDBDatabases(t *testing.T) {
	for _, name := range []string{"snappy", "none"} {
		t.Run(name, func(t *testing.T) {
			golden := filepath.Join("testdata", "golden", name)
			dir := filepath.Join(t.TempDir(), name)
			copyDir(t, golden, dir, false) // OpenDB writes nothing, but keep testdata out of reach
			dumpBytes, err := os.ReadFile(golden + ".dump")
			if err != nil {
				t.Fatal(err)
			}
			want := splitLines(dumpBytes)
			v := parseView(t, want)
			info, err := os.ReadFile(golden + ".info")
			if err != nil {
				t.Fatal(err)
			}
			var lastSeq uint64
			levels := map[int]int{}
			for _, line := range splitLines(info) {
				f := strings.Fields(line)
				switch {
				case len(f) == 2 && f[0] == "lastseq":
					lastSeq, _ = strconv.ParseUint(f[1], 10, 64)
				case len(f) == 3 && f[0] == "level":
					l, _ := strconv.Atoi(f[1])
					levels[l], _ = strconv.Atoi(f[2])
				}
			}
			tablesFile, err := os.ReadFile(golden + ".tables")
			if err != nil {
				t.Fatal(err)
			}
			wantTables := map[string]string{} // file -> "count sha256"
			for _, line := range splitLines(tablesFile) {
				file, rest, _ := strings.Cut(line, " ")
				wantTables[file] = rest
			}

			for _, noMmap := range []bool{false, true} {
				db, err := leveldb.OpenDB(dir, &leveldb.Options{NoMmap: noMmap})
				if err != nil {
					t.Fatal(err)
				}
				if db.LastSequence() != lastSeq {
					t.Errorf("LastSequence %d, LevelDB wrote %d", db.LastSequence(), lastSeq)
				}
				if db.LogEntries() == 0 {
					t.Errorf("no entries replayed from the log %s holds", name)
				}
				for _, backward := range []bool{false, true} {
					got, err := ourView(db, backward)
					if err != nil {
						t.Fatal(err)
					}
					if d := diffLines(got, want); d != "" {
						t.Errorf("NoMmap=%v backward=%v: our view differs from LevelDB's dump: %s", noMmap, backward, d)
					}
				}
				for i, k := range v.keys {
					got, err := db.Get([]byte(k))
					if err != nil || string(got) != v.vals[i] {
						t.Fatalf("Get(%x) = %.60x, %v; LevelDB reads %.60x", k, got, err, v.vals[i])
					}
				}
				if _, err := db.Verify(); err != nil {
					t.Errorf("Verify: %v", err)
				}
				files := db.Files()
				gotLevels := map[int]int{}
				deleted := 0
				for _, f := range files {
					gotLevels[f.Level]++
					file := fmt.Sprintf("%06d.ldb", f.Number)
					tb, err := leveldb.OpenTable(filepath.Join(dir, file), &leveldb.TableOptions{NoMmap: noMmap})
					if err != nil {
						t.Fatal(err)
					}
					lines, err := tableLines(tb, false)
					if err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					h := sha256.New()
					for _, l := range lines {
						h.Write([]byte(l + "\n"))
					}
					if got := fmt.Sprintf("%d %x", len(lines), h.Sum(nil)); got != wantTables[file] {
						t.Errorf("%s: entries (count sha256) %s, leveldb::Table read %q", file, got, wantTables[file])
					}
					if n, err := tb.Verify(); err != nil || n != int64(len(lines)) {
						t.Errorf("%s: Verify = %d, %v; want %d entries", file, n, err, len(lines))
					}
					tb.Close()
					// Keys the table holds that the view lacks are deleted:
					// Get finds nothing.
					for _, l := range lines {
						hk, _, _ := strings.Cut(l, "\t")
						k, _ := hex.DecodeString(hk)
						if _, live := v.index[string(k)]; live {
							continue
						}
						deleted++
						if got, err := db.Get(k); !errors.Is(err, reader.ErrNotFound) {
							t.Fatalf("Get(%x) of a deleted key = %.60x, %v; want reader.ErrNotFound", k, got, err)
						}
					}
				}
				if len(files) != len(wantTables) || fmt.Sprint(gotLevels) != fmt.Sprint(levels) {
					t.Errorf("tables per level %v (%d tables); LevelDB left %v (%d tables)", gotLevels, len(files), levels, len(wantTables))
				}
				if len(levels) < 2 || deleted == 0 {
					t.Errorf("golden database too tame: tables on %d levels, %d deleted keys in its tables", len(levels), deleted)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
