package spanfrag

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

type span struct{ start, end, value []byte }

// TestCutModel checks Cut against a brute force: at every key the spans
// could tell apart (each bound, and a key just above it), the fragment
// covering it lists the values of the spans covering it, in the order
// given, and no fragment covers a key no span does. Keys are drawn from
// the edges: the empty key, 0x00 and 0xff bytes, 8 bytes and more.
func TestCutModel(t *testing.T) {
	keys := [][]byte{{}, {0}, {0, 0}, {1}, []byte("a"), []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefgi"), {0xff}, {0xff, 0xff}}
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(rt, "n")
		var spans []span
		for i := range n {
			s := keys[rapid.IntRange(0, len(keys)-1).Draw(rt, "start")]
			e := keys[rapid.IntRange(0, len(keys)-1).Draw(rt, "end")]
			spans = append(spans, span{s, e, []byte(fmt.Sprint(i))})
		}
		frags := Cut(spans, func(s *span) ([]byte, []byte) { return s.start, s.end },
			func(dst [][]byte, s *span) [][]byte { return append(dst, s.value) })
		for i, f := range frags {
			if bytes.Compare(f.Start, f.End) >= 0 || i > 0 && bytes.Compare(frags[i-1].End, f.Start) > 0 {
				rt.Fatalf("fragment %d [%q, %q) empty, or overlapping or below the previous one", i, f.Start, f.End)
			}
		}
		var probes [][]byte
		for _, k := range keys {
			probes = append(probes, k, append(bytes.Clone(k), 0))
		}
		for _, k := range probes {
			var want [][]byte
			for _, s := range spans {
				if bytes.Compare(s.start, k) <= 0 && bytes.Compare(k, s.end) < 0 {
					want = append(want, s.value)
				}
			}
			var got [][]byte
			for _, f := range frags {
				if bytes.Compare(f.Start, k) <= 0 && bytes.Compare(k, f.End) < 0 {
					if got != nil {
						rt.Fatalf("key %q in two fragments", k)
					}
					got = f.Values
					if got == nil {
						got = [][]byte{}
					}
				}
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) && !(len(got) == 0 && len(want) == 0) {
				rt.Fatalf("key %q: fragment values %q, spans covering it %q", k, got, want)
			}
		}
		for i, s := range spans {
			if string(s.value) != fmt.Sprint(i) {
				rt.Fatalf("Cut reordered its input: span %d holds value %q", i, s.value)
			}
		}
	})
}
