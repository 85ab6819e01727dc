package sstbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"path"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gocloud.dev/blob"

	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/reader"
)

// ShardSize is about how many bytes of table one ReadTables shard reads:
// a table of more is split into key ranges of about this size.
const ShardSize = 16 << 20

func init() {
	beam.RegisterType(reflect.TypeOf((*readShard)(nil)).Elem())
	register.DoFn3x1[context.Context, []byte, func(readShard), error](&planFn{})
	register.Emitter1[readShard]()
	register.DoFn3x1[context.Context, readShard, func([]byte, []byte), error](&readFn{})
	register.Emitter2[[]byte, []byte]()
}

// ReadTables returns every entry of the tables that the manifest at
// prefix + "manifest.json" in the bucket at bucketURL lists, as a
// PCollection<KV<[]byte, []byte>> (in no particular order). Each table is
// read in shards of about ShardSize bytes, key ranges interpolated between
// its smallest and largest keys, spread over the workers. The pipeline
// fails with the error of a missing or damaged manifest, a table that
// cannot be read, or a table whose entry count differs from the manifest's.
func ReadTables(s beam.Scope, bucketURL, prefix string) beam.PCollection {
	s = s.Scope("sstbeam.ReadTables")
	shards := beam.ParDo(s, &planFn{BucketURL: bucketURL, Prefix: prefix, ShardSize: ShardSize}, beam.Impulse(s))
	shards = beam.Reshuffle(s, shards)
	return beam.ParDo(s, &readFn{BucketURL: bucketURL}, shards)
}

// readShard is the part of one table with Lower <= key < Upper (nil: no
// bound).
type readShard struct {
	Path         string
	Size         int64
	Lower, Upper []byte
	// Entries is the table's entry count, checked by the shard that reads
	// the whole table (Shards == 1).
	Entries int64
	Shards  int
}

type planFn struct {
	BucketURL, Prefix string
	ShardSize         int64 // bytes of table per shard
}

func (f *planFn) ProcessElement(ctx context.Context, _ []byte, emit func(readShard)) error {
	b, err := blob.OpenBucket(ctx, f.BucketURL)
	if err != nil {
		return fmt.Errorf("sstbeam: opening bucket %s: %w", f.BucketURL, err)
	}
	defer b.Close()
	data, err := b.ReadAll(ctx, f.Prefix+ManifestName)
	if err != nil {
		return fmt.Errorf("sstbeam: reading manifest: %w", err)
	}
	m, err := bulk.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("sstbeam: %s%s: %w", f.Prefix, ManifestName, err)
	}
	dir := manifestDir(f.Prefix)
	for _, t := range m.Tables {
		if !localName(t.Path) {
			return fmt.Errorf("sstbeam: %s%s: table path %q outside the manifest's directory", f.Prefix, ManifestName, t.Path)
		}
		t.Path = dir + t.Path
		n := int((t.Size + f.ShardSize - 1) / f.ShardSize)
		bounds := splitKeys(t.Smallest, t.Largest, n)
		shards := len(bounds) + 1
		var lower []byte
		for i := 0; i <= len(bounds); i++ {
			var upper []byte
			if i < len(bounds) {
				upper = bounds[i]
			}
			emit(readShard{Path: t.Path, Size: t.Size, Lower: lower, Upper: upper, Entries: t.Entries, Shards: shards})
			lower = upper
		}
	}
	return nil
}

// localName reports whether name, slash-separated, stays within its
// directory: not absolute, no ".." element.
func localName(name string) bool {
	if name == "" || path.IsAbs(name) {
		return false
	}
	for _, e := range strings.Split(name, "/") {
		if e == ".." {
			return false
		}
	}
	return true
}

// splitKeys returns up to n-1 increasing keys strictly between lo and hi,
// interpolated as numbers: the bytes after lo and hi's common prefix, 8 of
// them, read big-endian. Uneven key distributions give uneven shards, never
// wrong ones.
func splitKeys(lo, hi []byte, n int) [][]byte {
	if n <= 1 {
		return nil
	}
	p := 0
	for p < len(lo) && p < len(hi) && lo[p] == hi[p] {
		p++
	}
	word := func(k []byte) *big.Int {
		var b [8]byte
		if p < len(k) {
			copy(b[:], k[p:])
		}
		return new(big.Int).SetUint64(binary.BigEndian.Uint64(b[:]))
	}
	a, z := word(lo), word(hi)
	span := new(big.Int).Sub(z, a)
	var out [][]byte
	prev := lo
	for i := 1; i < n; i++ {
		x := new(big.Int).Mul(span, big.NewInt(int64(i)))
		x.Div(x, big.NewInt(int64(n)))
		x.Add(x, a)
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], x.Uint64())
		k := append(append([]byte(nil), hi[:p]...), b[:]...)
		if bytesCompare(k, prev) <= 0 || bytesCompare(k, hi) > 0 {
			continue
		}
		out = append(out, k)
		prev = k
	}
	return out
}

// readFn reads one shard.
type readFn struct {
	BucketURL string
	bucket    *blob.Bucket
	cache     *cache.Cache
}

func (f *readFn) Setup(ctx context.Context) error {
	b, err := blob.OpenBucket(ctx, f.BucketURL)
	if err != nil {
		return fmt.Errorf("sstbeam: opening bucket %s: %w", f.BucketURL, err)
	}
	f.bucket = b
	if f.cache, err = cache.New(64 << 20); err != nil {
		_ = b.Close()
		return fmt.Errorf("sstbeam: %w", err)
	}
	return nil
}

func (f *readFn) Teardown() error {
	var err error
	if f.bucket != nil {
		err = f.bucket.Close()
	}
	if f.cache != nil {
		f.cache.Close()
	}
	return err
}

func (f *readFn) ProcessElement(ctx context.Context, sh readShard, emit func([]byte, []byte)) error {
	ra := &blobReaderAt{ctx: ctx, b: f.bucket, name: sh.Path}
	r, err := reader.New(ra, sh.Size, &reader.Options{Cache: f.cache})
	if err != nil {
		return fmt.Errorf("sstbeam: %s: %w", sh.Path, err)
	}
	defer r.Close()
	it := r.NewIter(&reader.IterOptions{LowerBound: sh.Lower, UpperBound: sh.Upper})
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		emit(append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...))
		n++
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("sstbeam: %s: %w", sh.Path, err)
	}
	if sh.Shards == 1 && n != sh.Entries {
		return fmt.Errorf("sstbeam: %s holds %d entries, the manifest says %d", sh.Path, n, sh.Entries)
	}
	return nil
}

// blobReaderAt reads an object with one ranged read per ReadAt.
type blobReaderAt struct {
	ctx  context.Context
	b    *blob.Bucket
	name string
}

func (r *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	rr, err := r.b.NewRangeReader(r.ctx, r.name, off, int64(len(p)), nil)
	if err != nil {
		return 0, err
	}
	defer rr.Close()
	n, err := io.ReadFull(rr, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

func bytesCompare(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}
