package reader_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/reader"
)

// churn evicts what the cache of opts holds, by looking up keys in n
// readers of data opened with it, each of whose blocks are its own, open
// together (a reader's Close drops its blocks; and a scan would not do:
// scans leave the cache's blocks in place). It reports the evictions.
func churn(t *testing.T, data []byte, keys []string, opts *reader.Options, n int) {
	t.Helper()
	before := opts.Cache.Stats().Evictions
	for range n {
		r, err := reader.New(bytes.NewReader(data), int64(len(data)), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for range 2 { // twice: blocks used again stay, and push out the others
			for _, k := range keys {
				if _, err := r.Get([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if opts.Cache.Stats().Evictions == before {
		t.Fatalf("%d readers of a %d-byte table evicted nothing", n, len(data))
	}
}

// TestNewChecksTailOnFirstUse checks that New copies the sections the
// tail holds (filter, index block or top-level index, hash index) into
// the cache as read, and checks them on first use: the first Get reads
// no section, and every value is right, also when the copies were
// evicted before the first use, which then reads the sections again.
func TestNewChecksTailOnFirstUse(t *testing.T) {
	for _, l := range tailLayouts {
		data, es := tailTable(t, l.opts)
		f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(es)/8)
		for i := 0; i < len(es); i += 8 {
			keys = append(keys, es[i].Key)
		}
		for _, evict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/evict=%v", l.name, evict), func(t *testing.T) {
				opts := cacheOpts(t, 4<<20)
				src := &recorder{data: data}
				r, err := reader.New(src, int64(len(data)), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				src.take()
				if evict {
					churn(t, data, keys, opts, 12) // 12 tables' blocks, 9 MB, through a 4 MiB cache
					src.take()
				}
				e := es[len(es)-1] // in the tail's last data block
				v, err := r.Get([]byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %.20q, %v; want %.20q", e.Key, v, err, e.Value)
				}
				readSections := false
				for _, rd := range src.take() {
					if uint64(rd[0]) <= f.Index.Offset && uint64(rd[0]+rd[1]) >= f.Index.End() {
						readSections = true
					}
				}
				if readSections != evict {
					t.Errorf("first Get read the index section: %v; want %v (copies evicted: %v)", readSections, evict, evict)
				}
				for _, e := range es[:50] {
					if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
						t.Fatalf("Get(%q) = %.20q, %v; want %.20q", e.Key, v, err, e.Value)
					}
				}
				if err := r.Verify(); err != nil {
					t.Fatalf("Verify: %v", err)
				}
			})
		}
	}
}

// TestNewDefersTopIndex checks that New leaves a partitioned table's
// top-level index, which its tail holds, to the first lookup: the check
// that records every partition's handle and key, which the reader keeps
// charged to the cache, is not made by New (Held 0) but by the first Get
// (Held > 0), and Close gives the charge back.
func TestNewDefersTopIndex(t *testing.T) {
	es := numbered(50000, func(i int) string { return fmt.Sprintf("v%d", i) })
	data, p := build(t, es, &builder.Options{BlockSize: 256, PartitionThreshold: 1, PartitionSize: 512})
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Partitioned || f.Index.Offset < uint64(len(data)-reader.DefaultTailSize) {
		t.Fatalf("partitioned %v, top-level index at %d of %d bytes: want partitioned, and the index in the tail", p.Partitioned, f.Index.Offset, len(data))
	}
	opts := cacheOpts(t, 64<<20)
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if held := opts.Cache.Stats().Held; held != 0 {
		t.Fatalf("Held %d after New, want 0: New checked the top-level index", held)
	}
	e := es[len(es)/2]
	if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
		t.Fatalf("Get(%q) = %q, %v; want %q", e.Key, v, err, e.Value)
	}
	if held := opts.Cache.Stats().Held; held < 4<<10 {
		t.Errorf("Held %d after the first Get; want the partitions' handles and keys charged, at least 4 KiB", held)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if held := opts.Cache.Stats().Held; held != 0 {
		t.Errorf("Held %d after Close", held)
	}
}

// TestSpanTailCopy checks SpanAt over an io.ReaderAt whose tail held the
// span block: New copies it into the cache, or onto the Go heap when the
// cache cannot take it, and the first SpanAt reads nothing; when the
// cache has evicted the copy, the first SpanAt reads the block, once.
// The answers are right every way, and the reader charges the cache for
// none of it before the first SpanAt.
func TestSpanTailCopy(t *testing.T) {
	var points []string
	for i := range 5000 {
		points = append(points, fmt.Sprintf("p%06d", i))
	}
	var spans []testSpan
	for i := range 100 {
		spans = append(spans, testSpan{fmt.Sprintf("p%06d", 40*i), fmt.Sprintf("p%06d", 40*i+25), "del"})
	}
	table := buildSpanTable(t, nil, points, spans)
	p := tableProps(t, table)
	for _, tc := range []struct {
		name     string
		capacity int64
		evict    bool
	}{
		{"cached", 4 << 20, false},
		{"evicted", 256 << 10, true},
		{"no cache", cache.MinCapacity, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := cacheOpts(t, tc.capacity)
			src := &recorder{data: table}
			r, err := reader.New(src, int64(len(table)), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			src.take()
			if held := opts.Cache.Stats().Held; held != 0 {
				t.Fatalf("Held %d after New, want 0", held)
			}
			if tc.evict {
				churn(t, table, points, opts, 8) // each keeps its tail, the whole table
				src.take()
			}
			for i, k := range []string{"p000010", "p003970", "p000030"} {
				s, err := r.SpanAt([]byte(k))
				if want := i != 2; (err == nil) != want {
					t.Fatalf("SpanAt(%q): %v", k, err)
				}
				if i == 1 && (string(s.Start) != "p003960" || string(s.End) != "p003985" || len(s.Values) != 1 || string(s.Values[0]) != "del") {
					t.Fatalf("SpanAt(%q) = [%q, %q) %q", k, s.Start, s.End, s.Values)
				}
				reads := src.take()
				wantReads := 0
				if tc.evict && i == 0 {
					wantReads = 1
				}
				if len(reads) != wantReads || wantReads == 1 && reads[0][1] != int64(p.SpanBlockSize) {
					t.Fatalf("SpanAt(%q) read %v; want %d read of the %d-byte span block", k, reads, wantReads, p.SpanBlockSize)
				}
			}
		})
	}
}
