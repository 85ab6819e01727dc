package implsetup

import (
	"bufio"
	"bytes"
	"context"
	"os"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
)

// PebbleComparer is sstable.DefaultComparer (bytewise, same name) with a
// Split that makes the whole key the prefix: the filter then holds whole
// keys, and SeekPrefixGE can consult it.
var PebbleComparer = func() *sstable.Comparer {
	c := *sstable.DefaultComparer
	c.Split = func(k []byte) int { return len(k) }
	return &c
}()

// PebbleFilter is the Bloom filter policy Pebble tables are written and
// read with.
var PebbleFilter = bloom.FilterPolicy(BitsPerKey)

// PebbleWriterOptions returns the writer options of Pebble tables, as a
// Pebble DB sets them: restart interval 16, BlockSize, PebbleComparer,
// PebbleFilter as one whole-table filter (which Pebble recommends),
// TableFormatRocksDBv2 (v1.1.5's default, and the format of a DB at its
// default FormatMostCompatible), compression c. indexBlockSize is
// WriterOptions.IndexBlockSize: 0 is Pebble's default (BlockSize, so a
// two-level index once the index outgrows one block); math.MaxInt32, as
// the option's documentation suggests, keeps one index block like ours.
func PebbleWriterOptions(c Compression, indexBlockSize int) sstable.WriterOptions {
	o := sstable.WriterOptions{
		BlockRestartInterval: 16,
		BlockSize:            BlockSize,
		Comparer:             PebbleComparer,
		Compression:          sstable.SnappyCompression,
		FilterPolicy:         PebbleFilter,
		FilterType:           sstable.TableFilter,
		TableFormat:          sstable.TableFormatRocksDBv2,
		IndexBlockSize:       indexBlockSize,
	}
	switch c {
	case None:
		o.Compression = sstable.NoCompression
	case Zstd:
		o.Compression = sstable.ZstdCompression
	}
	return o
}

// PebbleReaderOptions returns the reader options that match
// PebbleWriterOptions, with cache as the block cache.
func PebbleReaderOptions(cache *pebble.Cache) sstable.ReaderOptions {
	return sstable.ReaderOptions{
		Cache:    cache,
		Comparer: PebbleComparer,
		Filters:  map[string]sstable.FilterPolicy{PebbleFilter.Name(): PebbleFilter},
	}
}

// CreatePebble creates path and returns a writer of a table with opts.
// The writer's Close flushes and closes the file.
func CreatePebble(path string, opts sstable.WriterOptions) (*sstable.Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return sstable.NewWriter(&bufWritable{f: f, bw: bufio.NewWriterSize(f, 256<<10)}, opts), nil
}

// bufWritable is an objstorage.Writable over an *os.File with a 256 KiB
// buffer; Finish flushes and closes without fsync. Pebble's own
// NewFileWritable buffers only 4 KiB and fsyncs in Finish; the commands
// fsync every implementation's files untimed instead.
type bufWritable struct {
	f  *os.File
	bw *bufio.Writer
}

func (w *bufWritable) Write(p []byte) error {
	_, err := w.bw.Write(p)
	return err
}

func (w *bufWritable) Finish() error {
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (w *bufWritable) Abort() { w.f.Close() }

var _ objstorage.Writable = (*bufWritable)(nil)

// OpenPebbleProvider opens the object-storage provider over dir, as a
// Pebble DB does once over its directory. Its tables are then opened with
// OpenPebble. (objstorageprovider has no exported NewFileReadable in
// v1.1.5.)
func OpenPebbleProvider(dir string) (objstorage.Provider, error) {
	return objstorageprovider.Open(objstorageprovider.DefaultSettings(vfs.Default, dir))
}

// pebbleFileTypeTable is base.FileTypeTable (internal/base is not
// importable). OpenForReading checks the type against the provider's
// listing, so a wrong value fails loudly.
const pebbleFileTypeTable = 2

// OpenPebble opens table fileNum of prov (the file named %06d.sst) as a
// DB opens its tables: OpenForReading (random reads, read-ahead for
// scans), then sstable.NewReader with PebbleReaderOptions(cache).
func OpenPebble(prov objstorage.Provider, fileNum int, cache *pebble.Cache) (*sstable.Reader, error) {
	readable, err := prov.OpenForReading(context.Background(), pebbleFileTypeTable,
		pebble.FileNum(fileNum).DiskFileNum(), objstorage.OpenOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	return sstable.NewReader(readable, PebbleReaderOptions(cache))
}

// PebbleGet looks key up in r with SeekPrefixGE, the only lookup call
// that consults the filter, then checks that the key found is key. *it is
// an iterator over r, created on the first call and reused by later ones:
// cheaper than pebble.DB.Get, which builds an iterator per call. The value
// is read in place (LazyValue.Value(nil)), valid until the next call.
func PebbleGet(r *sstable.Reader, it *sstable.Iterator, key []byte) ([]byte, bool, error) {
	if *it == nil {
		i, err := r.NewIter(nil, nil)
		if err != nil {
			return nil, false, err
		}
		*it = i
	}
	k, lv := (*it).SeekPrefixGE(key, key, 0 /* base.SeekGEFlagsNone */)
	if k == nil {
		return nil, false, (*it).Error()
	}
	if !bytes.Equal(k.UserKey, key) {
		return nil, false, nil
	}
	v, _, err := lv.Value(nil)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// ClosePebble closes it, the iterator PebbleGet made (nil if none), then
// r: a reader must outlive its iterators.
func ClosePebble(r *sstable.Reader, it sstable.Iterator) error {
	var err error
	if it != nil {
		err = it.Close()
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// PebbleScan walks r's entries in key order with a new iterator, reading
// each value (LazyValue.Value(nil)), passes each to visit unless visit is
// nil, and returns how many there were.
func PebbleScan(r *sstable.Reader, visit func(k, v []byte)) (int, error) {
	it, err := r.NewIter(nil, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for k, lv := it.First(); k != nil; k, lv = it.Next() {
		v, _, err := lv.Value(nil)
		if err != nil {
			it.Close()
			return n, err
		}
		if visit != nil {
			visit(k.UserKey, v)
		}
		n++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return n, err
	}
	return n, it.Close()
}
