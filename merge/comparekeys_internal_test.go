package merge

import (
	"bytes"
	"testing"
)

// TestCompareKeys checks the heap's comparison, which orders by the two
// 8-byte words cached by setKey before it compares the keys, against
// bytes.Compare: keys around 8 and 16 bytes long, of 0x00
// and 0xff bytes, sharing their first 8 or 16 bytes, and the empty key.
func TestCompareKeys(t *testing.T) {
	var keys [][]byte
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24} {
		for _, fill := range []byte{0x00, 'k', 0xff} {
			k := bytes.Repeat([]byte{fill}, n)
			keys = append(keys, k)
			for _, at := range []int{0, 7, 8, 12, 15, 16, 20} {
				if at < n {
					for _, b := range []byte{0x00, 0x01, 'k' + 1, 0xfe, 0xff} {
						v := bytes.Clone(k)
						v[at] = b
						keys = append(keys, v)
					}
				}
			}
		}
	}
	keys = append(keys, []byte("k000000000000001"), []byte("k000000000000002"), []byte("k0000000000000010"), []byte("k00000000000001"))
	var a, b child
	for _, x := range keys {
		for _, y := range keys {
			a.setKey(x)
			b.setKey(y)
			if got, want := compareKeys(&a, &b), bytes.Compare(x, y); got != want {
				t.Fatalf("compareKeys(%x, %x) = %d, want %d", x, y, got, want)
			}
		}
	}
}
