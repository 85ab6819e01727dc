//go:build !race

package merge_test

import (
	"fmt"
	"testing"

	"github.com/sstkit/sstable/merge"
)

// TestAllocs checks that, once warm, Next, Prev, SeekGE, SeekLT,
// SeekPrefixGE and Get misses of a stack of eight levels with range
// deletions allocate nothing.
func TestAllocs(t *testing.T) {
	dir := t.TempDir()
	var levels []merge.Level
	for l := range 8 {
		var keys []string
		for i := l; i < 4000; i += 3 {
			keys = append(keys, fmt.Sprintf("key%05d", i))
		}
		levels = append(levels, merge.Tables(table(t, dir, keys[:len(keys)/2], fmt.Sprintf("key%05d", 100*l), fmt.Sprintf("key%05d", 100*l+20)), table(t, dir, keys[len(keys)/2:])))
	}
	it := merge.NewIterator(levels, nil)
	defer it.Close()
	seek := make([][]byte, 64)
	for i := range seek {
		seek[i] = fmt.Appendf(nil, "key%05d", i*61%4000)
	}
	// Warm: reach every table.
	for ok := it.First(); ok; ok = it.Next() {
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	i := 0
	absent := []byte("key99999")
	for name, f := range map[string]func(){
		"Next": func() {
			if !it.Next() {
				it.First()
			}
		},
		"Prev": func() {
			if !it.Prev() {
				it.Last()
			}
		},
		"SeekGE": func() { it.SeekGE(seek[i%len(seek)]); i++ },
		"SeekLT": func() { it.SeekLT(seek[i%len(seek)]); i++ },
		"SeekPrefixGE": func() {
			k := seek[i%len(seek)]
			it.SeekPrefixGE(k[:7], k)
			i++
		},
		"Get miss": func() { merge.Get(levels, absent, nil) },
	} {
		it.First()
		if n := testing.AllocsPerRun(500, f); n != 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", name, n)
		}
	}
}
