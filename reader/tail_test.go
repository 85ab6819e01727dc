package reader_test

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// tailLayouts are the table layouts the tail tests build: version 1,
// version 2 with a hash index, version 3 (partitioned) with and without
// one, and version 4 (the default), one-level and partitioned.
var tailLayouts = []struct {
	name string
	opts builder.Options
}{
	{"v1", builder.Options{FormatVersion: format.Version1}},
	{"v1-raw", builder.Options{Compression: format.NoCompression, FormatVersion: format.Version1}},
	{"v2", builder.Options{HashIndex: true}},
	{"v3", builder.Options{PartitionThreshold: 1, PartitionSize: 2 << 10, FormatVersion: format.Version1}},
	{"v3-hash", builder.Options{PartitionThreshold: 1, PartitionSize: 2 << 10, HashIndex: true}},
	{"v4", builder.Options{}},
	{"v4-raw", builder.Options{Compression: format.NoCompression}},
	{"v4 partitioned", builder.Options{PartitionThreshold: 1, PartitionSize: 2 << 10}},
}

// tailTable builds a table of about 800 KB, snappy-compressed or not, with the layout's options:
// larger than the default tail, whose data blocks then start before it.
func tailTable(t *testing.T, opts builder.Options) ([]byte, []entry) {
	t.Helper()
	es := numbered(10000, func(i int) string {
		x := uint64(i + 1)
		return fmt.Sprintf("%016x%016x%016x%016x", x*0x9e3779b97f4a7c15, x*0xbf58476d1ce4e5b9, x*0x94d049bb133111eb, x*0xd6e8feb86659fd93)
	})
	o := opts
	data, _ := build(t, es, &o)
	if len(data) < 2*reader.DefaultTailSize {
		t.Fatalf("a %d-byte table: too small for the test", len(data))
	}
	return data, es
}

// TestTailKeepsBlocks checks that a reader over a ReaderAt takes the data
// blocks (and partitions) that lie whole in the tail New read from that
// tail, with no read, and reads the others; with a cache that cannot keep
// the tail, every block is read. Every value is right either way.
func TestTailKeepsBlocks(t *testing.T) {
	for _, l := range tailLayouts {
		data, es := tailTable(t, l.opts)
		values := make(map[string]string, len(es))
		for _, e := range es {
			values[e.Key] = e.Value
		}
		tailStart := uint64(len(data) - reader.DefaultTailSize)
		blocks := dataBlocks(t, data)
		for _, capacity := range []int64{64 << 20, 0} {
			t.Run(fmt.Sprintf("%s/cache%d", l.name, capacity), func(t *testing.T) {
				src := &recorder{data: data}
				r, err := reader.New(src, int64(len(data)), cacheOpts(t, capacity))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				src.take()
				inTail := 0
				for _, b := range blocks {
					kept := capacity != 0 && b.Handle.Offset >= tailStart
					for j, k := range []string{b.Keys[0], b.Keys[len(b.Keys)-1]} {
						v, err := r.Get([]byte(k))
						if err != nil || string(v) != values[k] {
							t.Fatalf("Get(%q) = %.20q, %v; want %.20q", k, v, err, values[k])
						}
						reads := src.take()
						if kept && len(reads) != 0 {
							t.Fatalf("Get(%q) of block at %d, in the tail (from %d): reads %v, want none", k, b.Handle.Offset, tailStart, reads)
						}
						// The block's first Get reads it; with no cache,
						// every Get does.
						if !kept && (j == 0 || capacity == 0) && len(reads) == 0 {
							t.Fatalf("Get(%q) of block at %d, before the tail (from %d), cache %d bytes: no read", k, b.Handle.Offset, tailStart, capacity)
						}
					}
					if kept {
						inTail++
					}
				}
				if capacity != 0 && inTail < len(blocks)/10 {
					t.Fatalf("%d of %d blocks in the tail: too few for the test", inTail, len(blocks))
				}
			})
		}
	}
}

// flipOnce is an io.ReaderAt over data that flips the byte at offset at
// in its first read only, as a transfer might.
type flipOnce struct {
	data  []byte
	at    int64
	done  atomic.Bool
	calls atomic.Int64
}

func (f *flipOnce) ReadAt(p []byte, off int64) (int, error) {
	f.calls.Add(1)
	n, err := bytes.NewReader(f.data).ReadAt(p, off)
	if !f.done.Swap(true) && f.at >= off && f.at < off+int64(n) {
		p[f.at-off] ^= 0x10
	}
	return n, err
}

// TestTailDamagedInTransit checks that bytes of the tail damaged on their
// way to New are not taken for damage to the file: the data block (or
// partition) holding them is read again, and the lookup succeeds.
func TestTailDamagedInTransit(t *testing.T) {
	for _, l := range tailLayouts {
		data, es := tailTable(t, l.opts)
		f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		blocks := dataBlocks(t, data)
		last := blocks[len(blocks)-1]
		targets := map[string]int64{"data block": int64(last.Handle.Offset + last.Handle.Length/2)}
		if isPartitioned(t, data, f.Version) {
			targets["partition"] = int64(f.Index.Offset) - 8 // the last index partition
		}
		for what, at := range targets {
			t.Run(l.name+"/"+what, func(t *testing.T) {
				src := &flipOnce{data: data, at: at}
				r, err := reader.New(src, int64(len(data)), cacheOpts(t, 64<<20))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				e := es[len(es)-1]
				v, err := r.Get([]byte(e.Key))
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) = %.20q, %v; want %.20q", e.Key, v, err, e.Value)
				}
				if n := src.calls.Load(); n != 2 {
					t.Errorf("%d reads counting New's, want 2: the damaged %s read again", n, what)
				}
				if err := r.Verify(); err != nil {
					t.Errorf("Verify: %v", err)
				}
			})
		}
	}
}
