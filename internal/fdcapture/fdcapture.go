//go:build unix

// Package fdcapture lets tests check that library code writes nothing to
// the process's standard output or standard error: Start points a file
// descriptor at a temporary file, and the function it returns puts the
// descriptor back and returns what was written. Go's println, loggers on
// os.Stderr and runtime messages all go through the descriptors, so a
// capture sees them all, whatever wrote them.
package fdcapture

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Start redirects file descriptor fd (1 for stdout, 2 for stderr) into a
// temporary file of tb until the returned function is called, which
// restores the descriptor and returns the bytes written to it meanwhile.
// The redirection is process-wide: a test using it must not run in
// parallel with tests that print, and the testing package's own output
// for the test is written to stdout, so capture fd 1 only around code
// that does not call t.Log or fail.
func Start(tb testing.TB, fd int) (stop func() []byte) {
	tb.Helper()
	f, err := os.CreateTemp(tb.TempDir(), "fd")
	if err != nil {
		tb.Fatal(err)
	}
	saved, err := unix.Dup(fd)
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), fd); err != nil {
		unix.Close(saved)
		tb.Fatal(err)
	}
	done := false
	restore := func() {
		if !done {
			done = true
			unix.Dup2(saved, fd)
			unix.Close(saved)
		}
	}
	tb.Cleanup(restore) // a test that fails mid-capture still gets its descriptor back
	return func() []byte {
		restore()
		defer f.Close()
		out, err := os.ReadFile(f.Name())
		if err != nil {
			tb.Fatal(err)
		}
		return out
	}
}
