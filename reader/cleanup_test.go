package reader_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// mappingsOf counts the lines of /proc/self/maps that map path: the
// mappings of the file this process holds.
func mappingsOf(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasSuffix(line, " "+path) || strings.HasSuffix(line, " "+path+" (deleted)") {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// descriptorsOf counts this process's open file descriptors on path.
func descriptorsOf(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// collectUntil runs the collector, and waits for the cleanups it queues,
// until done reports true or about 5 seconds have passed; it returns
// done's last answer.
func collectUntil(done func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// collect runs the collector a few rounds, letting the cleanups it queues
// run.
func collect() {
	for range 5 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// cleanupTable is a compressed version 4 table of 20,000 entries, with
// spans, so that a reader holds every kind of resource: the mapping or
// the file, cached blocks, the charges of its state and a filter copy.
func cleanupTable(t *testing.T) ([]byte, []entry) {
	es := numbered(20000, func(i int) string { return fmt.Sprintf("value %d", i) })
	var buf bytes.Buffer
	b := builder.New(&buf, &builder.Options{Compression: format.ZstdCompression})
	for _, e := range es {
		if err := b.Add([]byte(e.Key), []byte(e.Value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddSpan([]byte("a"), []byte("b"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), es
}

// useReader opens path (or, with path "", data through reader.New) and
// reads through the reader as a program would, then drops it without
// Close; with keep, it returns an open iterator instead, which refers to
// the reader. Separate, so that no variable of the test refers to the
// reader.
//
//go:noinline
func useReader(t *testing.T, path string, data []byte, opts *reader.Options, es []entry, keep bool) *reader.Iterator {
	var r *reader.Reader
	var err error
	if path != "" {
		r, err = reader.Open(path, opts)
	} else {
		r, err = reader.New(bytes.NewReader(data), int64(len(data)), opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(es); i += 101 {
		if v, err := r.Get([]byte(es[i].Key)); err != nil || string(v) != es[i].Value {
			t.Fatalf("Get(%q) = %q, %v", es[i].Key, v, err)
		}
	}
	if _, err := r.SpanAt([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if !keep {
		return nil
	}
	it := r.NewIterator()
	if !it.First() {
		t.Fatalf("First: %v", it.Err())
	}
	return it
}

// TestUnreachableReaderCleanedUp: a Reader dropped without Close releases
// what it holds once it is unreachable (runtime.AddCleanup): a mapped
// reader its mapping (the file's lines of /proc/self/maps), one with
// NoMmap the file Open opened (its descriptors in /proc/self/fd), and
// every reader its cache charges and blocks (the cache's Held and Size
// back to 0, and the cache closes, which it refuses while a reader uses
// it). A reader an open Iterator refers to is not cleaned up, however
// many collections run: its mapping stays and the iterator reads on;
// once the iterator is closed and dropped, the reader is cleaned up, and
// so it is once an iterator dropped unclosed is unreachable, whether the
// reader was closed or not. A reader closed by Close is not freed twice,
// and one kept reachable keeps its mapping.
func TestUnreachableReaderCleanedUp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts mappings and descriptors in /proc/self")
	}
	data, es := cleanupTable(t)
	path, err := filepath.EvalSymlinks(writeFile(t, t.TempDir(), data)) // as /proc/self names it
	if err != nil {
		t.Fatal(err)
	}
	if n := mappingsOf(t, path); n != 0 {
		t.Fatalf("%s mapped %d times before the test", path, n)
	}
	held := func(opts *reader.Options) func() bool {
		return func() bool { st := opts.Cache.Stats(); return st.Held == 0 && st.Size == 0 }
	}

	t.Run("mapped", func(t *testing.T) {
		opts := cacheOpts(t, 64<<20)
		useReader(t, path, data, opts, es, false)
		if !collectUntil(func() bool { return mappingsOf(t, path) == 0 && held(opts)() }) {
			t.Fatalf("after the reader became unreachable: %d mappings of the file, cache %+v", mappingsOf(t, path), opts.Cache.Stats())
		}
	})

	t.Run("file", func(t *testing.T) {
		opts := cacheOpts(t, 64<<20)
		opts.NoMmap = true
		useReader(t, path, data, opts, es, false)
		if !collectUntil(func() bool { return descriptorsOf(t, path) == 0 && held(opts)() }) {
			t.Fatalf("after the reader became unreachable: %d descriptors of the file, cache %+v", descriptorsOf(t, path), opts.Cache.Stats())
		}
	})

	t.Run("New", func(t *testing.T) {
		opts := cacheOpts(t, 64<<20)
		useReader(t, "", data, opts, es, false)
		if !collectUntil(held(opts)) {
			t.Fatalf("after the reader became unreachable: cache %+v", opts.Cache.Stats())
		}
	})

	t.Run("kept by an iterator", func(t *testing.T) {
		opts := cacheOpts(t, 64<<20)
		it := useReader(t, path, data, opts, es, true)
		collect()
		if n := mappingsOf(t, path); n == 0 {
			t.Fatal("the reader of an open iterator was cleaned up: its file is not mapped")
		}
		n := 1
		for it.Next() {
			if want := es[n]; string(it.Key()) != want.Key || string(it.Value()) != want.Value {
				t.Fatalf("entry %d: %q = %q, want %q = %q", n, it.Key(), it.Value(), want.Key, want.Value)
			}
			n++
			if n%5000 == 0 {
				collect() // the iterator's reader stays, mid-scan
			}
		}
		if err := it.Err(); err != nil || n != len(es) {
			t.Fatalf("scan after the collections: %d entries, %v", n, err)
		}
		if st := opts.Cache.Stats(); st.Held == 0 || mappingsOf(t, path) == 0 {
			t.Fatalf("the reader of an open iterator gave its mapping or charges back: cache %+v", st)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		it = nil // the reader, never closed, is now unreachable
		if !collectUntil(func() bool { return mappingsOf(t, path) == 0 && held(opts)() }) {
			t.Fatalf("after the iterator and its reader became unreachable: %d mappings, cache %+v", mappingsOf(t, path), opts.Cache.Stats())
		}
	})

	// An iterator dropped unclosed keeps its own pins of cached blocks
	// (the cache cannot be closed then: its blocks are pinned, so these
	// caches are not checked at the test's end), but its reader, closed
	// or not, is cleaned up once both are unreachable: its mapping and
	// its charges are released.
	t.Run("iterator dropped unclosed", func(t *testing.T) {
		opts := &reader.Options{Cache: newCache(t, 64<<20)}
		it := useReader(t, path, data, opts, es, true)
		if !it.Next() {
			t.Fatal(it.Err())
		}
		it = nil
		if !collectUntil(func() bool { return mappingsOf(t, path) == 0 && opts.Cache.Stats().Held == 0 }) {
			t.Fatalf("after the iterator and its reader became unreachable: %d mappings, cache %+v", mappingsOf(t, path), opts.Cache.Stats())
		}
	})

	t.Run("closed with an iterator dropped unclosed", func(t *testing.T) {
		// Close with an iterator open leaves the file mapped until the
		// iterator's Close; an iterator dropped unclosed used to keep it
		// mapped for ever.
		opts := &reader.Options{Cache: newCache(t, 64<<20)}
		r, err := reader.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		it := r.NewIterator()
		if !it.First() {
			t.Fatal(it.Err())
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		r = nil
		collect()
		if !it.Next() || mappingsOf(t, path) == 0 {
			t.Fatalf("an iterator open after Close: Next false (%v), or the file unmapped", it.Err())
		}
		it = nil
		if !collectUntil(func() bool { return mappingsOf(t, path) == 0 && opts.Cache.Stats().Held == 0 }) {
			t.Fatalf("after the iterator became unreachable: %d mappings, cache %+v", mappingsOf(t, path), opts.Cache.Stats())
		}
	})

	t.Run("closed", func(t *testing.T) {
		// Close frees and cancels the cleanup: nothing is freed twice,
		// and a reader kept reachable keeps everything.
		opts := cacheOpts(t, 64<<20)
		kept, err := reader.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r, err := reader.Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Get([]byte(es[7].Key)); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := kept.Get([]byte(es[7].Key)); err != nil {
			t.Fatal(err)
		}
		collect()
		if n := mappingsOf(t, path); n == 0 {
			t.Fatal("a reachable reader was cleaned up")
		}
		if v, err := kept.Get([]byte(es[9].Key)); err != nil || string(v) != es[9].Value {
			t.Fatalf("Get after the collections = %q, %v", v, err)
		}
		if err := kept.Close(); err != nil {
			t.Fatal(err)
		}
		if n := mappingsOf(t, path); n != 0 {
			t.Fatalf("%d mappings after Close", n)
		}
		collect()
		if st := opts.Cache.Stats(); st.Held != 0 || st.Size != 0 {
			t.Fatalf("after Close and the collections: cache %+v", st)
		}
	})
}
