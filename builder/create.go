package builder

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempSuffix ends the names of the temporary files Create
// writes beside the target: "." + base name + "." + random digits + TempSuffix. A file
// matching it is an unfinished build and can be removed.
const TempSuffix = ".sst-tmp"

// IsTempFile reports whether name (a base name) is a temporary file left by
// an unfinished Create build. (The spill directories of bulk builds,
// "sst build" included, are bulk.IsTempDir's.)
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
// The errors of a Builder from Create name path, as reader errors name
// the file read: "sstable: PATH: duplicate key \"k\"", "sstable: PATH:
// keys not in strictly increasing order: key \"a\" after \"b\"" (and
// "sstable: create PATH: ...", "sstable: rename into PATH: ..." for its
// file's steps). errors.Is still matches ErrKeyOrder, ErrDuplicateKey,
// ErrClosed and the rest; a Builder from New, which knows no path, says
// "sstable: duplicate key \"k\"".
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
//
// The table's mode is 0644 less the process's umask, as for any file the
// user creates with that mode.
func Create(path string, opts *Options) (*Builder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, "."+base+".", TempSuffix)
	if err != nil {
		return nil, targetErr("create", path, err)
	}
	b := New(f, opts)
	b.file = &tempFile{f: f, path: path, dir: dir}
	return b, nil
}

// createTemp creates a new file in dir named prefix + random digits +
// suffix, as os.CreateTemp does, but with mode 0644 less the umask rather
// than 0600: the finished table should be as readable as any file the
// user creates.
func createTemp(dir, prefix, suffix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) && try < 10000 {
			continue
		}
		return f, err
	}
}

type tempFile struct {
	f    *os.File
	path string
	dir  string
}

func (t *tempFile) abort() error {
	t.f.Close()
	if err := os.Remove(t.f.Name()); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("sstable: %w", err) // names the file left behind
	}
	return nil
}

func (t *tempFile) commit() error {
	if err := t.f.Sync(); err != nil {
		t.abort()
		return targetErr("fsync", t.path, err)
	}
	if err := t.f.Close(); err != nil {
		t.abort()
		return targetErr("close", t.path, err)
	}
	if err := os.Rename(t.f.Name(), t.path); err != nil {
		os.Remove(t.f.Name())
		return targetErr("rename into", t.path, err)
	}
	if d, err := os.Open(t.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return targetErr("fsync directory", t.dir, err)
		}
	}
	return nil
}

// targetErr reports the failure of op on the table at path: the
// temporary file's name, which the os error would give, means nothing to
// the caller once it is removed.
func targetErr(op, path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("sstable: %w", &os.PathError{Op: op, Path: path, Err: err})
}
