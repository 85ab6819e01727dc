package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// watchInstall replaces install's renameFile and removeFile for the rest
// of the test: each step into or out of dir is logged as "remove NAME" or
// "rename NAME" (NAME the base name in dir), and check, if not nil, is
// called before the step is taken, with the step; its error fails the
// step instead. A later call replaces the earlier one's watch.
func watchInstall(t *testing.T, dir string, check func(step string) error) *[]string {
	t.Helper()
	var steps []string
	oldRename, oldRemove := os.Rename, os.Remove
	t.Cleanup(func() { renameFile, removeFile = oldRename, oldRemove })
	do := func(step string, f func() error) error {
		steps = append(steps, step)
		if check != nil {
			if err := check(step); err != nil {
				return err
			}
		}
		return f()
	}
	renameFile = func(from, to string) error {
		if filepath.Dir(to) != dir {
			return oldRename(from, to)
		}
		return do("rename "+filepath.Base(to), func() error { return oldRename(from, to) })
	}
	removeFile = func(path string) error {
		if filepath.Dir(path) != dir {
			return oldRemove(path)
		}
		return do("remove "+filepath.Base(path), func() error { return oldRemove(path) })
	}
	return &steps
}

// TestSplitInstallOrder pins the order in which a -split -f rebuild
// installs its tables in place of an earlier build's, as install's doc
// gives it: the old manifest is removed before any new table is renamed
// in, so that a reader going by the manifest never pairs the old manifest
// with new tables; the earlier build's tables beyond the new ones go
// next; the new manifest comes last, when every table it lists is in
// place. A step that fails leaves the directory without a manifest, and
// the next -f build puts it right.
func TestSplitInstallOrder(t *testing.T) {
	dir := t.TempDir()
	in, want := bulkInput(t, dir, "in.txt", 20000, 1)
	out := filepath.Join(dir, "tables")
	mustSST(t, "build", "-q", "-split", "32KiB", "-o", out, in)
	oldTables := manifestTables(t, out)
	if len(oldTables) < 4 {
		t.Fatalf("the first build wrote %d tables, want at least 4", len(oldTables))
	}

	// Every step sees the directory as the order promises.
	manifest := filepath.Join(out, bulk.ManifestName)
	var newTables int
	steps := watchInstall(t, out, func(step string) error {
		_, err := os.Stat(manifest)
		hasManifest := err == nil
		switch {
		case step == "remove "+bulk.ManifestName:
			if !hasManifest {
				return fmt.Errorf("step %q: no manifest to remove", step)
			}
		case strings.HasPrefix(step, "rename ") && step != "rename "+bulk.ManifestName:
			if hasManifest {
				t.Errorf("step %q: a new table is renamed in while the old manifest is still there", step)
			}
			newTables++
		case step == "rename "+bulk.ManifestName:
			names, err := buildFiles(out)
			if err != nil {
				return err
			}
			if len(names) != newTables {
				t.Errorf("step %q: the directory holds %q, want exactly the %d new tables", step, names, newTables)
			}
		}
		return nil
	})
	mustSST(t, "build", "-q", "-f", "-split", "100KiB", "-o", out, in)
	var wantSteps []string
	wantSteps = append(wantSteps, "remove "+bulk.ManifestName)
	for i := range newTables {
		wantSteps = append(wantSteps, fmt.Sprintf("rename %06d.sst", i+1))
	}
	for i := newTables; i < len(oldTables); i++ {
		wantSteps = append(wantSteps, fmt.Sprintf("remove %06d.sst", i+1))
	}
	wantSteps = append(wantSteps, "rename "+bulk.ManifestName)
	if newTables == 0 || newTables >= len(oldTables) || !slices.Equal(*steps, wantSteps) {
		t.Fatalf("install took the steps\n%q\nwant\n%q", *steps, wantSteps)
	}
	if got := tableLines(t, manifestTables(t, out)...); !slices.Equal(got, want) {
		t.Fatalf("the rebuilt tables hold %d entries, want the %d input lines", len(got), len(want))
	}

	// Fault injection: the second table's rename fails. The old manifest
	// is gone by then, so no manifest pairs with the mix of tables left.
	*steps = nil
	watchInstall(t, out, func(step string) error {
		if step == "rename 000002.sst" {
			return &os.LinkError{Op: "rename", Old: "x", New: step[len("rename "):], Err: syscall.EIO}
		}
		return nil
	})
	errs := wantError(t, []string{"build", "-q", "-f", "-split", "32KiB", "-o", out, in}, 1, "has no manifest now", "input/output error")
	if _, err := os.Stat(manifest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after a failed install (%s) the manifest is there: %v", errs, err)
	}
	watchInstall(t, out, nil)
	mustSST(t, "build", "-q", "-f", "-split", "32KiB", "-o", out, in)
	if got := tableLines(t, manifestTables(t, out)...); !slices.Equal(got, want) {
		t.Fatalf("the build after a failed install holds %d entries, want the %d input lines", len(got), len(want))
	}
}

// TestSplitRefusesBuildFiles checks the boundary of the refusal to build
// over an earlier build without -f: a DIR holding a single file of the
// kind a build writes (one table NNNNNN.sst, or only a manifest.json),
// which a build would replace, is refused and left as it was; a DIR
// holding none (empty, or only other files, which a build keeps) is
// built into.
func TestSplitRefusesBuildFiles(t *testing.T) {
	dir := t.TempDir()
	in, _ := bulkInput(t, dir, "in.txt", 100, 1)
	for _, name := range []string{"000001.sst", "000007.sst", "0000001.sst", bulk.ManifestName} {
		out := filepath.Join(dir, "one-"+name)
		writeFile(t, filepath.Join(out, name), []byte("not from this build"))
		wantError(t, []string{"build", "-q", "-split", "1MiB", "-o", out, in}, 1, "already holds "+name, "use -f")
		if names := dirNames(t, out); !slices.Equal(names, []string{name}) {
			t.Errorf("a refused build into a DIR holding only %s left %q", name, names)
		}
		if data, _ := os.ReadFile(filepath.Join(out, name)); string(data) != "not from this build" {
			t.Errorf("a refused build changed %s: %q", name, data)
		}
	}
	for _, other := range [][]string{nil, {"notes.txt"}, {"1.sst", "00001.sst", "manifest.json.bak"}} {
		out := filepath.Join(dir, fmt.Sprintf("none-%d", len(other)))
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range other {
			writeFile(t, filepath.Join(out, name), []byte("kept"))
		}
		mustSST(t, "build", "-q", "-split", "1MiB", "-o", out, in)
		wantNames := append(slices.Clone(other), "000001.sst", bulk.ManifestName)
		slices.Sort(wantNames)
		if names := dirNames(t, out); !slices.Equal(names, wantNames) {
			t.Errorf("a build into a DIR holding %q left %q, want %q", other, names, wantNames)
		}
	}
}
