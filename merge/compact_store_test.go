package merge_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// The tests here are a store's use of Compact (issue 49, items 11 to
// 13): its own file names and no manifest, an empty output table, and
// the deletions kept counted in TableInfo and user properties.

// storeLevels returns a stack of a memtable of tombstones over a table:
// the memtable deletes keys k000..k199 (value "DEL"), the table holds
// k000..k299.
func storeLevels(t *testing.T) ([]merge.Level, *merge.Options) {
	t.Helper()
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("k%03d", i))
	}
	older := table(t, t.TempDir(), keys)
	var mk, mv [][]byte
	for _, k := range keys[:200] {
		mk, mv = append(mk, []byte(k)), append(mv, []byte("DEL"))
	}
	mem := &merge.Memtable{NewCursor: func() merge.Cursor { return merge.SliceCursor(mk, mv) }}
	opts := &merge.Options{IsDeletion: func(v []byte) bool { return string(v) == "DEL" }}
	return []merge.Level{mem, merge.Tables(older)}, opts
}

// TestCompactNoManifest writes a store's names into a directory holding
// other files: no manifest, no staging directory left, the other files
// untouched, and a name that exists refused with everything written
// removed.
func TestCompactNoManifest(t *testing.T) {
	levels, opts := storeLevels(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "CURRENT")
	if err := os.WriteFile(other, []byte("store"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := 41
	name := func(n int) string { next++; return strconv.Itoa(next) + ".ldb" }
	infos, err := merge.Compact(levels, &merge.CompactOptions{
		Options: *opts, Dir: dir, NoManifest: true, TableName: name,
		TargetTableSize: 800, Builder: &builder.Options{BlockSize: 256}, // a few tables
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) < 3 {
		t.Fatalf("%d tables, want 3 or more", len(infos))
	}
	var want []string
	for i, ti := range infos {
		base := strconv.Itoa(42+i) + ".ldb"
		if ti.Path != filepath.Join(dir, base) {
			t.Fatalf("table %d at %s, want %s", i, ti.Path, base)
		}
		want = append(want, base)
	}
	want = append(want, "CURRENT")
	slices.Sort(want)
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("directory holds %q, want %q (no manifest, no staging directory)", got, want)
	}
	var all []string
	var rs []*reader.Reader
	for _, ti := range infos {
		r, err := reader.Open(ti.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	all, err = scan(t, []merge.Level{merge.Tables(rs...)}, nil)
	if err != nil || len(all) != 300 {
		t.Fatalf("output reads %d keys (%v), want 300 (100 live, 200 deletions kept)", len(all), err)
	}

	// A name that exists: an error, and the tables written before it gone.
	before := dirNames(t, dir)
	next = 0
	clash := func(n int) string {
		if n == 3 {
			return "CURRENT"
		}
		return fmt.Sprintf("new-%d.sst", n)
	}
	_, err = merge.Compact(levels, &merge.CompactOptions{
		Options: *opts, Dir: dir, NoManifest: true, TableName: clash,
		TargetTableSize: 800, Builder: &builder.Options{BlockSize: 256},
	})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a table named as an existing file: %v, want an error wrapping fs.ErrExist", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, before) {
		t.Fatalf("after the failed compaction the directory holds %q, want %q", got, before)
	}
	if b, err := os.ReadFile(other); err != nil || string(b) != "store" {
		t.Fatalf("CURRENT now %q, %v", b, err)
	}
}

// TestCompactEmptyOutput checks what a compaction whose view is empty
// gives: no table and a manifest listing none, or with EmptyTable (and
// NoManifest) one table holding nothing, that reads as empty.
func TestCompactEmptyOutput(t *testing.T) {
	levels, opts := storeLevels(t)
	levels = levels[:1] // the memtable's tombstones alone, at the bottom
	out := filepath.Join(t.TempDir(), "out")
	infos, err := merge.Compact(levels, &merge.CompactOptions{Options: *opts, Dir: out, Bottom: true})
	if err != nil || len(infos) != 0 {
		t.Fatalf("default: %d tables, %v; want none", len(infos), err)
	}
	m, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
	if err != nil || len(m.Tables) != 0 {
		t.Fatalf("default: manifest %v, %v; want one listing no table", m, err)
	}

	dir := t.TempDir()
	infos, err = merge.Compact(levels, &merge.CompactOptions{Options: *opts, Dir: dir, Bottom: true, NoManifest: true, EmptyTable: true})
	if err != nil || len(infos) != 1 {
		t.Fatalf("EmptyTable: %d tables, %v; want one", len(infos), err)
	}
	if ti := infos[0]; ti.Entries != 0 || ti.Spans != 0 || ti.Smallest != nil || ti.Largest != nil || ti.Size <= 0 {
		t.Fatalf("EmptyTable: %+v, want an empty table", ti)
	}
	r, err := reader.Open(infos[0].Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := scan(t, []merge.Level{merge.Tables(r)}, nil); err != nil || len(got) != 0 {
		t.Fatalf("the empty table reads %q, %v", got, err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"000001.sst"}) {
		t.Fatalf("directory holds %q", got)
	}

	_, err = merge.Compact(levels, &merge.CompactOptions{Options: *opts, Dir: filepath.Join(t.TempDir(), "x"), EmptyTable: true})
	if err == nil {
		t.Fatal("EmptyTable with a manifest: no error")
	}
}

// TestCompactDeletionsCounted checks that TableInfo counts the deletions
// a compaction above the bottom keeps, table by table, and that
// UserProperties sees the count and stores what it returns.
func TestCompactDeletionsCounted(t *testing.T) {
	levels, opts := storeLevels(t)
	for _, target := range []int64{0, 2000} {
		out := filepath.Join(t.TempDir(), "out")
		var seen []bulk.TableInfo
		infos, err := merge.Compact(levels, &merge.CompactOptions{
			Options: *opts, Dir: out, TargetTableSize: target, Builder: &builder.Options{BlockSize: 256},
			UserProperties: func(ti bulk.TableInfo) map[string][]byte {
				seen = append(seen, ti)
				return map[string][]byte{"store.tombstones": []byte(strconv.FormatInt(ti.Deletions, 10)), "store.level": []byte("1")}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if target > 0 && len(infos) < 2 {
			t.Fatalf("target %d: %d tables, want several", target, len(infos))
		}
		var dels int64
		for i, ti := range infos {
			r, err := reader.Open(ti.Path, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The table's own count: its entries valued "DEL".
			var n int64
			it := r.NewIter(nil)
			for ok := it.First(); ok; ok = it.Next() {
				if string(it.Value()) == "DEL" {
					n++
				}
			}
			it.Close()
			user := r.Properties().User
			r.Close()
			if ti.Deletions != n || seen[i].Deletions != n {
				t.Fatalf("target %d table %d: TableInfo.Deletions %d, UserProperties saw %d, the table holds %d", target, i, ti.Deletions, seen[i].Deletions, n)
			}
			if string(user["store.tombstones"]) != strconv.FormatInt(n, 10) || string(user["store.level"]) != "1" {
				t.Fatalf("target %d table %d: user properties %q", target, i, user)
			}
			dels += n
		}
		if dels != 200 {
			t.Fatalf("target %d: %d deletions kept, want 200", target, dels)
		}
		m, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
		if err != nil || m.Tables[0].Deletions != infos[0].Deletions {
			t.Fatalf("manifest %v, %v: want the deletions recorded", m, err)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
