package builder_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// storedProperties decodes the properties block of the table data as
// stored, without package reader.
func storedProperties(t *testing.T, data []byte) format.Properties {
	t.Helper()
	f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	stored, _, err := codec.CheckBlock(format.SectionProperties, int64(f.Properties.Offset), data[f.Properties.Offset:f.Properties.End()])
	if err != nil {
		t.Fatal(err)
	}
	p, err := codec.DecodeProperties(stored, int64(f.Properties.Offset))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLargeKeyStoredOnce checks that a key of any size costs its size once
// plus a few bytes: a table of one 10 MiB key was 30 MiB (the key in its
// data block and twice in the properties, as smallest and largest key).
// The properties block now records only the length of a key longer than
// format.MaxPropertiesKeyLen, and index keys stay short (the last block's
// is a successor of a byte or two; between blocks, AppendSeparator's rule
// for long keys).
func TestLargeKeyStoredOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 10<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	random[0] = 'r'
	compressible := bytes.Repeat([]byte("0123456789abcdef"), (10<<20)/16)
	compressible[0] = 'c'
	// Keys of 1 MiB whose bytes after the common prefix differ by one
	// (LevelDB's separator keeps such a key whole) and with long common
	// prefixes, one per block.
	var run [][]byte
	for i := range 6 {
		k := bytes.Clone(random[:1<<20])
		k[0] = 'm'
		k[1] = byte(i) // 0, 1, 2, ...: each one below the next
		run = append(run, k)
	}
	for _, tc := range []struct {
		name string
		keys [][]byte
	}{
		{"one random 10 MiB key", [][]byte{random}},
		{"one compressible 10 MiB key", [][]byte{compressible}},
		{"compressible and random 10 MiB keys", [][]byte{compressible, random}},
		{"six 1 MiB keys one apart", run},
	} {
		for _, opts := range []builder.Options{
			{Compression: format.NoCompression},
			{Compression: format.SnappyCompression},
			{Compression: format.ZstdCompression},
			{Compression: format.SnappyCompression, HashIndex: true},
		} {
			t.Run(fmt.Sprintf("%s/%v,hash=%v", tc.name, opts.Compression, opts.HashIndex), func(t *testing.T) {
				var buf bytes.Buffer
				b := builder.New(&buf, &opts)
				for _, k := range tc.keys {
					if err := b.Add(k, []byte("v")); err != nil {
						t.Fatal(err)
					}
				}
				if err := b.Finish(); err != nil {
					t.Fatal(err)
				}
				data := buf.Bytes()
				bp := b.Properties()
				// Everything but the data blocks: a few hundred bytes.
				if rest := uint64(len(data)) - bp.DataSize; rest > 1024 {
					t.Errorf("%d bytes besides %d of data blocks (index %d, filter %d, hash index %d)", rest, bp.DataSize, bp.IndexSize, bp.FilterSize, bp.HashIndexSize)
				}
				// The data blocks hold each key once: no more than the
				// keys for incompressible ones, a few KiB per block over.
				var keyBytes int
				for _, k := range tc.keys {
					keyBytes += len(k)
				}
				if opts.Compression == format.NoCompression && bp.DataSize > uint64(keyBytes)+uint64(len(tc.keys))*64 {
					t.Errorf("data blocks take %d bytes for %d bytes of keys", bp.DataSize, keyBytes)
				}
				if len(data) > keyBytes+4096 {
					t.Errorf("table of %d bytes for %d bytes of keys", len(data), keyBytes)
				}
				first, last := tc.keys[0], tc.keys[len(tc.keys)-1]
				if !bytes.Equal(bp.SmallestKey, first) || !bytes.Equal(bp.LargestKey, last) {
					t.Errorf("builder's properties do not hold the keys whole")
				}
				sp := storedProperties(t, data)
				if sp.SmallestKey != nil || sp.LargestKey != nil || sp.SmallestKeyOmitted != uint64(len(first)) || sp.LargestKeyOmitted != uint64(len(last)) {
					t.Errorf("stored properties: keys %v/%v, omitted lengths %d/%d; want none, %d/%d", sp.SmallestKey != nil, sp.LargestKey != nil, sp.SmallestKeyOmitted, sp.LargestKeyOmitted, len(first), len(last))
				}
				if bp.SmallestKeyOmitted != sp.SmallestKeyOmitted || bp.LargestKeyOmitted != sp.LargestKeyOmitted {
					t.Errorf("builder's omitted lengths %d/%d, stored %d/%d", bp.SmallestKeyOmitted, bp.LargestKeyOmitted, sp.SmallestKeyOmitted, sp.LargestKeyOmitted)
				}
				if est := b.EstimatedSize(); est != int64(len(data)) {
					t.Errorf("EstimatedSize %d after Finish, file %d", est, len(data))
				}
			})
		}
	}
}
