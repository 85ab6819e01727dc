package lsmtable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/internal/ldbtest"
)

// TestFaultAfterClose reads a mapped block after Close, as an iterator
// whose move passed the closed check just before another goroutine's
// Close unmapped the file would: the fault is an error wrapping
// ErrClosed, not a re-raised panic.
func TestFaultAfterClose(t *testing.T) {
	var es []ldbtest.Entry
	for i := range 2000 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("k%04d", i)), Seq: uint64(10 + i), Kind: 1, Value: []byte("value-value-value")})
	}
	path := filepath.Join(t.TempDir(), "t.ldb")
	if err := os.WriteFile(path, ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 4096}), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := OpenTable(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tb.mapped == nil {
		t.Skip("the table is not mapped here")
	}
	it := tb.NewIter(nil)
	defer it.Close()
	// Twice: the first read of a raw block checks it and leaves it in
	// the mapping from then on.
	for range 2 {
		if !it.SeekGE([]byte("k1000")) {
			t.Fatal(it.Err())
		}
	}
	if !it.inMapping {
		t.Fatal("the block is not read in place")
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	// nextGuarded's body, past its closed check.
	ok, panicked := func() (ok bool, panicked any) {
		defer func() { panicked = recover() }()
		return func() (ok bool) {
			defer restoreFault(protect())
			defer it.recover(&ok)
			return it.forward(it.blk.Next())
		}(), nil
	}()
	if panicked != nil || ok || !errors.Is(it.Err(), ErrClosed) {
		t.Errorf("a read of the unmapped block: ok %v, Err %v, panic %v; want false and ErrClosed", ok, it.Err(), panicked)
	}
}
