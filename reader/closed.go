package reader

import (
	"errors"
	"os"
)

// errIsDir is Open's error for a path that names a directory: the same
// *os.PathError form as os.Open's own errors, "open PATH: is a directory".
func errIsDir(path string) error {
	return &os.PathError{Op: "open", Path: path, Err: errors.New("is a directory, not a table file")}
}

// closedTwiceError is the error of a second Close: one line naming the
// operation and the file, wrapping ErrClosed.
type closedTwiceError struct {
	name string // the path given to Open; "" for a Reader from New
}

func (e *closedTwiceError) Error() string {
	if e.name == "" {
		return "sstable: close: reader already closed"
	}
	return "sstable: close " + e.name + ": reader already closed"
}

func (e *closedTwiceError) Unwrap() error { return ErrClosed }
