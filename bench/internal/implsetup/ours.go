package implsetup

import (
	"errors"
	"os"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Layout is a table format the benchmarks build.
type Layout int

const (
	// DefaultLayout is what builder.Create(path, nil) writes: format
	// version 4 (compact hash index), partitioned past the default
	// PartitionThreshold.
	DefaultLayout Layout = iota
	// HashV2Layout is format version 2 (HashIndex: true, the older, wider
	// hash index), one-level up to LocalPartitionThreshold.
	HashV2Layout
	// V1Layout is format version 1 (no hash index), one-level up to
	// LocalPartitionThreshold.
	V1Layout
)

// OursOptions returns the builder options of this module's tables of
// layout l with compression c: BlockSize, BitsPerKey and c spelled out,
// the rest the builder's defaults, or for the older layouts the format
// version asked for and PartitionThreshold LocalPartitionThreshold.
func OursOptions(c Compression, l Layout) *builder.Options {
	o := &builder.Options{
		BlockSize: BlockSize,
		Filter:    filterblock.Bloom(BitsPerKey),
	}
	switch l {
	case HashV2Layout:
		o.HashIndex, o.PartitionThreshold = true, LocalPartitionThreshold
	case V1Layout:
		o.FormatVersion, o.PartitionThreshold = format.Version1, LocalPartitionThreshold
	}
	switch c {
	case None:
		o.Compression = format.NoCompression
	case Zstd:
		o.Compression = format.ZstdCompression
	default:
		o.Compression = format.SnappyCompression
	}
	return o
}

// LocalPartitionThreshold is the PartitionThreshold of tables read from
// local files: 4 MiB of index and filter, which keeps tables of up to
// about 2M entries one-level, as the builder's option documentation
// suggests for tables served only from local files (a mapped reader keeps
// the index and filter in the page cache, and a partitioned table costs
// its lookups a top-level search). The default, 240 KiB, partitions
// whatever does not fit the tail a reader over object storage reads on
// open; cmd/objstore measures that.
const LocalPartitionThreshold = 4 << 20

// OursWriter is a builder.Builder over a file it owns. The builder
// buffers its output itself (256 KiB). builder.Create would also fsync
// and rename; the commands fsync every implementation's files untimed
// instead.
type OursWriter struct {
	b *builder.Builder
	f *os.File
}

// CreateOurs creates path and returns a writer of a table with opts.
func CreateOurs(path string, opts *builder.Options) (*OursWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &OursWriter{b: builder.New(f, opts), f: f}, nil
}

// Add adds an entry; keys must come in increasing order.
func (w *OursWriter) Add(key, value []byte) error { return w.b.Add(key, value) }

// Close finishes the table and closes the file.
func (w *OursWriter) Close() error {
	err := w.b.Finish()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort closes the file after a failed Add, leaving a partial table.
func (w *OursWriter) Abort() { w.f.Close() }

// OursGetAppend looks key up with Reader.GetAppend into *buf, which keeps
// the value's storage for the next call, so that a hit allocates nothing.
// The value is valid until the next call with buf.
func OursGetAppend(r *reader.Reader, buf *[]byte, key []byte) ([]byte, bool, error) {
	v, err := r.GetAppend((*buf)[:0], key)
	if err != nil {
		return nil, false, notFound(err)
	}
	*buf = v
	return v, true, nil
}

// OursGet looks key up with Reader.Get, which returns a fresh copy of the
// value.
func OursGet(r *reader.Reader, key []byte) ([]byte, bool, error) {
	v, err := r.Get(key)
	if err != nil {
		return nil, false, notFound(err)
	}
	return v, true, nil
}

// notFound turns reader.ErrNotFound into a miss (nil) and passes any
// other error on.
func notFound(err error) error {
	if errors.Is(err, reader.ErrNotFound) {
		return nil
	}
	return err
}

// OursScan walks r's entries in key order with a new iterator, passes
// each to visit unless visit is nil, and returns how many there were.
// Key and Value are read even without visit, so that a timed scan pays
// for them as a user's would.
func OursScan(r *reader.Reader, visit func(k, v []byte)) (int, error) {
	it := r.NewIterator()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		if visit != nil {
			visit(k, v)
		}
		n++
	}
	return n, it.Close()
}
