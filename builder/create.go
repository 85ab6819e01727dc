package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TempSuffix ends the names of the temporary files Create
// writes beside the target: "." + base name + "." + random digits + TempSuffix. A file
// matching it is an unfinished build and can be removed.
const TempSuffix = ".sst-tmp"

// IsTempFile reports whether name (a base name) is a temporary file left by
// an unfinished Create build.
func IsTempFile(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, TempSuffix)
}

// Create returns a Builder writing a table to path. It writes to a
// temporary file in the same directory; Finish fsyncs that file, renames
// it to path and fsyncs the directory, so a crash or a failed build never
// leaves a partial table at path.
//
// If a file already exists at path, Finish replaces it atomically, without
// asking: readers that open path see the old table or the new one, never
// a mix, and a Reader already open on the old table keeps reading it. Until
// Finish succeeds the old file is untouched; a failed or aborted build
// leaves it as it was. Callers that must not replace a table should check
// for it first (as "sst build" does without -f).
//
// Create checks opts first (Options.Validate) and returns the error for
// an invalid option without creating any file.
//
// Every Builder from Create must end with Finish or Abort: a Builder
// dropped after an error leaves its temporary file (".NAME.*.sst-tmp",
// see IsTempFile) behind. Abort removes it, and returns nil after Finish,
// so
//
//	b, err := builder.Create(path, opts)
//	if err != nil { ... }
//	defer b.Abort()
//
// cleans up on every error path.
func Create(path string, opts *Options) (*Builder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*"+TempSuffix)
	if err != nil {
		return nil, fmt.Errorf("sstable: create %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a finished table should be as
	// readable as any file the user creates.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("sstable: create %s: %w", path, err)
	}
	b := New(f, opts)
	b.file = &tempFile{f: f, path: path, dir: dir}
	return b, nil
}

type tempFile struct {
	f    *os.File
	path string
	dir  string
}

func (t *tempFile) abort() error {
	t.f.Close()
	if err := os.Remove(t.f.Name()); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("sstable: abort %s: %w", t.path, err)
	}
	return nil
}

func (t *tempFile) commit() error {
	if err := t.f.Sync(); err != nil {
		t.abort()
		return fmt.Errorf("sstable: fsync %s: %w", t.f.Name(), err)
	}
	if err := t.f.Close(); err != nil {
		t.abort()
		return fmt.Errorf("sstable: close %s: %w", t.f.Name(), err)
	}
	if err := os.Rename(t.f.Name(), t.path); err != nil {
		os.Remove(t.f.Name())
		return fmt.Errorf("sstable: rename into %s: %w", t.path, err)
	}
	if d, err := os.Open(t.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sstable: fsync directory %s: %w", t.dir, err)
		}
	}
	return nil
}
