package builder_test

import (
	"errors"
	"io"
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

// TestCreateBuilderErrorsNamePath checks that the errors of a builder
// from Create name its table, once, after one "sstable: ", and still match
// their sentinels under errors.Is; a builder from New names none. A
// duplicate key says so without ErrKeyOrder's words.
func TestCreateBuilderErrorsNamePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	nbp := builder.New(io.Discard, nil) // a builder from New: no path
	for _, bb := range []*builder.Builder{b, nbp} {
		if err := bb.Add([]byte("b"), nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, err error, want string, sentinels ...error) {
		t.Helper()
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", what, err, want)
			return
		}
		for _, s := range sentinels {
			if !errors.Is(err, s) {
				t.Errorf("%s: %q does not match %v", what, err, s)
			}
		}
	}
	named := "sstable: " + path + ": "
	for _, c := range []struct {
		bb     *builder.Builder
		prefix string
	}{{b, named}, {nbp, "sstable: "}} {
		check("Add(a) after b", c.bb.Add([]byte("a"), nil), c.prefix+`keys not in strictly increasing order: key "a" after "b"`, builder.ErrKeyOrder)
		err := c.bb.Add([]byte("b"), nil)
		check("Add(b) twice", err, c.prefix+`duplicate key "b"`, builder.ErrDuplicateKey, builder.ErrKeyOrder)
		check("AddSpan(c, a)", c.bb.AddSpan([]byte("c"), []byte("a"), nil), c.prefix+`keys not in strictly increasing order: span start "c" is not below its end "a"`, builder.ErrKeyOrder)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	check("Add after Finish", b.Add([]byte("c"), nil), named+"builder closed (after Finish or Abort)", builder.ErrClosed)
	check("Finish after Finish", b.Finish(), named+"builder closed (after Finish or Abort)", builder.ErrClosed)

	// Finish failing on its file's step names the path once.
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	path2 := filepath.Join(gone, "t.sst")
	b2, err := builder.Create(path2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2.Add([]byte("k"), nil)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	err = b2.Finish()
	if err == nil || strings.Count(err.Error(), path2) != 1 || strings.Count(err.Error(), "sstable") != 1 || !strings.HasPrefix(err.Error(), "sstable: ") {
		t.Errorf("Finish into a removed directory: %v, want one \"sstable: \" and %s once", err, path2)
	}
}
