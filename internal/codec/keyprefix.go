package codec

import "encoding/binary"

// KeyPrefix returns key's first 8 bytes as a big-endian number, padded
// with zeros: it keeps the keys' order (a <= b by bytes.Compare gives
// KeyPrefix(a) <= KeyPrefix(b)), so two keys whose prefixes differ
// compare as their prefixes do, in one integer comparison, and only
// equal prefixes need the keys compared.
func KeyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}
