package leveldb

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Kind says what an internal key records: a value or a deletion (LevelDB's
// ValueType, db/dbformat.h).
type Kind uint8

const (
	// KindDeletion marks a user key deleted as of its sequence number.
	KindDeletion Kind = 0
	// KindValue records a value for the user key.
	KindValue Kind = 1
)

// String returns "value" or "delete" (or "kind N" for another byte).
func (k Kind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindDeletion:
		return "delete"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// MaxSequence is the largest sequence number, 2^56-1: a sequence number
// takes the trailer's top 56 bits. Table.Get at MaxSequence finds the
// newest version.
const MaxSequence = 1<<56 - 1

// trailerLen is the length of an internal key's trailer.
const trailerLen = 8

// splitKey splits an internal key into its user key and trailer; ok is
// false when ikey is shorter than a trailer or its kind is unknown.
func splitKey(ikey []byte) (user []byte, seq uint64, kind Kind, ok bool) {
	n := len(ikey) - trailerLen
	if n < 0 {
		return nil, 0, 0, false
	}
	t := binary.LittleEndian.Uint64(ikey[n:])
	kind = Kind(t & 0xff)
	if kind > KindValue {
		return nil, 0, 0, false
	}
	return ikey[:n:n], t >> 8, kind, true
}

// compareKeys orders internal keys as LevelDB's InternalKeyComparator
// does: user key ascending, then trailer (seq<<8 | kind) descending.
// Keys shorter than a trailer sort by their bytes before any other (they
// never reach here from a checked block; separators are checked too).
func compareKeys(a, b []byte) int {
	na, nb := len(a)-trailerLen, len(b)-trailerLen
	if na < 0 || nb < 0 {
		return bytes.Compare(a, b)
	}
	if c := bytes.Compare(a[:na], b[:nb]); c != 0 {
		return c
	}
	ta, tb := binary.LittleEndian.Uint64(a[na:]), binary.LittleEndian.Uint64(b[nb:])
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

// appendSeekKey appends the internal key that sorts before every version
// of user at or below seq: user, then trailer seq<<8 | KindValue (LevelDB's
// LookupKey).
func appendSeekKey(dst, user []byte, seq uint64) []byte {
	dst = append(dst, user...)
	return binary.LittleEndian.AppendUint64(dst, seq<<8|uint64(KindValue))
}
