package builder_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestCreateReplaces checks what Create's documentation says about an
// existing file at the path: it is untouched until Finish, kept by Abort,
// and replaced by Finish; and that a builder dropped without Finish or
// Abort leaves its temporary file.
func TestCreateReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := func(when string) {
		t.Helper()
		if data, err := os.ReadFile(path); err != nil || string(data) != "old contents" {
			t.Errorf("%s: path holds %q, %v; want the old contents", when, data, err)
		}
	}
	tempFiles := func() []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if builder.IsTempFile(e.Name()) {
				names = append(names, e.Name())
			}
		}
		return names
	}

	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	old("before Finish")
	if err := b.Abort(); err != nil {
		t.Fatal(err)
	}
	old("after Abort")
	if names := tempFiles(); len(names) != 0 {
		t.Errorf("temporary files after Abort: %q", names)
	}

	// A dropped builder leaves its temporary file, and the old file.
	b, err = builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := tempFiles(); len(names) != 1 {
		t.Errorf("temporary files of a dropped builder: %q, want one", names)
	}
	old("with a dropped builder")
	b.Abort()

	b, err = builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("k"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := b.Abort(); err != nil { // as a deferred Abort would
		t.Errorf("Abort after Finish = %v", err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatalf("after Finish: %v", err)
	}
	defer r.Close()
	if v, err := r.Get([]byte("k")); err != nil || string(v) != "new" {
		t.Errorf("after Finish: Get = %q, %v", v, err)
	}
	if names := tempFiles(); len(names) != 0 {
		t.Errorf("temporary files after Finish: %q", names)
	}
}
