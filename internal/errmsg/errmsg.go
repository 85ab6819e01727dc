// Package errmsg keeps the module's error messages to one package prefix.
//
// Every error a package of the module returns names that package once, at
// the front: "sstable: " (the builder and reader packages; the builder
// often "sstable: builder: "), "bulk: ", "cache: ". A layer that passes on another
// package's error with context of its own puts its own prefix in front and
// drops the inner one, so that no message reads "bulk: sstable: ..." or
// "sst: build: bulk: ...". The cause stays for errors.Is and errors.As.
package errmsg

import "strings"

// prefixes are the module's package prefixes, the longer of two that
// share a start first.
var prefixes = []string{"sstable: builder: ", "sstable: ", "bulk: ", "cache: "}

// Trim returns msg without its package prefix: at the start, or after a
// leading file name, as in "FILE: sstable: corrupt ..." from reader.Open.
// A message without one is returned as it is.
func Trim(msg string) string {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			return rest
		}
	}
	for _, p := range prefixes {
		if i := strings.Index(msg, ": "+p); i >= 0 {
			return msg[:i+2] + msg[i+2+len(p):]
		}
	}
	return msg
}

// Wrap returns err with the message prefix + context + ": " + err's
// message trimmed of its package prefix (prefix + the trimmed message,
// for an empty context, or for a trimmed message that begins with
// context + ": " already, as a builder's "sstable: PATH: ..." does when
// context is PATH). Unwrap returns err.
func Wrap(prefix, context string, err error) error {
	msg := Trim(err.Error())
	if context != "" && !strings.HasPrefix(msg, context+": ") {
		msg = context + ": " + msg
	}
	return &wrapped{msg: prefix + msg, err: err}
}

type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
