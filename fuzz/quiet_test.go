//go:build unix

package fuzz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/internal/fdcapture"
)

// TestDamagedTablesWriteNothing runs a corruption sweep over the golden
// tables of every codec (none.sst, snappy.sst, zstd.sst, and hashindex.sst,
// a snappy table with a hash index) and of format version 4, the default
// (v4.sst, one-level, and v4parted.sst, partitioned, its hash index
// section carrying the whole filter), with standard error captured: each
// damaged copy, one bit flipped, has its checksums repaired so that the
// damage reaches the block decoders, and is opened, verified, scanned both
// ways and looked up in, as FuzzTable does. No library code may write a
// byte to stderr (Go's println, a logger, a codec's debug output). Every
// 97th bit is flipped (every 3rd with SSTABLE_LONG_TESTS=1, as CI runs
// it, about 20 s). Standard output is not
// captured here: the testing package writes a failing test's report to
// it; package format's TestDecodersWriteNothing captures both around the
// block decoders alone.
func TestDamagedTablesWriteNothing(t *testing.T) {
	stride := 97
	if os.Getenv("SSTABLE_LONG_TESTS") != "" {
		stride = 3
	}
	for _, name := range []string{"none.sst", "snappy.sst", "zstd.sst", "hashindex.sst", "v4.sst", "v4parted.sst"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			stop := fdcapture.Start(t, 2)
			buf := make([]byte, len(data))
			n := 0
			for f := 0; f < 8*len(data); f += stride {
				copy(buf, data)
				buf[f/8] ^= 1 << (f % 8)
				checkFile(t, repairChecksums(buf), nil)
				n++
			}
			if out := stop(); len(out) > 0 {
				t.Fatalf("%d bytes written to stderr over %d damaged copies; they begin %q", len(out), n, out[:min(len(out), 500)])
			}
			t.Logf("%d damaged copies (checksums repaired), nothing written to stderr", n)
		})
	}
}
