package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// snapshot returns the names and contents of the files in dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range dirNames(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, data := range a {
		if other, ok := b[name]; !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}

// TestSplitRebuildKeepsBuild checks that a -split -f rebuild that fails
// leaves the earlier build as it was, and that one that succeeds replaces
// exactly the earlier build's tables and manifest, with fewer tables or
// more, keeping other files.
func TestSplitRebuildKeepsBuild(t *testing.T) {
	dir := t.TempDir()
	in, want := bulkInput(t, dir, "in.txt", 20000, 1)
	dup := filepath.Join(dir, "dup.txt")
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dup, append(data, data[:strings.IndexByte(string(data), '\n')+1]...))
	out := filepath.Join(dir, "tables")
	mustSST(t, "build", "-q", "-split", "100KiB", "-o", out, in)
	writeFile(t, filepath.Join(out, "README"), []byte("not the build's"))
	before := snapshot(t, out)
	if len(before) < 4 {
		t.Fatalf("first build wrote %d files, want several tables, the manifest and README", len(before))
	}

	wantError(t, []string{"build", "-q", "-f", "-split", "100KiB", "-o", out, dup}, 1, "duplicate key")
	if after := snapshot(t, out); !sameFiles(before, after) {
		t.Fatalf("a failed -f rebuild changed the directory: %d files before, %q after", len(before), dirNames(t, out))
	}
	// A rebuild into an empty input directory fails too (no INPUT files
	// is fine, a missing one is not).
	wantError(t, []string{"build", "-q", "-f", "-split", "100KiB", "-o", out, filepath.Join(dir, "missing")}, 1, "missing")
	if after := snapshot(t, out); !sameFiles(before, after) {
		t.Fatalf("a failed -f rebuild changed the directory")
	}

	// Fewer, larger tables: the earlier build's other tables go.
	mustSST(t, "build", "-q", "-f", "-split", "1MiB", "-o", out, in)
	if names := dirNames(t, out); !slices.Equal(names, []string{"000001.sst", "README", bulk.ManifestName}) {
		t.Fatalf("after a rebuild into one table the directory holds %q", names)
	}
	// More, smaller tables.
	mustSST(t, "build", "-q", "-f", "-split", "32KiB", "-o", out, in)
	m, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, ti := range m.Tables {
		paths = append(paths, ti.Path)
		if st, err := os.Stat(ti.Path); err != nil || st.Size() != ti.Size {
			t.Errorf("%s: %v, %v; the manifest says %d bytes", ti.Path, st, err, ti.Size)
		}
	}
	if names := dirNames(t, out); len(names) != len(m.Tables)+2 || len(m.Tables) <= len(before)-2 {
		t.Errorf("after a rebuild into %d tables the directory holds %q", len(m.Tables), names)
	}
	if got := tableLines(t, paths...); !slices.Equal(got, want) {
		t.Errorf("rebuilt tables hold %d entries, want the %d input lines", len(got), len(want))
	}
	if data, _ := os.ReadFile(filepath.Join(out, "README")); string(data) != "not the build's" {
		t.Errorf("README after the rebuilds: %q", data)
	}
}

// TestStaleWorkDirRemoved checks that a build removes the working
// directories a killed build left for the same output, and nothing else:
// not a running build's, not another output's, not a look-alike.
func TestStaleWorkDirRemoved(t *testing.T) {
	skipWithoutFlock(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, []byte("a\t1\n"))
	for _, split := range []bool{false, true} {
		out := filepath.Join(dir, "out.sst")
		where, name := dir, "out.sst"
		if split {
			out = filepath.Join(dir, "tables")
			where, name = out, "tables"
		}
		stale := filepath.Join(where, "."+name+".bulk-123")
		writeFile(t, filepath.Join(stale, ".bulk-runs-456", "run-000001.sst"), make([]byte, 1000))
		kept := []string{
			"." + name + ".bulk-123x",
			"." + name + ".bulk-",
			".other.sst.bulk-123",
			"." + name + ".bulk-7.bulk-8",
		}
		for _, k := range kept {
			writeFile(t, filepath.Join(where, k, "f"), nil)
		}
		// A running build's: locked.
		running, err := newWorkDir(where, name)
		if err != nil {
			t.Fatal(err)
		}
		if !bulk.IsTempDir(filepath.Base(stale)) || !bulk.IsTempDir(filepath.Base(running.path)) {
			t.Fatalf("bulk.IsTempDir does not recognise %s or %s", stale, running.path)
		}

		args := []string{"build", "-q", "-o", out, in}
		if split {
			args = []string{"build", "-q", "-split", "1MiB", "-o", out, in}
		}
		mustSST(t, args...)
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("split %v: the stale working directory is still there: %v", split, err)
		}
		if _, err := os.Stat(running.path); err != nil {
			t.Errorf("split %v: a running build's working directory was removed: %v", split, err)
		}
		for _, k := range kept {
			if _, err := os.Stat(filepath.Join(where, k, "f")); err != nil {
				t.Errorf("split %v: %s was removed: %v", split, k, err)
			}
			os.RemoveAll(filepath.Join(where, k))
		}
		// Once the running build has gone, its directory is stale too.
		running.lock.Close()
		args = append(args[:2], append([]string{"-f"}, args[2:]...)...)
		mustSST(t, args...)
		if _, err := os.Stat(running.path); !os.IsNotExist(err) {
			t.Errorf("split %v: the working directory of a build gone is still there: %v", split, err)
		}
	}
}

// TestBuildErrorsNameUserPaths checks that a build that cannot create its
// output names the path the user gave, not a working directory, and says
// each prefix once.
func TestBuildErrorsNameUserPaths(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeFile(t, in, []byte("a\t1\n"))
	file := filepath.Join(dir, "file")
	writeFile(t, file, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "-o", filepath.Join(dir, "missing", "out.sst"), in}, "sst: build: create " + filepath.Join(dir, "missing", "out.sst") + ": no such file or directory\n"},
		{[]string{"build", "-o", filepath.Join(file, "out.sst"), in}, "sst: build: create " + filepath.Join(file, "out.sst") + ": not a directory\n"},
		{[]string{"info", filepath.Join(dir, "missing.sst")}, "sst: info: open " + filepath.Join(dir, "missing.sst") + ": no such file or directory\n"},
		{[]string{"get", in, "k"}, "sst: get: " + in + ": file of 4 bytes is too short for a table"},
	} {
		_, errs, status := sst(t, tc.args...)
		if status != 1 || !strings.HasPrefix(errs, tc.want) {
			t.Errorf("sst %q: status %d, stderr %q; want 1, %q", tc.args, status, errs, tc.want)
		}
		if strings.Contains(errs, "sstable:") || strings.Contains(errs, "bulk") {
			t.Errorf("sst %q: stderr %q names a library or a working directory", tc.args, errs)
		}
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: no read-only directory test")
		return
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "-o", filepath.Join(ro, "out.sst"), in}, "sst: build: create " + filepath.Join(ro, "out.sst") + ": permission denied\n"},
		{[]string{"build", "-split", "1MiB", "-o", ro, in}, "sst: build: create tables in " + ro + ": permission denied\n"},
		{[]string{"build", "-split", "1MiB", "-o", filepath.Join(ro, "sub"), in}, "sst: build: mkdir " + filepath.Join(ro, "sub") + ": permission denied\n"},
	} {
		if _, errs, status := sst(t, tc.args...); status != 1 || errs != tc.want {
			t.Errorf("sst %q: status %d, stderr %q; want 1, %q", tc.args, status, errs, tc.want)
		}
	}
}

// skipWithoutFlock skips a test that needs builds to lock their working
// directories, where flock is missing or refused.
func skipWithoutFlock(t *testing.T) {
	t.Helper()
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := lockDir(f); err != nil {
		t.Skipf("no flock: %v", err)
	}
}
