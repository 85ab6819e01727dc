package reader_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestHeldFilterInBudget: a memory-mapped version 4 reader's copy of its
// table's whole filter is charged to its cache (Stats.Held, inside Size)
// from the first Get to Close; a cache that cannot hold it leaves the
// reader probing the mapped filter, with the same answers.
func TestHeldFilterInBudget(t *testing.T) {
	if !mmapSupported {
		t.Skip("no memory mapping here")
	}
	var es []entry
	for i := range 50000 {
		es = append(es, entry{fmt.Sprintf("key%09d", 2*i), "v"})
	}
	for _, parted := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%v", parted), func(t *testing.T) {
			opts := &builder.Options{}
			if parted {
				opts.PartitionThreshold = 1
			}
			data, props := build(t, es, opts)
			if props.Partitioned != parted {
				t.Fatalf("Partitioned = %v", props.Partitioned)
			}
			path := filepath.Join(t.TempDir(), "t.sst")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, capacity := range []int64{8 << 20, 0} {
				ropts := cacheOpts(t, capacity)
				c := ropts.Cache
				r, err := reader.Open(path, ropts)
				if err != nil {
					t.Fatal(err)
				}
				if held := c.Stats().Held; held != 0 {
					t.Fatalf("capacity %d: Held %d before the first Get, want 0", capacity, held)
				}
				if _, err := r.Get([]byte(es[7].Key)); err != nil {
					t.Fatal(err)
				}
				st := c.Stats()
				// 10 bits per key: about 1.25 bytes per key, in 64-byte lines.
				lo, hi := int64(len(es))*10/8, int64(len(es))*10/8+2*64+1
				if capacity == 0 {
					lo, hi = 0, 0
				}
				if st.Held < lo || st.Held > hi || st.Size < st.Held {
					t.Fatalf("capacity %d: after a Get, Held %d (want %d to %d), Size %d", capacity, st.Held, lo, hi, st.Size)
				}
				ruledOut := 0
				for i := range 2000 {
					k := fmt.Sprintf("key%09d", 2*i+1)
					if !r.MayContain([]byte(k)) {
						ruledOut++
					}
					if _, err := r.Get([]byte(k)); err != reader.ErrNotFound {
						t.Fatalf("Get(%q): %v, want ErrNotFound", k, err)
					}
					if v, err := r.Get([]byte(es[i].Key)); err != nil || string(v) != "v" {
						t.Fatalf("Get(%q) = %q, %v", es[i].Key, v, err)
					}
				}
				if ruledOut < 1900 {
					t.Errorf("capacity %d: the filter ruled out %d of 2000 absent keys", capacity, ruledOut)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if held := c.Stats().Held; held != 0 {
					t.Errorf("capacity %d: Held %d after Close, want 0", capacity, held)
				}
			}
		})
	}
}
