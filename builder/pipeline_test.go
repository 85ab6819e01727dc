package builder_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
)

// TestPipelineSameBytes checks that the default builder, which writes data
// blocks from another goroutine, writes the same table as Options.Serial,
// byte for byte, for every format version, compression and partitioning,
// with small blocks and partitions so that many blocks are in flight and
// partitions are cut while their index entries wait for handles.
func TestPipelineSameBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := builder.Options{
			BlockSize:          rapid.IntRange(16, 2048).Draw(t, "blockSize"),
			Compression:        rapid.SampledFrom([]format.Compression{format.NoCompression, format.SnappyCompression, format.ZstdCompression, format.MinLZCompression}).Draw(t, "compression"),
			FormatVersion:      rapid.SampledFrom([]uint32{0, format.Version1, format.Version2, format.Version3, format.Version4}).Draw(t, "version"),
			PartitionThreshold: rapid.SampledFrom([]int{0, -1, 1, 4 << 10}).Draw(t, "partThreshold"),
			PartitionSize:      rapid.IntRange(64, 4096).Draw(t, "partSize"),
		}
		if opts.FormatVersion == format.Version2 {
			opts.HashIndex = true
		}
		n := rapid.IntRange(0, 3000).Draw(t, "entries")
		valueLen := rapid.IntRange(0, 300).Draw(t, "valueLen")
		seed := rapid.Uint64().Draw(t, "seed")
		build := func(serial bool) []byte {
			o := opts
			o.Serial = serial
			var buf bytes.Buffer
			b := builder.New(&buf, &o)
			x := seed
			for i := range n {
				x = x*6364136223846793005 + 1442695040888963407
				key := fmt.Appendf(nil, "k%08d-%x", i*3, x>>(x%64))
				value := bytes.Repeat([]byte{byte(x >> 56), byte(i)}, valueLen/2)
				if err := b.Add(key, value); err != nil {
					t.Fatalf("Add %d: %v", i, err)
				}
				if i%97 == 0 && b.EstimatedSize() <= 0 {
					t.Fatalf("EstimatedSize %d after %d entries", b.EstimatedSize(), i+1)
				}
			}
			if err := b.Finish(); err != nil {
				t.Fatalf("Finish: %v", err)
			}
			if est := b.EstimatedSize(); est != int64(buf.Len()) {
				t.Fatalf("EstimatedSize %d after Finish, table of %d bytes", est, buf.Len())
			}
			return buf.Bytes()
		}
		serial, piped := build(true), build(false)
		if !bytes.Equal(serial, piped) {
			t.Fatalf("pipelined table (%d bytes) differs from the serial one (%d bytes)", len(piped), len(serial))
		}
		if got, _ := readBack(t, piped); len(got) != n {
			t.Fatalf("read back %d entries, built %d", len(got), n)
		}
	})
}

// TestPipelineLeavesNoGoroutine checks that builders dropped halfway,
// without Finish or Abort, leave no goroutine behind, and that Abort
// returns with none running.
func TestPipelineLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	value := bytes.Repeat([]byte("v"), 500)
	for i := range 20 {
		b := builder.New(discard{}, &builder.Options{BlockSize: 256})
		for j := range 2000 {
			if err := b.Add(fmt.Appendf(nil, "key%06d", j), value); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 0 {
			if err := b.Abort(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The workers exit once they have written what was queued; give
	// them a moment to be scheduled.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestPipelineEstimatedSize checks that EstimatedSize stays close to a
// serial build's while blocks are in flight, from the first block on:
// bulk cuts tables by it, and a pipeline that counted the blocks it holds
// uncompressed until one was written made 32 KiB tables of compressible
// entries come out at 10 KiB.
func TestPipelineEstimatedSize(t *testing.T) {
	for _, c := range []format.Compression{format.SnappyCompression, format.ZstdCompression, format.MinLZCompression} {
		t.Run(c.String(), func(t *testing.T) {
			serial := builder.New(discard{}, &builder.Options{Compression: c, Serial: true})
			piped := builder.New(discard{}, &builder.Options{Compression: c})
			value := bytes.Repeat([]byte("compressible value "), 10)
			for i := range 5000 {
				key := fmt.Appendf(nil, "key%08d", i)
				for _, b := range []*builder.Builder{serial, piped} {
					if err := b.Add(key, value); err != nil {
						t.Fatal(err)
					}
				}
				s, p := serial.EstimatedSize(), piped.EstimatedSize()
				if p > s+s/4+4096 || p < s-s/4-4096 {
					t.Fatalf("after %d entries: EstimatedSize %d, serial build's %d", i+1, p, s)
				}
			}
		})
	}
}
