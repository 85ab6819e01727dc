// Package sstbeam builds and reads tables of github.com/sstkit/sstable with
// Apache Beam, across as many workers as the runner gives it: the bulk load
// of a data set larger than one machine.
//
// WriteTables samples the keys of a PCollection<KV<[]byte, []byte>> to choose
// split points, groups the entries by key range, sorts each range on one
// worker with package bulk (within WriteOptions.MemoryBudget, spilling to
// local disk beyond it), and uploads non-overlapping tables through
// gocloud.dev/blob, then writes Prefix + "manifest.json" listing them in key
// order. ReadTables reads them back as a PCollection<KV<[]byte, []byte>>,
// split by table and key range.
//
// Buckets are opened with blob.OpenBucket: this package registers the
// file:// (fileblob) and mem:// (memblob) drivers; a program writing to
// S3, GCS or Azure imports the driver itself (gocloud.dev/blob/s3blob,
// gcsblob, azureblob), so that every worker binary has it.
package sstbeam

import (
	"fmt"
	"strings"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// ManifestName is the name, after WriteOptions.Prefix, of the manifest
// WriteTables writes.
const ManifestName = "manifest.json"

// WriteOptions configure WriteTables. They are plain data, serialised
// with the DoFns that use them. Zero fields mean the defaults.
type WriteOptions struct {
	// BucketURL is the bucket to write to, as blob.OpenBucket takes it:
	// "s3://bucket?region=...", "gs://bucket", "file:///abs/dir". Required.
	BucketURL string
	// Prefix is prepended to every object name: tables are
	// Prefix + "RRRRRR-TTTTTT.sst" (range, then table within the range,
	// so that names sort in key order), and the manifest is
	// Prefix + "manifest.json". A prefix meant as a directory ends in "/".
	Prefix string
	// TargetTableSize is the size in bytes at which a worker finishes a
	// table and starts the next (bulk.Options.TargetTableSize). 0 means
	// 64 MiB.
	TargetTableSize int64
	// MemoryBudget is the bytes of entries each worker holds while
	// sorting a range before it spills a sorted run to local disk
	// (bulk.Options.MemoryBudget). 0 means 256 MiB.
	MemoryBudget int64
	// TempDir is the local directory where workers stage runs and tables
	// before upload. "" means os.TempDir().
	TempDir string
	// Compression of the tables' data blocks: "snappy" (also ""), "zstd"
	// or "none".
	Compression string
	// BitsPerKey sizes the tables' Bloom filters, 1 to 64; 0 means 10.
	BitsPerKey int
	// BlockSize is the target data block size in bytes; 0 means 4096.
	BlockSize int
	// Ranges is how many key ranges the input is cut into, each sorted by
	// one worker into one or more tables. 0 means one range per 4 x
	// TargetTableSize bytes of input (keys plus values, as sampled), at
	// most 10,000.
	Ranges int
	// SampleSize is how many keys are sampled to choose split points; 0
	// means max(1024, 64 x Ranges) up to 65,536 keys.
	SampleSize int
}

// Default values of WriteOptions.
const (
	DefaultTargetTableSize = 64 << 20
	DefaultMemoryBudget    = 256 << 20
	maxRanges              = 10000
)

// Validate returns an error naming the first bad field of o: an empty
// BucketURL, negative sizes, an unknown Compression, BitsPerKey outside
// 0..64, BlockSize outside 0..2^30, Ranges above 10,000.
func (o WriteOptions) Validate() error {
	switch {
	case o.BucketURL == "":
		return fmt.Errorf("sstbeam: WriteOptions.BucketURL is empty")
	case o.TargetTableSize < 0:
		return fmt.Errorf("sstbeam: negative WriteOptions.TargetTableSize %d", o.TargetTableSize)
	case o.MemoryBudget < 0:
		return fmt.Errorf("sstbeam: negative WriteOptions.MemoryBudget %d", o.MemoryBudget)
	case o.BitsPerKey < 0 || o.BitsPerKey > 64:
		return fmt.Errorf("sstbeam: WriteOptions.BitsPerKey %d out of range [0, 64]", o.BitsPerKey)
	case o.BlockSize < 0 || o.BlockSize > 1<<30:
		return fmt.Errorf("sstbeam: WriteOptions.BlockSize %d out of range [0, 2^30]", o.BlockSize)
	case o.Ranges < 0 || o.Ranges > maxRanges:
		return fmt.Errorf("sstbeam: WriteOptions.Ranges %d out of range [0, %d]", o.Ranges, maxRanges)
	case o.SampleSize < 0:
		return fmt.Errorf("sstbeam: negative WriteOptions.SampleSize %d", o.SampleSize)
	}
	if _, err := o.builderOptions(); err != nil {
		return err
	}
	return nil
}

func (o WriteOptions) builderOptions() (*builder.Options, error) {
	b := &builder.Options{BlockSize: o.BlockSize}
	switch strings.ToLower(o.Compression) {
	case "", "snappy":
		b.Compression = format.SnappyCompression
	case "zstd":
		b.Compression = format.ZstdCompression
	case "none":
		b.Compression = format.NoCompression
	default:
		return nil, fmt.Errorf("sstbeam: unknown WriteOptions.Compression %q (want snappy, zstd or none)", o.Compression)
	}
	bits := o.BitsPerKey
	if bits == 0 {
		bits = builder.DefaultBitsPerKey
	}
	b.Filter = filterblock.Bloom(float64(bits))
	return b, nil
}

func (o WriteOptions) target() int64 {
	if o.TargetTableSize == 0 {
		return DefaultTargetTableSize
	}
	return o.TargetTableSize
}

func (o WriteOptions) budget() int64 {
	if o.MemoryBudget == 0 {
		return DefaultMemoryBudget
	}
	return o.MemoryBudget
}

func (o WriteOptions) sampleSize() int {
	if o.SampleSize > 0 {
		return o.SampleSize
	}
	return min(max(1024, 64*o.Ranges), 65536)
}
