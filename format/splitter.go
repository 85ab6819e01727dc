package format

import (
	"fmt"
	"strconv"
	"strings"
)

// Splitter divides a key into a prefix and a suffix, as Pebble's
// Comparer.Split does: in a table of versioned keys (user key + version),
// the prefix is the user key. A table built with a Splitter has its filter
// (and hash index, if any) built over prefixes, each distinct prefix once,
// so that a reader can rule a whole prefix out (Reader.MayContainPrefix,
// Iterator.SeekPrefixGE); the table records Name in its properties.
//
// Split must be consistent with the key order: for keys a and b whose
// prefixes differ, bytes.Compare(a, b) must equal
// bytes.Compare(a[:Split(a)], b[:Split(b)]). Then the keys sharing a
// prefix are contiguous in a table, and a seek within a prefix never
// needs to look past it. Builders check this on consecutive keys
// (builder.ErrPrefixOrder); readers rely on it for every key.
type Splitter interface {
	// Name identifies the splitter in table files (properties tag 20). A
	// splitter must never change the prefixes of keys in tables already
	// written under its name. At most MaxSplitterNameLen bytes.
	Name() string
	// Split returns the length of key's prefix, in bytes: a value in
	// [0, len(key)]. It must not modify or retain key.
	Split(key []byte) int
}

// MaxSplitterNameLen bounds a splitter's name, in bytes.
const MaxSplitterNameLen = 255

// Suffix returns the built-in Splitter that splits off a fixed-length
// suffix of n bytes: the prefix of key is key[:len(key)-n], and a key
// shorter than n bytes is its own prefix. Its name is "sstkit.Suffix(N)"
// with N in decimal, and readers recognise it without being told.
//
// Suffix(n) meets the Splitter contract when no prefix in use is a proper
// prefix of another: fixed-length user keys, or user keys in a
// self-delimiting encoding (for example, 0x00 escaped as 0x00 0xff and a
// 0x00 0x01 terminator). n must be at least 0: a builder given Suffix of
// a negative n fails with an error (see CheckSplitter).
func Suffix(n int) Splitter {
	return suffixSplitter{n: n, name: suffixPrefix + strconv.Itoa(n) + ")"}
}

const suffixPrefix = "sstkit.Suffix("

type suffixSplitter struct {
	n    int
	name string
}

func (s suffixSplitter) Name() string { return s.name }

func (s suffixSplitter) Split(key []byte) int {
	if len(key) < s.n || s.n < 0 {
		return len(key)
	}
	return len(key) - s.n
}

// BuiltinSplitter returns the built-in splitter called name
// ("sstkit.Suffix(N)" for a decimal N without leading zeros), or nil.
func BuiltinSplitter(name string) Splitter {
	if len(name) <= len(suffixPrefix)+1 || name[:len(suffixPrefix)] != suffixPrefix || name[len(name)-1] != ')' {
		return nil
	}
	digits := name[len(suffixPrefix) : len(name)-1]
	if len(digits) > 1 && digits[0] == '0' {
		return nil
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || n > 1<<20 || strconv.Itoa(n) != digits {
		return nil
	}
	return Suffix(n)
}

// CheckSplitter returns an error if s cannot be recorded in a table: its
// name is empty or longer than MaxSplitterNameLen bytes, or it claims the
// built-in "sstkit.Suffix(" name space without being a valid Suffix (as
// Suffix of a negative n does).
func CheckSplitter(s Splitter) error {
	name := s.Name()
	switch {
	case name == "":
		return fmt.Errorf("sstable: splitter has an empty name")
	case len(name) > MaxSplitterNameLen:
		return fmt.Errorf("sstable: splitter name of %d bytes exceeds %d", len(name), MaxSplitterNameLen)
	case strings.HasPrefix(name, suffixPrefix) && BuiltinSplitter(name) == nil:
		return fmt.Errorf("sstable: splitter %q: not a valid built-in suffix length", name)
	}
	return nil
}
