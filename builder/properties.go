package builder

import (
	"errors"
	"fmt"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// Properties returns the table's properties as far as written so far; after
// a successful Finish they are those stored in the table.
func (b *Builder) Properties() format.Properties { return b.props }

// EntryCount returns the number of entries added so far.
func (b *Builder) EntryCount() uint64 { return b.props.NumEntries }

// SetUserProperty records a user property, stored in the table's
// properties block (tag 21, covered by its checksum) and read back in
// format.Properties.User. It may be called any number of times before
// Finish; a name set again takes the last value. value is copied.
//
// Limits: a name is 1 to format.MaxUserPropertyNameLen (255) bytes, a
// value at most format.MaxUserPropertyValueLen (64 KiB); a table holds at
// most format.MaxUserProperties (1000) properties and
// format.MaxUserPropertiesSize (512 KiB) of them encoded (each takes its
// name and value lengths plus about 2 to 4 bytes). A call breaking a limit
// returns an error and changes nothing; after Finish or Abort it returns
// ErrClosed.
func (b *Builder) SetUserProperty(name string, value []byte) error {
	if b.done {
		return ErrClosed
	}
	switch {
	case len(name) == 0:
		return errors.New("sstable: builder: user property with an empty name")
	case len(name) > format.MaxUserPropertyNameLen:
		return fmt.Errorf("sstable: builder: user property name of %d bytes exceeds %d", len(name), format.MaxUserPropertyNameLen)
	case len(value) > format.MaxUserPropertyValueLen:
		return fmt.Errorf("sstable: builder: user property %q: value of %d bytes exceeds %d", name, len(value), format.MaxUserPropertyValueLen)
	}
	size := b.userSize + codec.UserPropertiesSize(name, len(value))
	old, replace := b.props.User[name]
	if replace {
		size -= codec.UserPropertiesSize(name, len(old))
	} else if len(b.props.User) >= format.MaxUserProperties {
		return fmt.Errorf("sstable: builder: user property %q: a table holds at most %d", name, format.MaxUserProperties)
	}
	if size > format.MaxUserPropertiesSize {
		return fmt.Errorf("sstable: builder: user property %q: user properties would take %d bytes, more than %d", name, size, format.MaxUserPropertiesSize)
	}
	if b.props.User == nil {
		b.props.User = make(map[string][]byte)
	}
	b.props.User[name] = append([]byte{}, value...)
	b.userSize = size
	return nil
}
