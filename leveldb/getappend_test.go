package leveldb_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// TestGetAppend checks GetAppend against Get over the golden database's
// tables, at every version of every key and at MaxSequence, and for keys
// between them: the same kind, sequence number and value (appended after
// dst's bytes), the same errors.
func TestGetAppend(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "golden", "snappy", "*.ldb"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no golden tables: %v", err)
	}
	prefix := []byte("dst:")
	for _, name := range names {
		tab, err := leveldb.OpenTable(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := tab.NewIter(nil)
		checked := 0
		for ok := it.First(); ok; ok = it.Next() {
			k := bytes.Clone(it.Key())
			for _, p := range []struct {
				key []byte
				seq uint64
			}{{k, it.Seq()}, {k, leveldb.MaxSequence}, {append(bytes.Clone(k), 0), leveldb.MaxSequence}} {
				want, werr := tab.Get(p.key, p.seq)
				got, gerr := tab.GetAppend(bytes.Clone(prefix), p.key, p.seq)
				if (werr == nil) != (gerr == nil) || werr != nil && !errors.Is(gerr, reader.ErrNotFound) {
					t.Fatalf("%s: key %q @%d: Get's error %v, GetAppend's %v", name, p.key, p.seq, werr, gerr)
				}
				if werr != nil {
					continue
				}
				if got.Seq != want.Seq || got.Kind != want.Kind || !bytes.Equal(got.Key, want.Key) ||
					!bytes.HasPrefix(got.Value, prefix) || !bytes.Equal(got.Value[len(prefix):], want.Value) {
					t.Fatalf("%s: key %q @%d: GetAppend gave %q @%d %v %q, Get %q @%d %v %q", name, p.key, p.seq,
						got.Key, got.Seq, got.Kind, got.Value, want.Key, want.Seq, want.Kind, want.Value)
				}
				checked++
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if checked == 0 {
			t.Fatalf("%s: no entry found by Get", name)
		}
		if err := tab.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
