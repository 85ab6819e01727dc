package codec

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSpanSearchLinear: SearchStart and SearchStartBefore agree with a
// linear scan over blocks of up to 1,200 fragments (so that the
// sampled prefixes narrow the search), whose start keys often share their
// 8-byte prefix or are shorter than 8 bytes.
func TestSpanSearchLinear(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 1200).Draw(t, "fragments")
		set := map[string]bool{}
		for len(set) < 2*n {
			var k []byte
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0: // a shared 8-byte prefix
				k = fmt.Appendf(nil, "prefix%02d/%d", rapid.IntRange(0, 3).Draw(t, "p"), rapid.IntRange(0, 1<<20).Draw(t, "s"))
			case 1: // short keys
				k = rapid.SliceOfN(rapid.ByteRange(0, 3), 1, 7).Draw(t, "short")
			default:
				k = fmt.Appendf(nil, "%08d", rapid.IntRange(0, 1<<26).Draw(t, "k"))
			}
			set[string(k)] = true
		}
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var w SpanBlockWriter
		starts := make([][]byte, n)
		for i := range n {
			starts[i] = []byte(keys[2*i])
			w.Add(starts[i], []byte(keys[2*i+1]), [][]byte{[]byte("v")})
		}
		b, ok := w.Finish()
		if !ok {
			t.Fatal("Finish failed")
		}
		blk, err := DecodeSpanBlock(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		probes := append(slices.Clone(keys), "", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "prefix01", "prefix02/5")
		for _, p := range probes {
			key := []byte(p)
			atMost, before := -1, -1
			for i, s := range starts {
				if bytes.Compare(s, key) <= 0 {
					atMost = i
				}
				if bytes.Compare(s, key) < 0 {
					before = i
				}
			}
			if got := blk.SearchStart(key); got != atMost {
				t.Fatalf("SearchStart(%q) = %d, want %d", key, got, atMost)
			}
			if got := blk.SearchStartBefore(key); got != before {
				t.Fatalf("SearchStartBefore(%q) = %d, want %d", key, got, before)
			}
		}
	})
}
