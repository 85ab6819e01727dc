package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAdviceWorks makes the mistakes whose messages advise a flag ("add
// -leveldb", "drop -rocksdb", "read it with -rocksdb instead of -leveldb",
// "use -f", ...), follows each advice as a user would, and checks that
// the command it names then succeeds. info DIR once advised -leveldb,
// which info did not accept.
func TestAdviceWorks(t *testing.T) {
	dir := t.TempDir()
	rdb := copyRocksDB(t, "s1")
	// A copy without its OPTIONS files, as a backup may be: still told
	// from a LevelDB database, by its IDENTITY file.
	bare := filepath.Join(dir, "bare")
	if err := os.CopyFS(bare, os.DirFS(rdb)); err != nil {
		t.Fatal(err)
	}
	opts, _ := filepath.Glob(filepath.Join(bare, "OPTIONS-*"))
	for _, f := range opts {
		os.Remove(f)
	}
	rTables, _ := filepath.Glob(filepath.Join(rdb, "*.sst"))
	rKey := strings.TrimSpace(mustSST(t, "scan", "-rocksdb", "-hex", "-keys-only", "-limit", "1", rdb))
	t1, t2, _ := mergeTables(t)
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, []byte("a\t1\n"))
	spans := filepath.Join(dir, "spans.txt")
	writeFile(t, spans, []byte("a\tb\t\n"))
	existing := filepath.Join(dir, "existing.sst")
	mustSST(t, "build", "-q", "-o", existing, in)
	n := 0
	fresh := func() string { n++; return filepath.Join(dir, "out", strings.Repeat("x", n)) }
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o777); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"scan", ldbDir}, {"get", ldbDir, "key00001"}, {"verify", ldbDir}, {"info", ldbDir},
		{"scan", rdb}, {"get", "-hex", rdb, rKey}, {"verify", rdb}, {"info", rdb}, {"scan", bare}, {"info", bare},
		{"scan", "-leveldb", ldbTable}, {"verify", "-leveldb", ldbTable}, {"info", "-leveldb", ldbTable},
		{"scan", "-leveldb", rTables[0]}, {"info", "-rocksdb", ldbTable}, {"scan", "-rocksdb", rTables[0]},
		{"scan", "-leveldb", rdb}, {"get", "-leveldb", "-hex", rdb, rKey}, {"verify", "-leveldb", rdb}, {"info", "-leveldb", rdb}, {"build", "-leveldb", rdb, "-o", fresh()},
		{"scan", "-rocksdb", ldbDir}, {"get", "-rocksdb", ldbDir, "key00001"}, {"verify", "-rocksdb", ldbDir}, {"info", "-rocksdb", ldbDir},
		{"scan", "-cf", "default", rdb}, {"info", "-cf", "default", rdb}, {"get", "-cf", "default", "-hex", rdb, rKey},
		{"info", "-leveldb", "-cf", "default", ldbDir}, {"scan", "-leveldb", "-cf", "default", ldbDir},
		{"scan", "-tombstone", "00", t1}, {"get", "-tombstone", "00", t1, "a"}, {"verify", "-range-tombstone", "01", t1},
		{"scan", t1, t2},
		{"build", "-q", "-dict", "16KiB", "-o", fresh(), in}, {"build", "-q", "-compression-level", "best", "-o", fresh(), in},
		{"compact", "-compression-level", "best", "-o", fresh(), t1},
		{"build", "-q", "-spans", spans, "-format-version", "3", "-o", fresh(), in},
		{"build", "-q", "-o", existing, in}, {"build", "-leveldb", ldbDir, "-o", existing},
		{"build", "-q", "-o", t.TempDir(), in},
	} {
		_, errs, status := sst(t, args...)
		if status == 0 {
			t.Errorf("sst %q succeeded; want an error with advice", args)
			continue
		}
		fixed, ok := followAdvice(args, errs)
		if !ok {
			t.Errorf("sst %q: no advice found in %q", args, errs)
			continue
		}
		if _, errs2, status := sst(t, fixed...); status != 0 {
			t.Errorf("sst %q advises %q; following it, sst %q fails: %q", args, strings.TrimSpace(errs), fixed, errs2)
		}
	}
}

// Advice as the messages word it.
var (
	adviceAdd     = regexp.MustCompile(`(?:add|use) (-[a-z-]+)( zstd)?`)
	adviceDrop    = regexp.MustCompile(`drop (-[a-z-]+)(?: and (-[a-z-]+))?`)
	adviceInstead = regexp.MustCompile(`with (-[a-z]+) instead of (-[a-z]+)`)
)

// followAdvice returns args changed as the error message errs advises,
// and whether it advised anything.
func followAdvice(args []string, errs string) ([]string, bool) {
	takesValue := map[string]bool{"-format-version": true, "-cf": true, "-split": true, "-compression": true}
	out := slices.Clone(args)
	switch {
	case adviceInstead.MatchString(errs):
		m := adviceInstead.FindStringSubmatch(errs)
		i := slices.Index(out, m[2])
		if i < 0 {
			return nil, false
		}
		out[i] = m[1]
	case adviceDrop.MatchString(errs):
		m := adviceDrop.FindStringSubmatch(errs)
		for _, f := range m[1:] {
			if i := slices.Index(out, f); f != "" && i >= 0 {
				n := 1
				if takesValue[f] {
					n = 2
				}
				out = slices.Delete(out, i, i+n)
			}
		}
	case adviceAdd.MatchString(errs):
		m := adviceAdd.FindStringSubmatch(errs)
		add := []string{m[1]}
		switch {
		case m[2] != "":
			add = append(add, strings.TrimSpace(m[2]))
		case m[1] == "-split":
			add = append(add, "1MiB") // the advice names no size
		}
		out = slices.Insert(out, 1, add...)
		if strings.Contains(errs, `"--" between the FILEs and the KEYs`) {
			out = slices.Insert(out, len(out)-1, "--") // one KEY, last
		}
	default:
		return nil, false
	}
	return out, true
}

// TestLevelDBFlagOnUnflushedRocksDB gives -leveldb a RocksDB database that
// has never flushed (testdata/rocksdb-unflushed): its MANIFEST decodes as
// LevelDB's, and its log holds a single deletion, which LevelDB's batches
// lack. Each command names the directory RocksDB's and the flag that
// reads it, where scan once failed on the log's "unknown kind 7".
func TestLevelDBFlagOnUnflushedRocksDB(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.CopyFS(dir, os.DirFS("testdata/rocksdb-unflushed/db")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"scan", "-leveldb", dir},
		{"get", "-leveldb", dir, "c"},
		{"verify", "-leveldb", dir},
		{"info", "-leveldb", dir},
		{"build", "-leveldb", dir, "-o", filepath.Join(t.TempDir(), "out.sst")},
	} {
		wantError(t, args, 2, dir+" holds a RocksDB database", "with -rocksdb instead of -leveldb")
	}
	if got := mustSST(t, "scan", "-rocksdb", dir); got != "c\t3\n" {
		t.Errorf("scan -rocksdb of the unflushed database = %q, want \"c\\t3\\n\"", got)
	}
	if got := mustSST(t, "get", "-rocksdb", dir, "c"); got != "3" {
		t.Errorf("get -rocksdb c = %q", got)
	}
}
