package lsmtable

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/ldbtest"
)

// aheadTable writes a table of n entries in blocks of about 256 bytes
// (snappy) and returns its entries and bytes.
func aheadTable(n int) ([]ldbtest.Entry, []byte) {
	es := make([]ldbtest.Entry, n)
	for i := range es {
		v := bytes.Repeat([]byte{byte(i)}, 20+i%50)
		es[i] = ldbtest.Entry{Key: []byte(fmt.Sprintf("key%06d", i)), Seq: uint64(i + 1), Kind: 1, Value: v}
	}
	return es, ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 256, Snappy: true, RestartInterval: 4})
}

// scanAll scans tb forward and returns what it read and the error. It
// pauses 20 µs at each block, as a scan whose caller does work on each
// entry would, so that the worker keeps ahead of it.
func scanAll(tb *Table) (keys, values [][]byte, ra *readAhead, err error) {
	it := tb.NewIter(nil)
	block := -1
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
		values = append(values, bytes.Clone(it.Value()))
		if it.i != block {
			block = it.i
			for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
			}
		}
	}
	ra = it.ahead
	return keys, values, ra, it.Close()
}

// openAhead opens data, mapped from a file of its own in dir (the same
// file for the same bytes), or over ReaderAt.
func openAhead(t *testing.T, dir string, data []byte, mapped bool) *Table {
	t.Helper()
	var tb *Table
	var err error
	if mapped {
		path := filepath.Join(dir, fmt.Sprintf("%08x.ldb", crc32.ChecksumIEEE(data)))
		if _, err := os.Stat(path); err != nil {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tb, err = OpenTable(path, nil)
	} else {
		tb, err = NewTable(bytes.NewReader(data), int64(len(data)), &TableOptions{Name: "t.ldb"})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// TestReadAheadScan checks that a forward scan read through the
// read-ahead worker returns every entry, and that the worker decoded a
// good part of its blocks for it, mapped and over ReaderAt; with
// GOMAXPROCS 1 it does not start and the scan reads the same.
func TestReadAheadScan(t *testing.T) {
	es, data := aheadTable(3000)
	dir := t.TempDir()
	for _, mapped := range []bool{true, false} {
		tb := openAhead(t, dir, data, mapped)
		if tb.Index.Len() < 4*aheadSlots {
			t.Fatalf("%d data blocks: too few to test the read-ahead", tb.Index.Len())
		}
		// The worker runs when the scheduler gives it a CPU: on a loaded
		// machine a scan may outrun it, so a few scans are allowed.
		var keys, values [][]byte
		var ra *readAhead
		var err error
		for try := 0; try < 5; try++ {
			if keys, values, ra, err = scanAll(tb); err != nil {
				t.Fatal(err)
			}
			if ra != nil && ra.taken >= tb.Index.Len()/4 {
				break
			}
		}
		if len(keys) != len(es) {
			t.Fatalf("mapped %v: %d entries, want %d", mapped, len(keys), len(es))
		}
		for i, e := range es {
			if !bytes.Equal(keys[i], e.Key) || !bytes.Equal(values[i], e.Value) {
				t.Fatalf("mapped %v: entry %d = %q %x, want %q %x", mapped, i, keys[i], values[i], e.Key, e.Value)
			}
		}
		if runtime.GOMAXPROCS(0) > 1 && (ra == nil || ra.taken < tb.Index.Len()/4) {
			t.Fatalf("mapped %v: the scan took too few of its %d blocks from the read-ahead (%d)", mapped, tb.Index.Len(), ra.taken)
		}
		if ra != nil && ra.active.Load() {
			t.Fatalf("mapped %v: a worker still runs after Close", mapped)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	keys, _, ra, err := scanAll(openAhead(t, dir, data, true))
	if err != nil || len(keys) != len(es) || ra != nil {
		t.Fatalf("GOMAXPROCS 1: %d entries, %v, read-ahead %v", len(keys), err, ra)
	}
}

// TestReadAheadCorrupt checks that a damaged block ahead of a scan gives
// the error, and the entries before it, that a scan reading every block
// itself gives.
func TestReadAheadCorrupt(t *testing.T) {
	dir := t.TempDir()
	_, data := aheadTable(3000)
	tb := openAhead(t, dir, data, false)
	h := tb.Index.handles[tb.Index.Len()/2]
	bad := bytes.Clone(data)
	bad[h.Offset+h.Length/2] ^= 0x40
	for _, mapped := range []bool{true, false} {
		keys, _, ra, err := scanAll(openAhead(t, dir, bad, mapped))
		if !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("mapped %v: scan error %v, want a corruption", mapped, err)
		}
		if runtime.GOMAXPROCS(0) > 1 && ra == nil {
			t.Fatalf("mapped %v: the read-ahead did not start", mapped)
		}
		prev := runtime.GOMAXPROCS(1)
		keys1, _, _, err1 := scanAll(openAhead(t, dir, bad, mapped))
		runtime.GOMAXPROCS(prev)
		if err.Error() != err1.Error() || len(keys) != len(keys1) {
			t.Fatalf("mapped %v: %d entries then %v; reading every block itself: %d then %v", mapped, len(keys), err, len(keys1), err1)
		}
	}
}

// TestReadAheadAbandoned checks that a scan left without Close leaves no
// worker running, and that Close in the middle of a scan stops it.
func TestReadAheadAbandoned(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("no read-ahead with GOMAXPROCS 1")
	}
	_, data := aheadTable(3000)
	tb := openAhead(t, t.TempDir(), data, true)
	it := tb.NewIter(nil)
	for ok, n := it.First(), 0; ok && n < 200; ok, n = it.Next(), n+1 {
	}
	ra := it.ahead
	if ra == nil {
		t.Fatal("the read-ahead did not start")
	}
	deadline := time.Now().Add(10 * time.Second)
	for ra.active.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the worker of an abandoned scan still runs after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got := ra.next.Load(); got > int64(it.i+aheadSlots) {
		t.Fatalf("the worker decoded up to block %d, past the scan's block %d and %d slots", got, it.i, aheadSlots)
	}
	it.Next()
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if ra.active.Load() {
		t.Fatal("a worker runs after Close")
	}
}
