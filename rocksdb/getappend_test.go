package rocksdb_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// TestGetAppend checks GetAppend against Get on every golden table RocksDB
// 7.8.3 wrote, at every version of every key and at MaxSequence: the
// same kind, sequence number, value and error, the value appended after
// dst's bytes, and for an absent key reader.ErrNotFound. With dst reused,
// a GetAppend of a present key allocates nothing.
func TestGetAppend(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "oracle-7.8.3")
	names, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no golden tables in %s: %v", dir, err)
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".sst"), func(t *testing.T) {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := rocksdb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			type probe struct {
				key []byte
				seq uint64
			}
			var probes []probe
			it := tab.NewIter(nil)
			for ok := it.First(); ok; ok = it.Next() {
				k := bytes.Clone(it.Key())
				probes = append(probes, probe{k, it.Seq()}, probe{k, rocksdb.MaxSequence}, probe{append(bytes.Clone(k), 0), rocksdb.MaxSequence})
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			probes = append(probes, probe{nil, rocksdb.MaxSequence}, probe{[]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff"), rocksdb.MaxSequence})
			prefix := []byte("dst:")
			var present []byte
			for _, p := range probes {
				want, werr := tab.Get(p.key, p.seq)
				got, gerr := tab.GetAppend(bytes.Clone(prefix), p.key, p.seq)
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Fatalf("key %q @%d: Get's error %v, GetAppend's %v", p.key, p.seq, werr, gerr)
				}
				if errors.Is(werr, reader.ErrNotFound) {
					continue
				}
				var u *rocksdb.UnresolvedError
				if werr != nil && !errors.As(werr, &u) {
					t.Fatalf("key %q @%d: %v", p.key, p.seq, werr)
				}
				if got.Seq != want.Seq || got.Kind != want.Kind || !bytes.Equal(got.Key, want.Key) ||
					!bytes.HasPrefix(got.Value, prefix) || !bytes.Equal(got.Value[len(prefix):], want.Value) {
					t.Fatalf("key %q @%d: GetAppend gave %q @%d %v %q, Get %q @%d %v %q", p.key, p.seq,
						got.Key, got.Seq, got.Kind, got.Value, want.Key, want.Seq, want.Kind, want.Value)
				}
				if werr == nil && present == nil {
					present = p.key
				}
			}
			if present == nil || raceEnabled {
				return
			}
			var dst []byte
			if allocs := testing.AllocsPerRun(100, func() {
				e, err := tab.GetAppend(dst[:0], present, rocksdb.MaxSequence)
				if err != nil {
					t.Fatal(err)
				}
				dst = e.Value
			}); allocs != 0 {
				t.Errorf("GetAppend of a present key with dst reused: %v allocations, want 0", allocs)
			}
		})
	}
}
