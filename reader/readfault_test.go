package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/faultio"
	"github.com/sstkit/sstable/reader"
)

// faultsSeen counts the failed calls checkFaultErr sees.
var faultsSeen atomic.Int64

// faultTable returns a table of n entries of a few hundred data blocks.
func faultTable(t testing.TB, n int, c format.Compression, tv tableVersion) ([]byte, []entry) {
	t.Helper()
	es := numbered(n, func(i int) string { return fmt.Sprintf("value %d %x", i, i*7919) })
	data, _ := build(t, es, &builder.Options{BlockSize: 256, Compression: c, HashIndex: tv.hash, FormatVersion: tv.fv})
	return data, es
}

// faultOptions are the reader configurations run under faults: the
// default cache with a 16 KiB tail (the fault tables are smaller than the
// default tail, which would leave nothing to read after New), whose data
// blocks or partitions the reader keeps; a cache too small for anything;
// one that evicts; a tail of the footer alone.
func faultOptions(t *testing.T) map[string]func() *reader.Options {
	return map[string]func() *reader.Options{
		"tail16KiB":  func() *reader.Options { return &reader.Options{TailSize: 16 << 10} },
		"cache0":     func() *reader.Options { return cacheOpts(t, 0) },
		"cache16KiB": func() *reader.Options { return cacheOpts(t, 16<<10) },
		"tail64":     func() *reader.Options { return &reader.Options{TailSize: 64} },
	}
}

// TestReadFaults runs lookups and scans from several goroutines through a
// source that fails at random in every way a remote store can: every call
// must give the right answer or an error that is not corruption, and once
// the faults stop, every call must succeed (no failure is remembered). A
// permanent EIO fails what must be read, and nothing else.
func TestReadFaults(t *testing.T) {
	for _, v := range tableVersions {
		for _, c := range []format.Compression{format.NoCompression, format.SnappyCompression} {
			data, es := faultTable(t, 1500, c, v)
			for name, opts := range faultOptions(t) {
				t.Run(fmt.Sprintf("%s/%s/%s", v.name, c, name), func(t *testing.T) {
					testReadFaults(t, data, es, opts)
				})
			}
		}
	}
}

// checkFaultErr fails the test if err, from a call made under injected
// faults, is not an error the faults can cause.
func checkFaultErr(t *testing.T, what string, err error) {
	t.Helper()
	faultsSeen.Add(1)
	if errors.Is(err, format.ErrCorrupt) || errors.Is(err, reader.ErrNotFound) {
		t.Errorf("%s under read faults: %v, want an I/O error", what, err)
		return
	}
	if !errors.Is(err, faultio.ErrTransient) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.ErrNoProgress) && !errors.Is(err, syscall.EIO) {
		t.Errorf("%s under read faults: %v, not an injected error", what, err)
	}
}

func testReadFaults(t *testing.T, data []byte, es []entry, opts func() *reader.Options) {
	src := faultio.NewFaulty(bytes.NewReader(data), uint64(len(data)))
	src.Short, src.EarlyEOF, src.Transient, src.Delay = 0.1, 0.1, 0.1, 20*time.Microsecond
	var r *reader.Reader
	for try := 0; r == nil; try++ {
		var err error
		if r, err = reader.New(src, int64(len(data)), opts()); err != nil {
			checkFaultErr(t, "New", err)
		}
		if try > 200 {
			t.Fatal("New failed 200 times in a row")
		}
	}
	defer r.Close()

	// check runs lookups of present and absent keys and a scan from
	// several goroutines; under faults, calls may fail but not lie.
	check := func(faults bool) {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < len(es); i += 37 {
					e := es[i]
					v, err := r.Get([]byte(e.Key))
					switch {
					case err == nil && string(v) != e.Value:
						t.Errorf("Get(%q) = %q, want %q", e.Key, v, e.Value)
					case err != nil && faults:
						checkFaultErr(t, "Get", err)
					case err != nil:
						t.Errorf("Get(%q) with faults off: %v", e.Key, err)
					}
					if !r.MayContain([]byte(e.Key)) {
						t.Errorf("MayContain(%q) = false", e.Key)
					}
					absent := e.Key + "x"
					if v, err := r.Get([]byte(absent)); err == nil {
						t.Errorf("Get(%q) of an absent key = %q", absent, v)
					} else if !errors.Is(err, reader.ErrNotFound) {
						if faults {
							checkFaultErr(t, "Get of an absent key", err)
						} else {
							t.Errorf("Get(%q) of an absent key with faults off: %v", absent, err)
						}
					}
				}
				got, err := scan(r)
				for i := range got {
					if i >= len(es) || got[i] != es[i] {
						t.Errorf("scan entry %d = %v, want %v", i, got[i], es[min(i, len(es)-1)])
						break
					}
				}
				if err != nil && faults {
					checkFaultErr(t, "scan", err)
				} else if err != nil || len(got) != len(es) {
					t.Errorf("scan with faults off: %d of %d entries, %v", len(got), len(es), err)
				}
			}()
		}
		wg.Wait()
	}
	before := faultsSeen.Load()
	for range 3 {
		check(true)
	}
	if faultsSeen.Load() == before {
		t.Fatal("no call failed under faults: the test injects none")
	}
	src.Quiet()
	check(false)
	if err := r.Verify(); err != nil {
		t.Fatalf("Verify once faults stopped: %v", err)
	}

	// A permanent failure: whatever must be read fails with EIO.
	src.Break(true)
	for _, e := range es[:50] {
		if v, err := r.Get([]byte(e.Key)); err != nil {
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("Get(%q) from a broken source: %v, want EIO", e.Key, err)
			}
		} else if string(v) != e.Value {
			t.Fatalf("Get(%q) from a broken source = %q, want %q", e.Key, v, e.Value)
		}
	}
	src.Break(false)
	check(false)
}
