package sstbeam

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/cespare/xxhash/v2"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// buckets
	_ "gocloud.dev/blob/memblob"  // mem:// buckets

	"github.com/sstkit/sstable/bulk"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*bulk.TableInfo)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sampleItem)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sampleAcc)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*splitPoints)(nil)).Elem())
	register.Function3x0(sampleKey)
	register.Emitter1[sampleItem]()
	register.Combiner3[sampleAcc, sampleItem, splitPoints](&sampleFn{})
	register.DoFn4x0[[]byte, []byte, splitPoints, func(int, []byte)](&assignFn{})
	register.Emitter2[int, []byte]()
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(bulk.TableInfo), error](&writeRangeFn{})
	register.Iter1[[]byte]()
	register.Emitter1[bulk.TableInfo]()
	register.DoFn3x1[context.Context, []byte, func(*bulk.TableInfo) bool, error](&manifestFn{})
	register.Iter1[bulk.TableInfo]()
}

// WriteTables writes the entries of kvs, a PCollection<KV<[]byte, []byte>>
// in any order, as non-overlapping tables under opts.BucketURL and
// opts.Prefix, and returns the PCollection<bulk.TableInfo> of the tables
// written (Path is the object name within the bucket; Size in bytes). A
// final step writes opts.Prefix + "manifest.json" (bulk.Manifest: the
// tables in key order, keys base64, the builder options, and each table's
// name relative to the manifest's directory, as bulk writes it, so that
// bulk.ReadManifest reads it from a file:// bucket), after every table is
// written; with no input it lists no table.
//
// Steps: every key is sampled with a fixed hash (the SampleSize keys of
// smallest hash, with the count and bytes of all entries) to choose
// opts.Ranges-1 split points; each entry goes to its range; each range is
// sorted by one worker with bulk.Writer within opts.MemoryBudget and
// written as tables of about opts.TargetTableSize, uploaded, and listed.
//
// The pipeline fails, without writing a manifest, for bad options (the
// error of WriteOptions.Validate), a key found twice in the input (an
// error naming it, from the worker sorting its range) or a failed upload.
// Tables already uploaded by a failed pipeline are not removed.
func WriteTables(s beam.Scope, kvs beam.PCollection, opts WriteOptions) beam.PCollection {
	s = s.Scope("sstbeam.WriteTables")
	samples := beam.ParDo(s, sampleKey, kvs)
	splits := beam.Combine(s, &sampleFn{Opts: opts}, samples)
	ranged := beam.ParDo(s, &assignFn{}, kvs, beam.SideInput{Input: splits})
	grouped := beam.GroupByKey(s, ranged)
	tables := beam.ParDo(s, &writeRangeFn{Opts: opts}, grouped)
	beam.ParDo0(s, &manifestFn{Opts: opts}, beam.Impulse(s), beam.SideInput{Input: tables})
	return tables
}

// sampleItem is one key seen by the sample, with its hash and its entry's
// size (key plus value bytes).
type sampleItem struct {
	Hash uint64
	Key  []byte
	Size int64
}

func sampleKey(key, value []byte, emit func(sampleItem)) {
	emit(sampleItem{Hash: xxhash.Sum64(key), Key: key, Size: int64(len(key) + len(value))})
}

// sampleAcc is a bottom-k sample: the keys of the smallest hashes (sorted
// by hash), and the count and bytes of every entry seen.
type sampleAcc struct {
	Count int64
	Bytes int64
	Items []sampleItem
}

// splitPoints are the first keys of ranges 1..n-1 (range 0 starts at the
// first key), sorted.
type splitPoints struct {
	Keys [][]byte
}

// sampleFn samples keys and chooses the split points.
type sampleFn struct {
	Opts WriteOptions
}

func (f *sampleFn) CreateAccumulator() sampleAcc { return sampleAcc{} }

func (f *sampleFn) AddInput(a sampleAcc, it sampleItem) sampleAcc {
	a.Count++
	a.Bytes += it.Size
	k := f.Opts.sampleSize()
	if len(a.Items) >= k && it.Hash >= a.Items[len(a.Items)-1].Hash {
		return a
	}
	it.Size = 0
	it.Key = bytes.Clone(it.Key)
	i := sort.Search(len(a.Items), func(i int) bool { return a.Items[i].Hash >= it.Hash })
	a.Items = slices.Insert(a.Items, i, it)
	if len(a.Items) > k {
		a.Items = a.Items[:k]
	}
	return a
}

func (f *sampleFn) MergeAccumulators(a, b sampleAcc) sampleAcc {
	out := sampleAcc{Count: a.Count + b.Count, Bytes: a.Bytes + b.Bytes}
	out.Items = append(append(out.Items, a.Items...), b.Items...)
	slices.SortFunc(out.Items, func(x, y sampleItem) int {
		if x.Hash != y.Hash {
			if x.Hash < y.Hash {
				return -1
			}
			return 1
		}
		return bytes.Compare(x.Key, y.Key)
	})
	// Equal keys have equal hashes: drop repeats.
	out.Items = slices.CompactFunc(out.Items, func(x, y sampleItem) bool { return bytes.Equal(x.Key, y.Key) })
	if k := f.Opts.sampleSize(); len(out.Items) > k {
		out.Items = out.Items[:k]
	}
	return out
}

func (f *sampleFn) ExtractOutput(a sampleAcc) splitPoints {
	n := f.Opts.Ranges
	if n == 0 {
		per := 4 * f.Opts.target()
		n = int(min((a.Bytes+per-1)/per, maxRanges))
	}
	keys := make([][]byte, 0, len(a.Items))
	for _, it := range a.Items {
		keys = append(keys, it.Key)
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	var sp splitPoints
	for i := 1; i < n && len(keys) > 0; i++ {
		k := keys[i*len(keys)/n]
		if len(sp.Keys) > 0 && bytes.Compare(k, sp.Keys[len(sp.Keys)-1]) <= 0 {
			continue
		}
		sp.Keys = append(sp.Keys, k)
	}
	return sp
}

// assignFn sends each entry to its range: KV<range, entry>, the entry
// encoded as uvarint(len(key)) key value.
type assignFn struct{}

func (f *assignFn) ProcessElement(key, value []byte, sp splitPoints, emit func(int, []byte)) {
	r, _ := slices.BinarySearchFunc(sp.Keys, key, func(split, k []byte) int {
		if bytes.Compare(split, k) <= 0 {
			return -1
		}
		return 1
	})
	buf := make([]byte, 0, binary.MaxVarintLen64+len(key)+len(value))
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = append(append(buf, key...), value...)
	emit(r, buf)
}

func decodeEntry(e []byte) (key, value []byte, err error) {
	n, w := binary.Uvarint(e)
	if w <= 0 || n > uint64(len(e)-w) {
		return nil, nil, fmt.Errorf("sstbeam: malformed entry of %d bytes", len(e))
	}
	return e[w : w+int(n)], e[w+int(n):], nil
}

// writeRangeFn sorts one range with bulk and uploads its tables.
type writeRangeFn struct {
	Opts   WriteOptions
	bucket *blob.Bucket
}

func (f *writeRangeFn) Setup(ctx context.Context) error {
	if err := f.Opts.Validate(); err != nil {
		return err
	}
	b, err := blob.OpenBucket(ctx, f.Opts.BucketURL)
	if err != nil {
		return fmt.Errorf("sstbeam: opening bucket %s: %w", f.Opts.BucketURL, err)
	}
	f.bucket = b
	return nil
}

func (f *writeRangeFn) Teardown() error {
	if f.bucket != nil {
		return f.bucket.Close()
	}
	return nil
}

func (f *writeRangeFn) ProcessElement(ctx context.Context, r int, entries func(*[]byte) bool, emit func(bulk.TableInfo)) error {
	bo, err := f.Opts.builderOptions()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(f.Opts.TempDir, "sstbeam-*")
	if err != nil {
		return fmt.Errorf("sstbeam: %w", err)
	}
	defer os.RemoveAll(tmp)
	w, err := bulk.NewWriter(filepath.Join(tmp, "out"), &bulk.Options{
		Builder:         bo,
		MemoryBudget:    f.Opts.budget(),
		TargetTableSize: f.Opts.target(),
	})
	if err != nil {
		return fmt.Errorf("sstbeam: range %d: %w", r, err)
	}
	defer w.Abort()
	var e []byte
	for entries(&e) {
		k, v, err := decodeEntry(e)
		if err != nil {
			return err
		}
		if err := w.Add(k, v); err != nil {
			return fmt.Errorf("sstbeam: range %d: %w", r, err)
		}
	}
	tables, err := w.Finish()
	if err != nil {
		return fmt.Errorf("sstbeam: range %d: %w", r, err)
	}
	for i, t := range tables {
		name := fmt.Sprintf("%s%06d-%06d.sst", f.Opts.Prefix, r, i+1)
		if err := upload(ctx, f.bucket, name, t.Path); err != nil {
			return fmt.Errorf("sstbeam: range %d: %w", r, err)
		}
		t.Path = name
		emit(t)
	}
	return nil
}

// upload copies the local file at path to the object name.
func upload(ctx context.Context, b *blob.Bucket, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := b.NewWriter(ctx, name, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("uploading %s: %w", name, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return fmt.Errorf("uploading %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("uploading %s: %w", name, err)
	}
	return nil
}

// manifestDir returns the "directory" of the manifest's object name
// prefix + ManifestName: up to its last slash, or "" without one.
func manifestDir(prefix string) string {
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		return prefix[:i+1]
	}
	return ""
}

// manifestFn writes the manifest once every table is written (its side
// input is the tables' PCollection).
type manifestFn struct {
	Opts WriteOptions
}

func (f *manifestFn) ProcessElement(ctx context.Context, _ []byte, tables func(*bulk.TableInfo) bool) error {
	if err := f.Opts.Validate(); err != nil {
		return err
	}
	bo, _ := f.Opts.builderOptions()
	var list []bulk.TableInfo
	var t bulk.TableInfo
	for tables(&t) {
		list = append(list, t)
		t = bulk.TableInfo{}
	}
	slices.SortFunc(list, func(a, b bulk.TableInfo) int { return bytes.Compare(a.Smallest, b.Smallest) })
	// In the manifest, as in one bulk.Writer writes, table paths are
	// relative to the manifest's directory.
	dir := manifestDir(f.Opts.Prefix)
	for i := range list {
		list[i].Path = strings.TrimPrefix(list[i].Path, dir)
	}
	m, err := bulk.NewManifest(bo, list)
	if err != nil {
		return fmt.Errorf("sstbeam: %w", err)
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	b, err := blob.OpenBucket(ctx, f.Opts.BucketURL)
	if err != nil {
		return fmt.Errorf("sstbeam: opening bucket %s: %w", f.Opts.BucketURL, err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, f.Opts.Prefix+ManifestName, data, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("sstbeam: writing manifest: %w", err)
	}
	return nil
}
