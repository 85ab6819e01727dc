package builder_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
)

// TestCreateErrorNamesTarget checks that a Create that cannot make its
// temporary file names the table asked for, once, not the temporary name,
// and keeps the cause for errors.Is.
func TestCreateErrorNamesTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "t.sst")
	_, err := builder.Create(path, nil)
	if err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
	msg := err.Error()
	if want := "sstable: create " + path + ": "; !strings.HasPrefix(msg, want) || strings.Count(msg, "sstable") != 1 {
		t.Errorf("error %q, want it to begin %q and say sstable once", msg, want)
	}
	if strings.Contains(msg, builder.TempSuffix) {
		t.Errorf("error %q names the temporary file", msg)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %q does not match fs.ErrNotExist", msg)
	}
	// A file where the directory should be: ENOTDIR, the same message form.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := builder.Create(filepath.Join(file, "t.sst"), nil); err == nil || strings.Contains(err.Error(), builder.TempSuffix) {
		t.Errorf("Create under a file: %v", err)
	}
}
