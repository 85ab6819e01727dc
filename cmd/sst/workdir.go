package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// A build works in a directory of its own, "." + OUT's base name +
// ".bulk-" + random digits (bulk.IsTempDir), beside OUT or, with -split,
// inside DIR: the bulk writer spills its runs and writes its tables and
// manifest there, and only a complete build leaves it, by rename. The
// directory is removed on every exit path but kill -9; what a killed
// build leaves, the next build into the same place removes. To tell a
// killed build's directory from a running one's, a build holds an
// exclusive flock on its directory for as long as it runs, and the kernel
// drops the lock when the process dies: a directory whose lock can be
// taken is stale. Where flock is missing (lock_other.go) or refused (some
// network file systems), nothing is removed.

// workDir is a build's working directory, locked while the build runs.
type workDir struct {
	path string
	lock *os.File // the open directory holding the flock; nil: unlocked
}

// workPrefix is the start of the name of a working directory for the
// output named name; random digits follow.
func workPrefix(name string) string { return "." + name + ".bulk-" }

// newWorkDir creates and locks a working directory in parent for the
// output named name.
func newWorkDir(parent, name string) (*workDir, error) {
	for try := 0; ; try++ {
		d, err := os.MkdirTemp(parent, workPrefix(name)+"*")
		if err != nil {
			return nil, err
		}
		f, err := os.Open(d)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && try < 10 {
				continue // taken for stale and removed by another build's removeStale
			}
			os.RemoveAll(d)
			return nil, err
		}
		switch locked, err := lockDir(f); {
		case err != nil:
			// No flock here: run unlocked, as removeStale removes nothing
			// it cannot lock.
			f.Close()
			return &workDir{path: d}, nil
		case !locked && try < 10:
			// Another build's removeStale holds it, and is removing it.
			f.Close()
			continue
		case !locked:
			f.Close()
			return nil, errors.New("cannot lock a working directory")
		}
		// Locked, but removeStale may have locked and removed it first.
		fst, err1 := f.Stat()
		pst, err2 := os.Lstat(d)
		if err1 != nil || err2 != nil || !os.SameFile(fst, pst) {
			f.Close()
			if try < 10 {
				continue
			}
			return nil, errors.New("working directory removed while being created")
		}
		return &workDir{path: d, lock: f}, nil
	}
}

// remove removes the working directory and everything left in it, then
// drops the lock. A second call does nothing more: a build removes it
// before it prints, and again in a deferred call for its error paths.
func (w *workDir) remove() {
	os.RemoveAll(w.path)
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
}

// removeStale removes the working directories for the output named name
// in parent that no running build holds: those left by a killed build.
// It removes nothing whose lock it cannot take, nor any name that is not
// exactly workPrefix(name) and digits, nor a symbolic link.
func removeStale(parent, name string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := workPrefix(name)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !allDigits(rest) || !e.IsDir() {
			continue
		}
		path := filepath.Join(parent, e.Name())
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if locked, err := lockDir(f); err == nil && locked {
			os.RemoveAll(path)
		}
		f.Close()
	}
}

// allDigits reports whether s is one or more decimal digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// syncDir fsyncs the directory dir, so that renames and removals in it
// survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}
