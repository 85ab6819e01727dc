package reader

import (
	"errors"
	"os"

	"github.com/sstkit/sstable/format"
)

// errIsDir is Open's error for a path that names a directory: the same
// *os.PathError form as os.Open's own errors, "open PATH: is a directory".
func errIsDir(path string) error {
	return &os.PathError{Op: "open", Path: path, Err: errors.New("is a directory, not a table file")}
}

// closedTwiceError is the error of a second Close: one line naming the
// operation and the file, wrapping ErrClosed.
type closedTwiceError struct {
	name string // the reader's name: the path given to Open, or Options.Name; "" for none
}

func (e *closedTwiceError) Error() string {
	if e.name == "" {
		return "sstable: close: reader already closed"
	}
	return "sstable: close " + e.name + ": reader already closed"
}

func (e *closedTwiceError) Unwrap() error { return ErrClosed }

// fileError is an error of a named Reader that is not a
// *format.CorruptError (a failed read, ErrClosed): "NAME: err".
type fileError struct {
	name string
	err  error
}

func (e *fileError) Error() string { return e.name + ": " + e.err.Error() }

func (e *fileError) Unwrap() error { return e.err }

// setName names the reader in its errors (see named).
func (r *Reader) setName(name string) {
	r.name = name
	r.errClosed = ErrClosed
	if name != "" {
		r.errClosed = &fileError{name: name, err: ErrClosed}
	}
}

// named returns err as the reader returns it to its caller: naming the
// reader's file, so that a store with many tables needs no wrapping of
// its own. A *format.CorruptError is copied with File set (the original
// may be a section's remembered error, shared by every caller); other
// errors are wrapped. ErrNotFound, nil and the errors of a reader without
// a name are returned as they are, and so is an error already named,
// which makes named idempotent: an iterator names its error once.
func (r *Reader) named(err error) error {
	if err == nil || err == ErrNotFound || r.name == "" {
		return err
	}
	switch e := err.(type) {
	case *format.CorruptError:
		if e.File != "" {
			return err
		}
		c := *e
		c.File = r.name
		return &c
	case *fileError:
		return err
	}
	if err == ErrClosed {
		return r.errClosed
	}
	return &fileError{name: r.name, err: err}
}
