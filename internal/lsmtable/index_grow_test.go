package lsmtable

import (
	"fmt"
	"testing"

	"github.com/sstkit/sstable/format"
)

// TestIndexGrow checks that an index grown for its blocks and separator
// bytes takes them without allocating, and reads as one built without
// the hint; a hint too small still takes every block.
func TestIndexGrow(t *testing.T) {
	const n = 500
	seps := make([][]byte, n)
	keyBytes := 0
	for i := range seps {
		seps[i] = AppendSeekKey(nil, []byte(fmt.Sprintf("key%08d", i)), 1)
		keyBytes += len(seps[i])
	}
	build := func(x *Index) {
		for i, s := range seps {
			if err := x.Append(s, format.BlockHandle{Offset: uint64(100 * i), Length: 90}, 1<<20); err != nil {
				t.Fatal(err)
			}
		}
	}
	var plain Index
	build(&plain)
	for _, hint := range []int{n, n / 3} {
		var x Index
		x.Grow(hint, hint*len(seps[0]))
		if hint == n {
			if allocs := testing.AllocsPerRun(1, func() { x = Index{}; x.Grow(n, keyBytes); build(&x) }) - 3; allocs > 0 {
				t.Errorf("appending %d blocks to an index grown for them allocated %v times", n, allocs)
			}
		} else {
			build(&x)
		}
		if x.Len() != n {
			t.Fatalf("hint %d: %d blocks, want %d", hint, x.Len(), n)
		}
		for i := range n {
			if string(x.Key(i)) != string(plain.Key(i)) || x.Handle(i) != plain.Handle(i) {
				t.Fatalf("hint %d: block %d is %q %v, want %q %v", hint, i, x.Key(i), x.Handle(i), plain.Key(i), plain.Handle(i))
			}
		}
	}
}
