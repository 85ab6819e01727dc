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
// leaves a partial table at path. Abort removes the temporary file.
func Create(path string, opts *Options) (*Builder, error) {
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
