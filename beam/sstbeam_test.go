package sstbeam_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/cespare/xxhash/v2"

	"github.com/sstkit/sstable/beam"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/reader"
)

func TestMain(m *testing.M) {
	ptest.Main(m)
}

func init() {
	register.DoFn2x0[[]byte, func([]byte, []byte)](&genFn{})
	register.DoFn2x0[[]byte, func([]byte, []byte)](&listFn{})
	register.Function2x1(entryHash)
	register.Function2x1(addHash)
	beam.RegisterType(reflect.TypeOf((*genFn)(nil)).Elem())
}

// The generated input: entry i has a 16-byte key, i times an odd constant
// (a bijection, so keys are distinct and in pseudo-random order) then its
// hash, and a value of 20 to 120 bytes derived from the key.
const pairs = 1_000_000

func genKey(i uint64) []byte {
	var k [16]byte
	x := i * 0x9E3779B97F4A7C15
	binary.BigEndian.PutUint64(k[:], x)
	binary.BigEndian.PutUint64(k[8:], xxhash.Sum64(k[:8]))
	return k[:]
}

func genValue(k []byte) []byte {
	h := xxhash.Sum64(k)
	v := make([]byte, 20+h%100)
	for i := range v {
		v[i] = byte('a' + (h>>(i%57))%26)
	}
	return v
}

// genFn emits the pairs of one shard: indexes start, start+shards, ...
type genFn struct {
	N, Shards uint64
}

func (f *genFn) ProcessElement(seed []byte, emit func([]byte, []byte)) {
	start := uint64(seed[0])
	for i := start; i < f.N; i += f.Shards {
		k := genKey(i)
		emit(k, genValue(k))
	}
}

// generate builds the input PCollection in the pipeline, from shards
// spread by a Reshuffle, rather than from a Create of a million elements.
func generate(s beam.Scope, n uint64) beam.PCollection {
	const shards = 8
	var seeds [][]byte
	for i := range shards {
		seeds = append(seeds, []byte{byte(i)})
	}
	col := beam.CreateList(s, seeds)
	col = beam.Reshuffle(s, col)
	return beam.ParDo(s, &genFn{N: n, Shards: shards}, col)
}

func entryHash(k, v []byte) uint64 {
	h := xxhash.New()
	h.Write(binary.AppendUvarint(nil, uint64(len(k))))
	h.Write(k)
	h.Write(v)
	return h.Sum64()
}

func addHash(a, b uint64) uint64 { return a + b }

// expected returns the count and checksum (sum of entry hashes) of the
// generated input.
func expected(n uint64) (uint64, uint64) {
	var sum uint64
	for i := range n {
		k := genKey(i)
		sum += entryHash(k, genValue(k))
	}
	return n, sum
}

// TestWriteReadMillion writes a million pairs in random order through
// WriteTables on Prism, checks the tables against the input (exactly the
// input, sorted, without overlap, near the target size), then counts and
// checksums every entry through a ReadTables pipeline.
func TestWriteReadMillion(t *testing.T) {
	dir := t.TempDir()
	bucket := "file://" + dir
	const target = 8 << 20
	opts := sstbeam.WriteOptions{
		BucketURL:       bucket,
		Prefix:          "tables/run1-",
		TargetTableSize: target,
		MemoryBudget:    16 << 20, // several spills per range
		Compression:     "snappy",
		BitsPerKey:      10,
		BlockSize:       4096,
		TempDir:         t.TempDir(),
	}
	start := time.Now()
	p, s := beam.NewPipelineWithRoot()
	sstbeam.WriteTables(s, generate(s, pairs), opts)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("write pipeline: %v", err)
	}
	t.Logf("write pipeline: %d pairs in %s", pairs, time.Since(start).Round(time.Millisecond))

	m, err := bulk.ReadManifest(filepath.Join(dir, "tables", "run1-"+sstbeam.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	// The manifest's names are relative to its directory, as in a bulk
	// build, so ReadManifest finds the tables in the file:// bucket.
	wantN, wantSum := expected(pairs)
	var n, sum uint64
	var prev []byte
	small := 0
	ranges := map[string]bool{}
	for i, ti := range m.Tables {
		path := ti.Path
		ranges[strings.SplitN(filepath.Base(path), "-", 3)[1]] = true
		st, err := os.Stat(path)
		if err != nil || st.Size() != ti.Size {
			t.Fatalf("table %s: %v (size %d in manifest)", path, err, ti.Size)
		}
		if ti.Size > target*11/10 {
			t.Errorf("table %s: %d bytes, above the target %d", path, ti.Size, target)
		}
		if ti.Size < target*9/10 {
			small++
		}
		if i > 0 && bytes.Compare(m.Tables[i-1].Largest, ti.Smallest) >= 0 {
			t.Fatalf("tables %d and %d overlap", i-1, i)
		}
		r, err := reader.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := r.NewIterator()
		var tn int64
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				t.Fatalf("key %x after %x", k, prev)
			}
			if !bytes.Equal(v, genValue(k)) {
				t.Fatalf("key %x: wrong value", k)
			}
			prev = append(prev[:0], k...)
			sum += entryHash(k, v)
			tn++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if tn != ti.Entries {
			t.Fatalf("table %s holds %d entries, manifest says %d", path, tn, ti.Entries)
		}
		n += uint64(tn)
	}
	if n != wantN || sum != wantSum {
		t.Fatalf("tables hold %d entries (checksum %x), want %d (%x)", n, sum, wantN, wantSum)
	}
	// At most one table per range (its last) is well below the target.
	if small > len(ranges) {
		t.Errorf("%d tables below 90%% of the target, with %d ranges", small, len(ranges))
	}
	t.Logf("%d tables in %d ranges, %d bytes", len(m.Tables), len(ranges), m.Size)

	start = time.Now()
	p, s = beam.NewPipelineWithRoot()
	kvs := sstbeam.ReadTables(s, bucket, "tables/run1-")
	hashes := beam.ParDo(s, entryHash, kvs)
	passert.Equals(s, beam.Combine(s, addHash, hashes), wantSum)
	passert.Equals(s, stats.CountElms(s, hashes), int(wantN))
	if err := ptest.Run(p); err != nil {
		t.Fatalf("read pipeline: %v", err)
	}
	t.Logf("read pipeline: %s", time.Since(start).Round(time.Millisecond))
}

// TestDuplicateFails checks that a key found twice fails the pipeline with
// an error naming it, and that no manifest is written.
func TestDuplicateFails(t *testing.T) {
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	kvs := beam.ParDo(s, &listFn{Keys: []string{"b", "a", "dup-key", "c", "dup-key"}}, beam.Impulse(s))
	sstbeam.WriteTables(s, kvs, sstbeam.WriteOptions{BucketURL: "file://" + dir, Prefix: "out/"})
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), `duplicate key "dup-key"`) {
		t.Fatalf("pipeline error %v, want one naming the duplicate key", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", sstbeam.ManifestName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("manifest written by a failed pipeline: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []sstbeam.WriteOptions{
		{},
		{BucketURL: "file:///tmp", Compression: "lz4"},
		{BucketURL: "file:///tmp", TargetTableSize: -1},
		{BucketURL: "file:///tmp", BitsPerKey: 65},
		{BucketURL: "file:///tmp", Ranges: -1},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", o)
		}
	}
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	kvs := beam.ParDo(s, &listFn{Keys: []string{"k"}}, beam.Impulse(s))
	sstbeam.WriteTables(s, kvs, sstbeam.WriteOptions{BucketURL: "file://" + dir, Compression: "lz4"})
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), `Compression "lz4"`) {
		t.Fatalf("pipeline error %v, want the bad option named", err)
	}
}

// listFn emits each of Keys with the value "v".
type listFn struct {
	Keys []string
}

func (f *listFn) ProcessElement(_ []byte, emit func([]byte, []byte)) {
	for _, k := range f.Keys {
		emit([]byte(k), []byte("v"))
	}
}

// TestEmptyInput writes no table and a manifest listing none.
func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	kvs := beam.ParDo(s, &listFn{}, beam.Impulse(s))
	sstbeam.WriteTables(s, kvs, sstbeam.WriteOptions{BucketURL: "file://" + dir, Prefix: "empty/"})
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	m, err := bulk.ReadManifest(filepath.Join(dir, "empty", sstbeam.ManifestName))
	if err != nil || len(m.Tables) != 0 || m.Entries != 0 {
		t.Fatalf("manifest %+v, %v; want one listing no table", m, err)
	}
	p, s = beam.NewPipelineWithRoot()
	passert.Empty(s, sstbeam.ReadTables(s, "file://"+dir, "empty/"))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
