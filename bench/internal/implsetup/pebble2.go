package implsetup

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"

	pebble2 "github.com/cockroachdb/pebble/v2"
	bloom2 "github.com/cockroachdb/pebble/v2/bloom"
	objstorage2 "github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	sstable2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/colblk"
	vfs2 "github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble v2 (github.com/cockroachdb/pebble/v2 v2.1.7), configured as a
// Pebble DB at FormatNewest writes and reads its tables, with every fair
// advantage:
//
//   - Writer: sstable.NewWriter with TableFormatPebblev7 (columnar data,
//     index and metaindex blocks; the newest format of v2.1.7, which a DB
//     at FormatNewest writes), BlockSize 4096, BlockRestartInterval 16,
//     Comparer Pebble2Comparer, the default columnar key schema over it
//     (colblk.DefaultKeySchema, bundles of 16, as Pebble builds it),
//     FilterPolicy bloom.FilterPolicy(10) as one whole-table filter
//     (FilterType TableFilter), snappy (the codec ours and v1.1.5 use) or
//     none, and IndexBlockSize as given (math.MaxInt32: one index block,
//     as ours has; 0: Pebble's default two-level index).
//   - Reader: sstable.NewReader with the same comparer, key schema and
//     filter policy, and a block cache reached through a cache handle
//     (ReaderOptions.CacheOpts: pebble.NewCache(n).NewHandle() and a file
//     number), as a DB's file cache sets it; without a handle every block,
//     the filter included, would be read from the file on every use.
//   - Lookups: one iterator from Reader.NewIter(NoTransforms, nil, nil,
//     AssertNoBlobHandles), reused for every lookup; SeekPrefixGE(key,
//     key, 0), the call that consults the filter; the value read in place
//     (InternalKV.Value(nil)).
//   - Local files are opened through objstorageprovider (OpenForReading),
//     as a DB opens them; remote objects through
//     objstorageprovider.NewRemoteReadable, Pebble's reader of remote
//     objects with its read-ahead (64 KiB growing to 1 MiB).

// Pebble2Comparer is the v2 DefaultComparer (bytewise, same name) with a
// Split that makes the whole key the prefix, so that the filter holds
// whole keys and SeekPrefixGE consults it.
var Pebble2Comparer = func() *sstable2.Comparer {
	c := *sstable2.DefaultComparer
	c.Split = func(k []byte) int { return len(k) }
	return &c
}()

// Pebble2KeySchema is the columnar key schema Pebble v2 tables are written
// and read with: Pebble's default schema over Pebble2Comparer.
var Pebble2KeySchema = colblk.DefaultKeySchema(Pebble2Comparer, 16)

// Pebble2Filter is the Bloom filter policy of Pebble v2 tables.
var Pebble2Filter = bloom2.FilterPolicy(BitsPerKey)

// Pebble2FileNum is the file number Pebble v2 tables are read as (their
// block cache keys, and %06d.sst in a provider's directory).
const Pebble2FileNum = 1

// pebble2FileTypeTable is base.FileTypeTable of v2 (internal/base is not
// importable); OpenForReading checks it against the provider's listing.
const pebble2FileTypeTable = 2

// Pebble2WriterOptions returns the writer options of Pebble v2 tables
// with compression c; indexBlockSize is WriterOptions.IndexBlockSize.
func Pebble2WriterOptions(c Compression, indexBlockSize int) sstable2.WriterOptions {
	o := sstable2.WriterOptions{
		BlockRestartInterval: 16,
		BlockSize:            BlockSize,
		Comparer:             Pebble2Comparer,
		KeySchema:            &Pebble2KeySchema,
		Compression:          sstable2.SnappyCompression,
		FilterPolicy:         Pebble2Filter,
		FilterType:           sstable2.TableFilter,
		TableFormat:          sstable2.TableFormatPebblev7,
		IndexBlockSize:       indexBlockSize,
	}
	switch c {
	case None:
		o.Compression = sstable2.NoCompression
	case Zstd:
		o.Compression = sstable2.ZstdCompression
	}
	return o
}

// Pebble2Cache is a Pebble v2 block cache and the handle readers reach it
// through.
type Pebble2Cache struct {
	Cache  *pebble2.Cache
	Handle interface{ Close() }
	opts   sstable2.ReaderOptions
}

// NewPebble2Cache returns a block cache of size bytes with a handle.
func NewPebble2Cache(size int64) *Pebble2Cache {
	c := pebble2.NewCache(size)
	h := c.NewHandle()
	o := sstable2.ReaderOptions{
		Comparer:   Pebble2Comparer,
		KeySchemas: sstable2.MakeKeySchemas(&Pebble2KeySchema),
		Filters:    map[string]sstable2.FilterPolicy{Pebble2Filter.Name(): Pebble2Filter},
	}
	o.CacheOpts.CacheHandle = h
	o.CacheOpts.FileNum = Pebble2FileNum
	return &Pebble2Cache{Cache: c, Handle: h, opts: o}
}

// ReaderOptions returns the reader options of Pebble v2 tables, with this
// cache.
func (c *Pebble2Cache) ReaderOptions() sstable2.ReaderOptions { return c.opts }

// OffHeapBytes is the memory the cache holds.
func (c *Pebble2Cache) OffHeapBytes() int64 { return c.Cache.Metrics().Size }

// Close releases the handle and the cache.
func (c *Pebble2Cache) Close() {
	c.Handle.Close()
	c.Cache.Unref()
}

// CreatePebble2 creates path and returns a writer of a table with opts,
// through a 256 KiB buffer. The writer's Close flushes and closes the file.
func CreatePebble2(path string, opts sstable2.WriterOptions) (*sstable2.Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return sstable2.NewWriter(&bufWritable{f: f, bw: bufio.NewWriterSize(f, 256<<10)}, opts), nil
}

var _ objstorage2.Writable = (*bufWritable)(nil)

// OpenPebble2Provider opens Pebble v2's object-storage provider over dir,
// as a DB does once over its directory.
func OpenPebble2Provider(dir string) (objstorage2.Provider, error) {
	return objstorageprovider.Open(objstorageprovider.DefaultSettings(vfs2.Default, dir))
}

// OpenPebble2 opens table Pebble2FileNum of prov (000001.sst) as a DB
// opens its tables, reading through cache.
func OpenPebble2(prov objstorage2.Provider, cache *Pebble2Cache) (*sstable2.Reader, error) {
	ctx := context.Background()
	readable, err := prov.OpenForReading(ctx, pebble2FileTypeTable, Pebble2FileNum, objstorage2.OpenOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	return sstable2.NewReader(ctx, readable, cache.ReaderOptions())
}

// OpenPebble2File opens table fileNum of prov (the file named %06d.sst)
// as a DB's file cache opens its tables: OpenForReading, then
// sstable.NewReader with cache's reader options but fileNum as the file
// number of its block cache keys (CacheOpts.FileNum; a DB passes the
// table's DiskFileNum), so that the tables read through the one handle
// of cache keep their blocks apart: the cache is keyed by (handle, file
// number, offset). If NewReader fails the readable is closed, as the
// file cache does. (OpenPebble2 opens Pebble2FileNum alike, with the
// handle's file number 1, but leaves the readable open on failure.)
func OpenPebble2File(prov objstorage2.Provider, fileNum uint64, cache *Pebble2Cache) (*sstable2.Reader, error) {
	ctx := context.Background()
	o := cache.ReaderOptions()
	setUint64(&o.CacheOpts.FileNum, fileNum) // base.DiskFileNum, not importable
	readable, err := prov.OpenForReading(ctx, pebble2FileTypeTable, o.CacheOpts.FileNum, objstorage2.OpenOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	r, err := sstable2.NewReader(ctx, readable, o)
	if err != nil {
		readable.Close()
		return nil, err
	}
	return r, nil
}

// setUint64 sets *dst, of an unexported-package type over uint64 (such
// as Pebble's base.DiskFileNum), to n.
func setUint64[T ~uint64](dst *T, n uint64) { *dst = T(n) }

// remoteObject is a remote.ObjectReader over an io.ReaderAt.
type remoteObject struct{ r io.ReaderAt }

func (o remoteObject) ReadAt(_ context.Context, p []byte, off int64) error {
	n, err := o.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (o remoteObject) Close() error { return nil }

// OpenPebble2Remote opens the table in src (size bytes) as Pebble v2
// reads a remote object: objstorageprovider.NewRemoteReadable, whose read
// handles read ahead for scans, then sstable.NewReader through cache.
func OpenPebble2Remote(src io.ReaderAt, size int64, cache *Pebble2Cache) (*sstable2.Reader, error) {
	readable := objstorageprovider.NewRemoteReadable(remoteObject{src}, size)
	r, err := sstable2.NewReader(context.Background(), readable, cache.ReaderOptions())
	if err != nil {
		readable.Close()
		return nil, err
	}
	return r, nil
}

// Pebble2Get looks key up in r with SeekPrefixGE on *it, an iterator
// created on the first call and reused by later ones, and checks that
// the key found is key. The value is read in place, valid until the next
// call.
func Pebble2Get(r *sstable2.Reader, it *sstable2.Iterator, key []byte) ([]byte, bool, error) {
	if *it == nil {
		i, err := r.NewIter(sstable2.NoTransforms, nil, nil, sstable2.AssertNoBlobHandles)
		if err != nil {
			return nil, false, err
		}
		*it = i
	}
	kv := (*it).SeekPrefixGE(key, key, 0 /* base.SeekGEFlagsNone */)
	if kv == nil {
		return nil, false, (*it).Error()
	}
	if !bytes.Equal(kv.K.UserKey, key) {
		return nil, false, nil
	}
	v, _, err := kv.Value(nil)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// ClosePebble2 closes it (nil if none), then r.
func ClosePebble2(r *sstable2.Reader, it sstable2.Iterator) error {
	var err error
	if it != nil {
		err = it.Close()
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// Pebble2Scan walks r's entries in key order with a new iterator, reading
// each value in place, passes each to visit unless visit is nil, and
// returns how many there were.
func Pebble2Scan(r *sstable2.Reader, visit func(k, v []byte)) (int, error) {
	it, err := r.NewIter(sstable2.NoTransforms, nil, nil, sstable2.AssertNoBlobHandles)
	if err != nil {
		return 0, err
	}
	n := 0
	for kv := it.First(); kv != nil; kv = it.Next() {
		v, _, err := kv.Value(nil)
		if err != nil {
			it.Close()
			return n, err
		}
		if visit != nil {
			visit(kv.K.UserKey, v)
		}
		n++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return n, err
	}
	return n, it.Close()
}
