package bulk

import "github.com/sstkit/sstable/internal/errmsg"

// wrap returns err, from the builder, the reader or the file system, as a
// bulk error: "bulk: " + context + ": " + its message without its own
// package prefix (internal/errmsg).
func wrap(context string, err error) error {
	return errmsg.Wrap("bulk: ", context, err)
}
