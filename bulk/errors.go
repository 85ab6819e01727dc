package bulk

import (
	"errors"
	"fmt"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/internal/errmsg"
)

// wrap returns err, from the builder, the reader or the file system, as a
// bulk error: "bulk: " + context + ": " + its message without its own
// package prefix (internal/errmsg).
func wrap(context string, err error) error {
	return errmsg.Wrap("bulk: ", context, err)
}

// ErrAborted is returned by Add and Finish after Abort.
var ErrAborted = errors.New("bulk: writer aborted")

// ErrFinished is returned by Add and Finish once Finish has been called,
// whether it succeeded or failed, or once a spill in Add has failed; after
// Abort they return ErrAborted instead. (builder.ErrClosed is the
// builder's error for any call after its Finish or Abort.)
var ErrFinished = errors.New("bulk: writer already finished")

// DuplicateKeyError reports a key added more than once. It matches
// builder.ErrDuplicateKey and builder.ErrKeyOrder under errors.Is.
type DuplicateKeyError struct {
	Key []byte // the repeated key
	Dir string // the output directory of the Writer that met it ("": not known)
}

// Error returns "bulk: ", the directory and ": " when Dir is set,
// "duplicate key " and the key, quoted by QuoteKey: "bulk: out: duplicate
// key \"k\"".
func (e *DuplicateKeyError) Error() string {
	if e.Dir != "" {
		return "bulk: " + e.Dir + ": duplicate key " + QuoteKey(e.Key)
	}
	return "bulk: duplicate key " + QuoteKey(e.Key)
}

// Unwrap returns builder.ErrDuplicateKey.
func (e *DuplicateKeyError) Unwrap() error { return builder.ErrDuplicateKey }

// QuoteKey renders a key for messages: Go-quoted, cut after 100 bytes with
// the full length noted.
func QuoteKey(k []byte) string {
	const max = 100
	if len(k) > max {
		return fmt.Sprintf("%q... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%q", k)
}
