package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/sstkit/sstable/bulk"
)

// install moves a complete build's tables and manifest from the working
// directory work into dir, in place of an earlier build's, and returns the
// tables at their new paths. A reader that goes by the manifest sees, in
// turn: the earlier manifest and tables; no manifest, while the new tables
// are renamed over the old names and the earlier build's other tables are
// removed (a table already open keeps its contents); the new manifest,
// renamed into place last. A reader that read the earlier manifest must
// have opened its tables by then, or check each table it opens against
// the manifest (size, smallest and largest keys). Killed in the middle,
// install leaves dir without
// a manifest, which the next build (with -f) replaces. The directory is
// fsynced between the steps, so that a crash cannot bring the earlier
// manifest back over new tables.
func install(dir, work string, tables []bulk.TableInfo) ([]bulk.TableInfo, error) {
	old, err := buildFiles(dir)
	if err != nil {
		return nil, err
	}
	broken := func(err error) error {
		return fmt.Errorf("replacing the build in %s (it has no manifest now; build it again): %w", dir, err)
	}
	manifest := filepath.Join(dir, bulk.ManifestName)
	if err := removeFile(manifest); err == nil {
		if err := syncDir(dir); err != nil {
			return nil, broken(err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err // nothing changed yet
	}
	installed := make([]bulk.TableInfo, len(tables))
	names := map[string]bool{}
	for i, t := range tables {
		name := filepath.Base(t.Path)
		dst := filepath.Join(dir, name)
		if err := renameFile(t.Path, dst); err != nil {
			return nil, broken(err)
		}
		t.Path = dst
		installed[i] = t
		names[name] = true
	}
	for _, name := range old {
		if name != bulk.ManifestName && !names[name] {
			if err := removeFile(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, broken(err)
			}
		}
	}
	if err := syncDir(dir); err != nil {
		return nil, broken(err)
	}
	if err := renameFile(filepath.Join(work, bulk.ManifestName), manifest); err != nil {
		return nil, broken(err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return installed, nil
}

// renameFile and removeFile are os.Rename and os.Remove as install calls
// them: tests replace them to watch the order of its steps, or to fail
// one.
var renameFile, removeFile = os.Rename, os.Remove

// buildFiles returns the names of a build's files in dir: the manifest,
// first when there is one, and the tables (NNNNNN.sst) in name order.
func buildFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		switch n := e.Name(); {
		case n == bulk.ManifestName:
			names = append([]string{n}, names...)
		case tableName.MatchString(n):
			names = append(names, n)
		}
	}
	return names, nil
}

var tableName = regexp.MustCompile(`^[0-9]{6,}\.sst$`)

// userPathErr reports the failure of op on path, a path the user gave,
// with the cause of err: an error about a working directory or a file in
// it would name a path the user never saw.
func userPathErr(op, path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}
