package main

// Tests of sst -rocksdb DIR on RocksDB databases, against what RocksDB
// itself read from them: the golden databases of package rocksdb, written
// by RocksDB 7.8.3 (rocksdb/testdata/golden/db-7.8.3, README.md there),
// each with the view and Gets DB::OpenForReadOnly gave of every column
// family (want) and the writer's tables per level (info). Each test reads
// a copy: the directories carry LOCK files, and a reading must leave them
// byte for byte as they were.

import (
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const rdbDBGolden = "../../rocksdb/testdata/golden/db-7.8.3"

// rdbDBSeeds are the golden databases: s1 (five families, merges through
// both built-in operators, blob files, a family dropped and re-created),
// s5 (format_version 0 tables, a family only the log knows) and s6
// (recycled logs, compressed blob files).
var rdbDBSeeds = []string{"s1", "s5", "s6"}

// rdbFamily is one column family of a want file: RocksDB's view
// ("hexkey<TAB>hexvalue" lines), its Gets ("hexkey<TAB>hexvalue" or
// "hexkey<TAB>-") and the keys whose reading needed the merge operator
// (hex, in view order).
type rdbFamily struct {
	name       string
	view, gets []string
	mergedView []string
}

// rdbWant is a golden database's want file.
type rdbWant struct {
	lastSeq  uint64
	families []*rdbFamily
}

func (w *rdbWant) family(name string) *rdbFamily {
	for _, f := range w.families {
		if f.name == name {
			return f
		}
	}
	return nil
}

// readRDBWant parses the want file of golden database seed (the format
// of rocksdb/testdata/golden/db-7.8.3/README.md).
func readRDBWant(t *testing.T, seed string) *rdbWant {
	t.Helper()
	path := filepath.Join(rdbDBGolden, seed, "want")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &rdbWant{}
	var cur *rdbFamily
	section := ""
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "@"); ok {
			word, arg, _ := strings.Cut(rest, " ")
			switch word {
			case "lastseq":
				if w.lastSeq, err = strconv.ParseUint(arg, 10, 64); err != nil {
					t.Fatalf("%s: %q", path, line)
				}
			case "cf":
				cur = &rdbFamily{name: arg}
				w.families = append(w.families, cur)
			case "touched", "open-error":
				t.Fatalf("%s: %q: RocksDB did not read the database as it is", path, line)
			}
			section = word
			continue
		}
		if cur == nil {
			t.Fatalf("%s: %q before a column family", path, line)
		}
		switch section {
		case "view":
			if line != "!ok" {
				if strings.HasPrefix(line, "!") {
					t.Fatalf("%s: RocksDB's view ended in %q", path, line)
				}
				cur.view = append(cur.view, line)
			}
		case "gets":
			cur.gets = append(cur.gets, line)
		case "merged-view":
			cur.mergedView = append(cur.mergedView, line)
		}
	}
	if len(w.families) == 0 {
		t.Fatalf("%s: no column family", path)
	}
	return w
}

// copyRocksDB copies golden database seed into a new directory and
// returns its path, checking at the test's end that the commands left
// it byte for byte as it was.
func copyRocksDB(t *testing.T, seed string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), seed)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(rdbDBGolden, seed, "db"))); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	t.Cleanup(func() {
		if after := snapshot(t, dir); !sameFiles(before, after) {
			t.Errorf("%s: the directory changed: %q, was %q", dir, slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
		}
	})
	return dir
}

// joinLines is lines as a command prints them, one per line.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// rawView renders hexkey<TAB>hexvalue lines as scan prints them without
// -hex.
func rawView(t *testing.T, lines []string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		hk, hv, _ := strings.Cut(l, "\t")
		k, err1 := hex.DecodeString(hk)
		v, err2 := hex.DecodeString(hv)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad view line %q", l)
		}
		b.Write(k)
		b.WriteByte('\t')
		b.Write(v)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRocksDBDBScan(t *testing.T) {
	for _, seed := range rdbDBSeeds {
		t.Run(seed, func(t *testing.T) {
			want := readRDBWant(t, seed)
			dir := copyRocksDB(t, seed)
			keys := 0
			for _, f := range want.families {
				got := mustSST(t, "scan", "-hex", "-rocksdb", dir, "-cf", f.name)
				if w := joinLines(f.view); got != w {
					t.Errorf("scan -hex -rocksdb -cf %s differs from RocksDB's view:\n%s", f.name, firstDiff(got, w))
				}
				keys += len(f.view)
			}
			// The default family without -cf; raw lines; bounds.
			def := want.family("default")
			if got := mustSST(t, "scan", "-rocksdb", "-hex", dir); got != joinLines(def.view) {
				t.Errorf("scan -hex -rocksdb (the default family):\n%s", firstDiff(got, joinLines(def.view)))
			}
			if got, w := mustSST(t, "scan", "-rocksdb", dir), rawView(t, def.view); got != w {
				t.Errorf("scan -rocksdb differs from RocksDB's view:\n%s", firstDiff(got, w))
			}
			if n := len(def.view); n >= 6 {
				lo, _, _ := strings.Cut(def.view[n/3], "\t")
				hi, _, _ := strings.Cut(def.view[2*n/3], "\t")
				got := mustSST(t, "scan", "-rocksdb", "-hex", "-start", lo, "-end", hi, dir)
				if w := joinLines(def.view[n/3 : 2*n/3]); got != w {
					t.Errorf("scan -rocksdb -start %s -end %s:\n%s", lo, hi, firstDiff(got, w))
				}
			}
			t.Logf("%d column families, %d live keys", len(want.families), keys)
		})
	}
}

func TestRocksDBDBGet(t *testing.T) {
	for _, seed := range rdbDBSeeds {
		t.Run(seed, func(t *testing.T) {
			want := readRDBWant(t, seed)
			dir := copyRocksDB(t, seed)
			for _, f := range want.families {
				args := []string{"get", "-hex", "-rocksdb", "-cf", f.name, dir}
				var w strings.Builder
				absent := 0
				for _, g := range f.gets {
					hk, hv, _ := strings.Cut(g, "\t")
					args = append(args, hk)
					w.WriteString(hv + "\n")
					if hv == absentHex {
						absent++
					}
				}
				out, errs, status := sst(t, args...)
				if out != w.String() {
					t.Errorf("get -hex -rocksdb -cf %s differs from RocksDB's Gets:\n%s", f.name, firstDiff(out, w.String()))
				}
				if wantStatus := min(absent, 1); status != wantStatus || strings.Count(errs, "\n") != absent || strings.Count(errs, " not found\n") != absent {
					t.Errorf("get -hex -rocksdb -cf %s: status %d, %d lines on stderr (%.200q); want status %d and %d keys not found", f.name, status, strings.Count(errs, "\n"), errs, wantStatus, absent)
				}
				if absent > 0 && !strings.Contains(errs, "sst: get: "+rocksdbPlace(dir, f.name)+": key \"") {
					t.Errorf("get -rocksdb -cf %s: stderr %.200q does not name the family", f.name, errs)
				}
			}
			// One raw KEY: the exact bytes.
			for _, g := range want.family("default").gets {
				hk, hv, _ := strings.Cut(g, "\t")
				if hv == absentHex {
					continue
				}
				k, _ := hex.DecodeString(hk)
				v, _ := hex.DecodeString(hv)
				if got := mustSST(t, "get", "-rocksdb", dir, "--", string(k)); got != string(v) {
					t.Errorf("get -rocksdb %q = %.100q, want %.100q", k, got, v)
				}
				break
			}
		})
	}
}

func TestRocksDBDBVerify(t *testing.T) {
	for _, seed := range rdbDBSeeds {
		t.Run(seed, func(t *testing.T) {
			want := readRDBWant(t, seed)
			dir := copyRocksDB(t, seed)
			keys := 0
			for _, f := range want.families {
				keys += len(f.view)
			}
			out := mustSST(t, "verify", "-rocksdb", dir)
			if w := fmt.Sprintf("; live view: %d keys in %d column families, last sequence %d\n", keys, len(want.families), want.lastSeq); !strings.HasPrefix(out, "ok: ") || !strings.HasSuffix(out, w) {
				t.Errorf("verify -rocksdb: %q, want a line ending %q", out, w)
			}
		})
	}

	// A flipped byte in a table, in a blob file: exit status 1 naming it.
	for _, ext := range []string{".sst", ".blob"} {
		src := filepath.Join(rdbDBGolden, "s1", "db")
		var name string
		var size int64
		for _, n := range dirNames(t, src) {
			if st, err := os.Stat(filepath.Join(src, n)); err == nil && strings.HasSuffix(n, ext) && st.Size() > size {
				name, size = n, st.Size()
			}
		}
		db := filepath.Join(t.TempDir(), "s1")
		if err := os.CopyFS(db, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		damage(t, filepath.Join(db, name), size/2)
		wantError(t, []string{"verify", "-rocksdb", db}, 1, filepath.Join(db, name), "corrupt")
	}
}

// rdbInfoLevels returns the tables per level and blob files of each
// column family as the writer of golden database seed recorded them
// (its info file: "cf NAME levels L0=1 L6=1 blobs=5").
func rdbInfoLevels(t *testing.T, seed string) map[string]map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rdbDBGolden, seed, "info"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "cf" || f[2] != "levels" {
			continue
		}
		m := map[string]int{}
		for _, kv := range f[3:] {
			k, v, _ := strings.Cut(kv, "=")
			m[k], _ = strconv.Atoi(v)
		}
		out[f[1]] = m
	}
	return out
}

var infoLevelLine = regexp.MustCompile(`^  level (\d+): (\d+) tables?, \d+ bytes$`)

func TestRocksDBDBInfo(t *testing.T) {
	for _, seed := range rdbDBSeeds {
		t.Run(seed, func(t *testing.T) {
			want := readRDBWant(t, seed)
			levels := rdbInfoLevels(t, seed)
			dir := copyRocksDB(t, seed)
			out := mustSST(t, "info", "-rocksdb", dir)
			if !strings.Contains(out, fmt.Sprintf("\nlast sequence: %d\n", want.lastSeq)) {
				t.Errorf("info -rocksdb: no line \"last sequence: %d\":\n%s", want.lastSeq, out)
			}
			// Every family, in RocksDB's order, each with the tables per
			// level and the blob files its writer reported.
			var names []string
			got := map[string]map[string]int{}
			var cur map[string]int
			for _, line := range strings.Split(out, "\n") {
				if name, ok := strings.CutPrefix(line, "column family "); ok {
					name = strings.TrimSuffix(name, ":")
					if n, err := strconv.Unquote(name); err == nil {
						names = append(names, n)
						cur = map[string]int{}
						got[n] = cur
					}
				}
				if m := infoLevelLine.FindStringSubmatch(line); m != nil && cur != nil {
					cur["L"+m[1]], _ = strconv.Atoi(m[2])
				}
				if rest, ok := strings.CutPrefix(line, "  blob files:"); ok && cur != nil {
					n, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
					if cur["blobs"], _ = strconv.Atoi(n); cur["blobs"] == 0 {
						delete(cur, "blobs")
					}
				}
			}
			var wantNames []string
			for _, f := range want.families {
				wantNames = append(wantNames, f.name)
			}
			if !slices.Equal(names, wantNames) {
				t.Errorf("info -rocksdb lists the column families %q, want %q", names, wantNames)
			}
			for name, lv := range levels {
				if name == "cf-recreated" && want.family(name) == nil {
					continue // dropped for good
				}
				w := map[string]int{}
				for k, v := range lv {
					if v != 0 {
						w[k] = v
					}
				}
				if fmt.Sprint(got[name]) != fmt.Sprint(w) {
					t.Errorf("info -rocksdb: column family %q has %v, its writer %v", name, got[name], w)
				}
			}
			// -cf: that family alone; -hex: the keys in hex.
			last := wantNames[len(wantNames)-1]
			one := mustSST(t, "info", "-rocksdb", "-hex", "-cf", last, dir)
			if strings.Count(one, "\ncolumn family ") != 1 || !strings.Contains(one, fmt.Sprintf("\ncolumn family %q:\n", last)) {
				t.Errorf("info -rocksdb -cf %s:\n%s", last, one)
			}
			if strings.Contains(one, `\x`) {
				t.Errorf("info -rocksdb -hex shows quoted keys:\n%s", one)
			}
		})
	}
}

func TestRocksDBDBBuild(t *testing.T) {
	for _, seed := range rdbDBSeeds {
		t.Run(seed, func(t *testing.T) {
			want := readRDBWant(t, seed)
			dir := copyRocksDB(t, seed)
			outDir := t.TempDir()
			for i, f := range want.families {
				out := filepath.Join(outDir, fmt.Sprintf("%d.sst", i))
				report := mustSST(t, "build", "-rocksdb", dir, "-cf", f.name, "-o", out)
				if !strings.HasPrefix(report, "wrote "+out+"\n") || !strings.Contains(report, fmt.Sprintf("\nentries:           %d\n", len(f.view))) {
					t.Errorf("build -rocksdb -cf %s: %q, want %d entries", f.name, report, len(f.view))
				}
				if got := mustSST(t, "scan", "-hex", out); got != joinLines(f.view) {
					t.Errorf("build -rocksdb -cf %s: the table differs from RocksDB's view:\n%s", f.name, firstDiff(got, joinLines(f.view)))
				}
			}
			// -split: tables in key order, which read as the view.
			biggest := want.families[0]
			for _, f := range want.families {
				if len(f.view) > len(biggest.view) {
					biggest = f
				}
			}
			split := filepath.Join(outDir, "split")
			mustSST(t, "build", "-rocksdb", dir, "-cf", biggest.name, "-split", "4KiB", "-o", split)
			tables, _ := filepath.Glob(filepath.Join(split, "*.sst"))
			if len(tables) < 2 {
				t.Errorf("build -rocksdb -split 4KiB wrote %d tables", len(tables))
			}
			var got strings.Builder
			for _, tb := range tables {
				got.WriteString(mustSST(t, "scan", "-hex", tb))
			}
			if got.String() != joinLines(biggest.view) {
				t.Errorf("build -rocksdb -split: the tables differ from RocksDB's view:\n%s", firstDiff(got.String(), joinLines(biggest.view)))
			}
			// Usage: output in the database, -cf with table files.
			wantError(t, []string{"build", "-rocksdb", dir, "-o", filepath.Join(dir, "x.sst")}, 2, "database directory")
			sst1, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			wantError(t, []string{"build", "-rocksdb", "-cf", "default", sst1[0], "-o", filepath.Join(outDir, "x.sst")}, 2, "-cf")
			wantError(t, []string{"build", "-rocksdb", dir, sst1[0], "-o", filepath.Join(outDir, "x.sst")}, 2, "not both")
			wantError(t, []string{"build", "-rocksdb", dir, "-cf", "nope", "-o", filepath.Join(outDir, "x.sst")}, 1, `"nope"`, "column family")
			if _, err := os.Stat(filepath.Join(outDir, "x.sst")); err == nil {
				t.Errorf("a failed build left %s", filepath.Join(outDir, "x.sst"))
			}
		})
	}
}

// TestRocksDBDBMixups: a database given to the wrong reader, a table to
// -rocksdb, flags that do not go together.
func TestRocksDBDBMixups(t *testing.T) {
	rdb := copyRocksDB(t, "s1")
	ldb := copyLevelDB(t)
	out := filepath.Join(t.TempDir(), "x.sst")
	for _, args := range [][]string{
		{"scan", "-leveldb", rdb},
		{"get", "-leveldb", rdb, "k"},
		{"verify", "-leveldb", rdb},
		{"build", "-leveldb", rdb, "-o", out},
	} {
		wantError(t, args, 2, rdb, "holds a RocksDB database", "-rocksdb")
	}
	for _, args := range [][]string{
		{"scan", "-rocksdb", ldb},
		{"get", "-rocksdb", ldb, "k"},
		{"verify", "-rocksdb", ldb},
		{"info", "-rocksdb", ldb},
		{"build", "-rocksdb", ldb, "-o", out},
	} {
		wantError(t, args, 2, ldb, "holds a LevelDB database", "-leveldb")
	}
	// A RocksDB directory without a flag; a table with -rocksdb.
	wantError(t, []string{"scan", rdb}, 2, "add -rocksdb")
	wantError(t, []string{"info", rdb}, 2, "add -rocksdb")
	wantError(t, []string{"get", rdb, "k"}, 2, "add -rocksdb")
	tables, _ := filepath.Glob(filepath.Join(rdb, "*.sst"))
	wantError(t, []string{"scan", "-rocksdb", tables[0]}, 2, "RocksDB table file", "drop -rocksdb")
	wantError(t, []string{"scan", "-rocksdb", ldbTable}, 2, "LevelDB table file", "drop -rocksdb")
	// Flags.
	wantError(t, []string{"scan", "-cf", "default", rdb}, 2, "-cf", "add -rocksdb")
	wantError(t, []string{"scan", "-rocksdb", "-leveldb", rdb}, 2, "do not go together")
	wantError(t, []string{"scan", "-rocksdb", "-merge", rdb}, 2, "-merge")
	wantError(t, []string{"get", "-rocksdb", "-seq", "5", rdb, "k"}, 2, "-seq")
	wantError(t, []string{"verify", "-rocksdb", rdb, rdb}, 2, "one DIR")
	wantError(t, []string{"scan", "-rocksdb", rdb, "-cf", "nope"}, 1, `"nope"`, "cf-with-append")
	wantError(t, []string{"get", "-rocksdb", rdb, "-cf", "nope", "k"}, 1, `"nope"`)
	wantError(t, []string{"scan", "-rocksdb", t.TempDir()}, 1, "no RocksDB database")
	if out, errs, status := sst(t, "build", "-rocksdb", ldb, "-o", out); status == 0 {
		t.Errorf("build -rocksdb of a LevelDB database: %q %q", out, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused build left %s", out)
	}
	for _, cmd := range []string{"scan", "get", "verify", "build", "info"} {
		if text, _ := commandUsage(cmd); !strings.Contains(text, "-rocksdb") || !strings.Contains(text, "\nRocksDB: ") {
			t.Errorf("sst help %s lacks -rocksdb or the RocksDB paragraph", cmd)
		}
	}
}

// TestRocksDBDBUnknownMergeOperator: a column family whose OPTIONS file
// names a merge operator sst does not have reads up to the first key
// whose value needs it (the first key RocksDB merged reading the view),
// then fails naming the key and the operator, exit status 1; its other
// keys read as before.
func TestRocksDBDBUnknownMergeOperator(t *testing.T) {
	const cf = "cf-with-append"
	want := readRDBWant(t, "s1").family(cf)
	if len(want.mergedView) == 0 {
		t.Fatalf("s1's %s has no merged key", cf)
	}
	dir := filepath.Join(t.TempDir(), "s1")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(rdbDBGolden, "s1", "db"))); err != nil {
		t.Fatal(err)
	}
	opts, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	for _, p := range opts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.ReplaceAll(string(b), "merge_operator=StringAppendOperator", "merge_operator=MyAppendOperator"))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := want.mergedView[0]
	i := slices.IndexFunc(want.view, func(l string) bool { return strings.HasPrefix(l, first+"\t") })
	if i < 0 {
		t.Fatalf("merged key %s is not in the view", first)
	}
	out, errs, status := sst(t, "scan", "-hex", "-rocksdb", "-cf", cf, dir)
	if status != 1 || out != joinLines(want.view[:i]) {
		t.Errorf("scan: status %d, output:\n%s", status, firstDiff(out, joinLines(want.view[:i])))
	}
	for _, s := range []string{`key "` + first + `"`, "MyAppendOperator", cf} {
		if !strings.Contains(errs, s) {
			t.Errorf("scan: stderr %q does not name %q", errs, s)
		}
	}
	wantError(t, []string{"get", "-hex", "-rocksdb", "-cf", cf, dir, first}, 1, `key "`+first+`"`, "MyAppendOperator")
	wantError(t, []string{"build", "-hex", "-rocksdb", "-cf", cf, dir, "-o", filepath.Join(t.TempDir(), "x.sst")}, 1, `key "`+first+`"`, "MyAppendOperator")
	wantError(t, []string{"verify", "-rocksdb", dir}, 1, "MyAppendOperator")
	if info := mustSST(t, "info", "-rocksdb", "-cf", cf, dir); !strings.Contains(info, "MyAppendOperator (sst does not have it") {
		t.Errorf("info -rocksdb does not say the operator is unknown:\n%s", info)
	}
	// A key without operands reads as RocksDB read it.
	for _, l := range want.view {
		k, v, _ := strings.Cut(l, "\t")
		if !slices.Contains(want.mergedView, k) {
			if got := mustSST(t, "get", "-hex", "-rocksdb", "-cf", cf, dir, k); got != v+"\n" {
				t.Errorf("get %s = %q, want %q", k, got, v)
			}
			break
		}
	}
}
