package lsmtable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/format"
)

// TestIndexSearchSuccessor checks Search against a whole-key binary search
// on indexes whose last separator is LevelDB's short successor of the
// last key ("l" after keys "k..."), in both orders, with plain and
// internal keys, and that the fences still discriminate: the prefix is
// taken from the other separators, so that a search of such a table is
// no binary search of whole keys. Targets lie on, between and past the
// separators, without the prefix, and at the successor.
func TestIndexSearchSuccessor(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		for _, plain := range []bool{false, true} {
			var users [][]byte
			for i := range 300 {
				users = append(users, fmt.Appendf(nil, "k%015d", 1_000_000+10*i))
			}
			succ := []byte("l")
			if reverse {
				// Descending keys; the successor in that order is a
				// bytewise smaller key.
				for i, j := 0, len(users)-1; i < j; i, j = i+1, j-1 {
					users[i], users[j] = users[j], users[i]
				}
				succ = []byte("j")
			}
			seps := append(users[:len(users):len(users)], succ)
			var x Index
			x.SetReverse(reverse)
			x.SetPlain(plain)
			key := func(u []byte) []byte {
				if plain {
					return bytes.Clone(u)
				}
				return AppendSeekKey(nil, u, 5)
			}
			for i, u := range seps {
				if err := x.Append(key(u), format.BlockHandle{Offset: uint64(100 * i), Length: 90}, 1<<20); err != nil {
					t.Fatal(err)
				}
			}
			x.Finish()
			if x.skip < 9 {
				t.Fatalf("reverse %v plain %v: prefix of %d bytes, want the 9 the keys share", reverse, plain, x.skip)
			}
			targets := [][]byte{{}, []byte("k"), []byte("k0"), []byte("k1"), []byte("kz"), []byte("l"), []byte("l\x00"), []byte("m"), []byte("j"), []byte("j\xff"), []byte("a")}
			for _, u := range users {
				targets = append(targets, u, append(bytes.Clone(u), 0), u[:len(u)-1])
				v := bytes.Clone(u)
				v[len(v)-1]++
				targets = append(targets, v)
			}
			for _, u := range targets {
				tk := key(u)
				want := 0
				for want < x.Len() && x.Compare(x.Key(want), tk) < 0 {
					want++
				}
				if got := x.Search(tk); got != want {
					t.Fatalf("reverse %v plain %v: Search(%q) = %d, want %d", reverse, plain, u, got, want)
				}
			}
		}
	}
}
