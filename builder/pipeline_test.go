package builder_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
)

// TestPipelinedSameTable checks that a build whose data blocks are
// compressed in batches on other goroutines writes the table a build
// compressing each block in Add writes, byte for byte, and gives the
// same EstimatedSize along the way within a block's worth, over
// compressions, block sizes, batch sizes, partitioned tables (their
// cuts depend on each index entry's moment) and format versions.
func TestPipelinedSameTable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3000).Draw(t, "entries")
		keys := make([][]byte, 0, n)
		seen := map[string]bool{}
		for len(keys) < n {
			k := binary.BigEndian.AppendUint64(nil, rapid.Uint64().Draw(t, "key"))
			k = k[:rapid.IntRange(1, 8).Draw(t, "keylen")]
			if !seen[string(k)] {
				seen[string(k)] = true
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, bytes.Compare)
		valueLen := rapid.IntRange(0, 300).Draw(t, "value length")
		opts := builder.Options{
			Compression: rapid.SampledFrom([]format.Compression{format.SnappyCompression, format.ZstdCompression, format.MinLZCompression}).Draw(t, "compression"),
			BlockSize:   rapid.SampledFrom([]int{64, 512, 4096}).Draw(t, "block size"),
		}
		switch rapid.IntRange(0, 3).Draw(t, "layout") {
		case 1: // partitioned early, small partitions
			opts.PartitionThreshold, opts.PartitionSize = 1, rapid.IntRange(64, 2048).Draw(t, "partition size")
		case 2:
			opts.HashIndex = true
			opts.PartitionThreshold, opts.PartitionSize = 1, 512
		case 3:
			opts.FormatVersion = format.Version1
		}
		batch := rapid.SampledFrom([]int{1, 100, 4096, 64 << 10}).Draw(t, "batch bytes")
		build := func(batchBytes int) ([]byte, []int64) {
			var buf bytes.Buffer
			b := builder.New(&buf, &opts)
			builder.SetBatchBytes(b, batchBytes)
			var est []int64
			value := make([]byte, valueLen)
			for i, k := range keys {
				for j := range value {
					value[j] = byte(i * (j%7 + 1))
				}
				if err := b.Add(k, value); err != nil {
					t.Fatal(err)
				}
				if i%97 == 0 {
					est = append(est, b.EstimatedSize())
				}
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			if got := b.EstimatedSize(); got != int64(buf.Len()) {
				t.Fatalf("EstimatedSize %d after Finish, table of %d bytes", got, buf.Len())
			}
			return buf.Bytes(), est
		}
		serial, estSerial := build(0)
		piped, estPiped := build(batch)
		if !bytes.Equal(serial, piped) {
			i := 0
			for i < len(serial) && i < len(piped) && serial[i] == piped[i] {
				i++
			}
			t.Fatalf("pipelined table (%d bytes) differs from the serial one (%d bytes) from byte %d", len(piped), len(serial), i)
		}
		// Blocks in batches count at the ratio seen so far, as the
		// pending one does, and uncompressed before any is written:
		// off by the decoded bytes of the batches handed over and the
		// one being filled at most (each ends with the block that took
		// it to batch bytes or past them, up to an entry more than the
		// block size).
		slack := (builder.MaxInFlight+1)*(int64(batch)+int64(opts.BlockSize)+512) + 1024
		for i := range estSerial {
			if d := estSerial[i] - estPiped[i]; d > slack || -d > slack {
				t.Fatalf("EstimatedSize after %d entries: %d pipelined, %d serial", i*97+1, estPiped[i], estSerial[i])
			}
		}
	})
}

// TestPipelinedOnlyWithCores checks which builds pipeline their
// compression: compressed, without a dictionary or SerialCompression, on
// more than one core.
func TestPipelinedOnlyWithCores(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core")
	}
	for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
		b := builder.New(&bytes.Buffer{}, &builder.Options{Compression: c})
		if got, want := builder.BatchBytes(b) > 0, c != format.NoCompression; got != want {
			t.Errorf("%v: pipelined %v, want %v", c, got, want)
		}
	}
	b := builder.New(&bytes.Buffer{}, &builder.Options{DictionarySize: 4096, Compression: format.ZstdCompression})
	if builder.BatchBytes(b) > 0 {
		t.Error("pipelined with a dictionary")
	}
	b = builder.New(&bytes.Buffer{}, &builder.Options{SerialCompression: true})
	if builder.BatchBytes(b) > 0 {
		t.Error("pipelined with SerialCompression")
	}
}

// TestAbandonedBuilderStopsCompressor checks that the compressing
// goroutine of a builder dropped without Finish or Abort ends once the
// builder is collected, and that Finish and Abort end it too.
func TestAbandonedBuilderStopsCompressor(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: no compressor")
	}
	base := runtime.NumGoroutine()
	start := func() *builder.Builder {
		b := builder.New(io.Discard, nil)
		builder.SetBatchBytes(b, 1)
		value := bytes.Repeat([]byte("v"), 100)
		for i := range 200 {
			if err := b.Add(binary.BigEndian.AppendUint32(nil, uint32(i)), value); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	settled := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d goroutines, %d before", what, runtime.NumGoroutine(), base)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
	if err := start().Finish(); err != nil {
		t.Fatal(err)
	}
	settled("after Finish")
	if err := start().Abort(); err != nil {
		t.Fatal(err)
	}
	settled("after Abort")
	start()
	settled("after dropping a builder")
}
