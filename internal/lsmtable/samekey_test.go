package lsmtable

import (
	"bytes"
	"testing"
)

// TestSameUserKey checks skipVersions' comparison against bytes.Equal:
// keys shorter and longer than its 8-byte word, differing in it and only
// before it, of 0x00 and 0xff bytes, and the empty key.
func TestSameUserKey(t *testing.T) {
	var keys [][]byte
	for _, n := range []int{0, 1, 7, 8, 9, 16, 17} {
		for _, fill := range []byte{0x00, 'k', 0xff} {
			k := bytes.Repeat([]byte{fill}, n)
			keys = append(keys, k)
			for at := 0; at < n; at += 3 {
				v := bytes.Clone(k)
				v[at] ^= 0x01
				keys = append(keys, v)
			}
			if n > 0 {
				v := bytes.Clone(k)
				v[n-1] ^= 0x80
				keys = append(keys, v)
			}
		}
	}
	for _, x := range keys {
		for _, y := range keys {
			if got, want := sameUserKey(x, y), bytes.Equal(x, y); got != want {
				t.Fatalf("sameUserKey(%x, %x) = %v, want %v", x, y, got, want)
			}
		}
	}
}
