package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// The corruption sweeps below damage the committed golden tables in every
// possible single-bit way and at every possible length, and require each
// damaged copy to be reported as corrupt without a panic and without a
// single wrong answer.

const sweepGoldenDir = "../testdata/golden"

var sweepGoldenFiles = []string{"snappy.sst", "none.sst", "empty.sst", "zstd.sst", "fuse.sst",
	// Version 4: one-level (snappy, none), empty, partitioned, with a
	// splitter.
	"v4.sst", "v4none.sst", "v4empty.sst", "v4parted.sst", "v4prefix.sst",
	// Version 4 with MinLZ blocks, and with a zstd dictionary.
	"minlz.sst", "zstddict.sst"}

// sweepOpts open the golden tables with the binary fuse filter known (the
// reader does not know it by default), so that fuse.sst's damaged copies
// are probed through its filter.
var sweepOpts = &reader.Options{Filters: []filterblock.Policy{filterblock.BinaryFuse8()}}

// goldenTable is a golden table with the answers the undamaged table gives.
type goldenTable struct {
	name    string
	data    []byte
	keys    [][]byte // every key, in order
	values  [][]byte // values[i] is the value of keys[i]
	absent  [][]byte // keys the table does not hold: Get gives ErrNotFound
	entries int

	spans      []reader.Span // the span fragments, copied (Version5)
	spanProbes [][]byte      // keys SpanAt is asked for: each fragment's bounds and the keys around them
}

// spanEqual reports whether a and b have the same bounds and values.
func spanEqual(a, b reader.Span) bool {
	return bytes.Equal(a.Start, b.Start) && bytes.Equal(a.End, b.End) && slices.EqualFunc(a.Values, b.Values, bytes.Equal)
}

// spanAt returns the index of the fragment of g covering key, or -1.
func (g *goldenTable) spanAt(key []byte) int {
	for i, s := range g.spans {
		if bytes.Compare(s.Start, key) <= 0 && bytes.Compare(key, s.End) < 0 {
			return i
		}
	}
	return -1
}

// loadGoldenTables reads the golden tables and records what the undamaged
// tables answer: a full scan, and ErrNotFound for a few absent keys.
func loadGoldenTables(t *testing.T) []*goldenTable {
	t.Helper()
	var out []*goldenTable
	for _, name := range sweepGoldenFiles {
		data, err := os.ReadFile(filepath.Join(sweepGoldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, newGoldenTable(t, name, data))
	}
	if len(out[0].keys) == 0 || len(out[1].keys) == 0 || len(out[2].keys) != 0 {
		t.Fatalf("golden tables hold %d, %d and %d entries; want two non-empty tables and an empty one",
			len(out[0].keys), len(out[1].keys), len(out[2].keys))
	}
	return out
}

// newGoldenTable records what the undamaged table data answers, for the
// sweeps: a full scan, and ErrNotFound for a few absent keys.
func newGoldenTable(t *testing.T, name string, data []byte) *goldenTable {
	t.Helper()
	g := &goldenTable{name: name, data: data}
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), sweepOpts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if p := r.Properties(); p.FilterUnknown {
		t.Fatalf("%s: filter policy %q unknown", name, p.FilterPolicy)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	it := r.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		g.keys = append(g.keys, slices.Clone(it.Key()))
		g.values = append(g.values, slices.Clone(it.Value()))
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	g.entries = len(g.keys)
	sit := r.NewSpanIterator()
	for ok := sit.First(); ok; ok = sit.Next() {
		sp := sit.Span()
		c := reader.Span{Start: slices.Clone(sp.Start), End: slices.Clone(sp.End)}
		for _, v := range sp.Values {
			c.Values = append(c.Values, slices.Clone(v))
		}
		g.spans = append(g.spans, c)
		g.spanProbes = append(g.spanProbes, c.Start, c.End, append(slices.Clone(c.Start), 0), c.End[:len(c.End)-1])
	}
	if err := sit.Close(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if uint64(len(g.spans)) != r.Properties().NumSpanFragments {
		t.Fatalf("%s: %d fragments, properties say %d", name, len(g.spans), r.Properties().NumSpanFragments)
	}
	if uint64(g.entries) != r.Properties().NumEntries {
		t.Fatalf("%s: scan gave %d entries, properties say %d", name, g.entries, r.Properties().NumEntries)
	}
	// Absent keys: just after each of some keys, and past the end.
	for i := 0; i < len(g.keys); i += 5 {
		g.absent = append(g.absent, append(slices.Clone(g.keys[i]), 0))
	}
	g.absent = append(g.absent, []byte("\xff\xff\xff"), []byte("m"))
	for i, k := range g.keys {
		v, err := r.Get(k)
		if err != nil || !bytes.Equal(v, g.values[i]) {
			t.Fatalf("%s: Get(%q) = %q, %v; the scan gave %q", name, k, v, err, g.values[i])
		}
	}
	for _, k := range g.absent {
		if _, err := r.Get(k); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("%s: Get(%q) of an absent key: %v", name, k, err)
		}
	}
	return g
}

// damageResult says how a damaged copy of a table was handled.
type damageResult struct {
	openErr   bool   // Open (or New) returned ErrCorrupt
	verifyErr bool   // Verify returned ErrCorrupt
	readErr   bool   // a scan or a Get returned ErrCorrupt
	problem   string // a wrong answer, a wrong kind of error or a panic
}

func (d damageResult) detected() bool { return d.openErr || d.verifyErr || d.readErr }

// checker runs the reads of the sweeps over damaged copies of one golden
// table, reusing its buffers.
type checker struct {
	g   *goldenTable
	val []byte
}

// check opens a damaged copy with open and runs Verify, a forward scan, a
// backward scan, MayContain and Get of every key, and Get of the absent
// keys. Each must fail with an error wrapping format.ErrCorrupt or give
// exactly the undamaged table's answer. Verify runs first, or with
// verifyLast after the reads, so that both orders of loading the lazily
// checked sections are exercised.
func (c *checker) check(open func() (*reader.Reader, error), verifyLast bool) (res damageResult) {
	defer func() {
		if v := recover(); v != nil {
			res.problem = fmt.Sprintf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	// corrupt classifies the error of op (on key, if not nil): true for
	// ErrCorrupt; any other error is a problem.
	corrupt := func(op string, key []byte, err error) bool {
		if errors.Is(err, format.ErrCorrupt) {
			return true
		}
		if res.problem == "" {
			if key != nil {
				op = fmt.Sprintf("%s(%q)", op, key)
			}
			res.problem = fmt.Sprintf("%s: error %v (%T) does not wrap format.ErrCorrupt", op, err, err)
		}
		return false
	}
	fail := func(format string, args ...any) {
		if res.problem == "" {
			res.problem = fmt.Sprintf(format, args...)
		}
	}
	r, err := open()
	if err != nil {
		res.openErr = corrupt("Open", nil, err)
		return res
	}
	defer r.Close()
	verify := func() {
		if err := r.Verify(); err != nil {
			res.verifyErr = corrupt("Verify", nil, err)
		}
	}
	if !verifyLast {
		verify()
	}
	g := c.g

	// A forward scan must give a prefix of the entries, all of them
	// unless it reports corruption.
	it := r.NewIterator()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n >= len(g.keys) || !bytes.Equal(it.Key(), g.keys[n]) || !bytes.Equal(it.Value(), g.values[n]) {
			fail("forward scan: entry %d is %q=%q, not the table's", n, it.Key(), it.Value())
			break
		}
		n++
	}
	if err := it.Close(); err != nil {
		res.readErr = corrupt("forward scan", nil, err) || res.readErr
	} else if n != len(g.keys) && res.problem == "" {
		fail("forward scan ended after %d of %d entries without an error", n, len(g.keys))
	}

	// A backward scan must give a suffix.
	it = r.NewIterator()
	n = 0
	for ok := it.Last(); ok; ok = it.Prev() {
		i := len(g.keys) - 1 - n
		if i < 0 || !bytes.Equal(it.Key(), g.keys[i]) || !bytes.Equal(it.Value(), g.values[i]) {
			fail("backward scan: entry %d from the end is %q=%q, not the table's", n, it.Key(), it.Value())
			break
		}
		n++
	}
	if err := it.Close(); err != nil {
		res.readErr = corrupt("backward scan", nil, err) || res.readErr
	} else if n != len(g.keys) && res.problem == "" {
		fail("backward scan ended after %d of %d entries without an error", n, len(g.keys))
	}

	for i, k := range g.keys {
		if !r.MayContain(k) {
			fail("MayContain(%q) = false for a key in the table", k)
		}
		v, err := r.GetAppend(c.val[:0], k)
		switch {
		case err != nil:
			// ErrNotFound is wrong too: the key is in the table.
			res.readErr = corrupt("Get", k, err) || res.readErr
		case !bytes.Equal(v, g.values[i]):
			fail("Get(%q) = %q, want %q", k, v, g.values[i])
		}
		c.val = v[:0]
	}
	for _, k := range g.absent {
		v, err := r.GetAppend(c.val[:0], k)
		switch {
		case err == nil:
			fail("Get(%q) of an absent key = %q", k, v)
		case errors.Is(err, reader.ErrNotFound):
		default:
			res.readErr = corrupt("Get", k, err) || res.readErr
		}
	}
	// Spans: SpanAt gives the undamaged table's fragment, ErrNotFound
	// where it has none, or an error wrapping ErrCorrupt; a scan of the
	// fragments gives a prefix of them, all unless it reports corruption.
	for _, k := range g.spanProbes {
		sp, err := r.SpanAt(k)
		want := g.spanAt(k)
		switch {
		case err == nil && want < 0:
			fail("SpanAt(%q) = %q where the table has no span", k, sp)
		case err == nil && !spanEqual(sp, g.spans[want]):
			fail("SpanAt(%q) = %q, want %q", k, sp, g.spans[want])
		case errors.Is(err, reader.ErrNotFound) && want >= 0:
			fail("SpanAt(%q): ErrNotFound, want %q", k, g.spans[want])
		case err != nil && !errors.Is(err, reader.ErrNotFound):
			res.readErr = corrupt("SpanAt", k, err) || res.readErr
		}
	}
	if len(g.spans) > 0 {
		sit := r.NewSpanIterator()
		n := 0
		for ok := sit.First(); ok; ok = sit.Next() {
			if n >= len(g.spans) || !spanEqual(sit.Span(), g.spans[n]) {
				fail("span scan: fragment %d is %q, not the table's", n, sit.Span())
				break
			}
			n++
		}
		if err := sit.Close(); err != nil {
			res.readErr = corrupt("span scan", nil, err) || res.readErr
		} else if n != len(g.spans) {
			fail("span scan ended after %d of %d fragments without an error", n, len(g.spans))
		}
	}
	if verifyLast {
		verify()
	}
	return res
}

// sweepStats counts the outcomes of a sweep.
type sweepStats struct {
	tried, detected, byOpen, byVerify, byReadsOnly, undetected, mapped int
}

func (s *sweepStats) add(o sweepStats) {
	s.tried += o.tried
	s.detected += o.detected
	s.byOpen += o.byOpen
	s.byVerify += o.byVerify
	s.byReadsOnly += o.byReadsOnly
	s.undetected += o.undetected
	s.mapped += o.mapped
}

func (s *sweepStats) count(res damageResult) {
	s.tried++
	switch {
	case res.openErr:
		s.byOpen++
	case res.verifyErr:
		s.byVerify++
	case res.readErr:
		s.byReadsOnly++
	}
	if res.detected() {
		s.detected++
	} else {
		s.undetected++
	}
}

// problems collects sweep failures from several goroutines, up to a limit.
type problems struct {
	mu   sync.Mutex
	msgs []string
	n    int
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if len(p.msgs) < 20 {
		p.msgs = append(p.msgs, fmt.Sprintf(format, args...))
	}
}

func (p *problems) report(t *testing.T) {
	for _, m := range p.msgs {
		t.Error(m)
	}
	if p.n > len(p.msgs) {
		t.Errorf("... and %d more", p.n-len(p.msgs))
	}
}

// sweepStride returns 1 (every flip) with SSTABLE_LONG_TESTS=1, as CI
// sets, where the full sweep takes 8-17 s; otherwise a sampling stride
// that keeps a plain go test ./... short, larger under the race detector,
// which slows the reads about thirtyfold.
// Strides are odd, so the sampled flips (every stride-th) still cover
// every bit position.
func sweepStride() int {
	switch {
	case raceEnabled:
		return 89
	case testing.Short() || os.Getenv("SSTABLE_LONG_TESTS") == "":
		return 29
	}
	return 1
}

// TestGoldenBitFlipSweep flips every bit of every golden table in turn.
// Every byte of a table is covered by a CRC-32C (block trailers, footer
// checksum) or is the magic number, and CRC-32C detects every single-bit
// error, so every flip must be reported as corruption: by Open, else by
// Verify. No read may panic or return a wrong answer. Flips go through
// reader.New over a bytes.Reader; every 97th also through reader.Open of a
// file, which memory-maps it.
//
// Result when written: every flip of all five tables (78840, 80472, 1752,
// 69112 and 81064 flips for snappy, none, empty, zstd and fuse) is
// detected, by Open for the footer and properties block, by Verify
// elsewhere; none is caught only by a read, none is missed.
// Undetected flips would therefore be failures, not statistics.
func TestGoldenBitFlipSweep(t *testing.T) {
	tables := loadGoldenTables(t)
	// Each flip allocates a few small objects; a larger GC target saves
	// about a tenth of the run time on the tiny heap.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	dir := t.TempDir()
	start := time.Now()
	for _, g := range tables {
		stride := sweepStride()
		if g.name == "minlz.sst" || g.name == "zstddict.sst" {
			// Newer codecs, swept at every third bit in CI (every 49th
			// under plain go test) to keep the run short; their blocks
			// are covered by the same CRCs as the others'.
			if stride == 1 {
				stride = 3
			} else {
				stride *= 7
			}
		}
		t.Run(g.name, func(t *testing.T) { bitFlipSweep(t, g, stride, sweepOpts, dir) })
	}
	t.Logf("bit-flip sweep of %d golden tables: %v", len(tables), time.Since(start).Round(time.Millisecond))
}

// bitFlipSweep flips every stride-th bit of g's table in turn (every bit
// with stride 1) and checks each damaged copy: Open or Verify must report
// corruption, and no read may panic or give a wrong answer. Flips go
// through reader.New over a bytes.Reader with opts; every 97th also
// through reader.Open of a file in dir, which memory-maps it. It returns
// the counts.
func bitFlipSweep(t *testing.T, g *goldenTable, stride int, opts *reader.Options, dir string) sweepStats {
	return bitFlipSweepMapped(t, g, stride, opts, dir, 97)
}

// bitFlipSweepMapped is bitFlipSweep with the flips whose number is a
// multiple of mapEvery also read through reader.Open (every flip tried,
// with mapEvery 1): for tables whose mapped reads take another path than
// reads over a ReaderAt (a partitioned table's hash index).
func bitFlipSweepMapped(t *testing.T, g *goldenTable, stride int, opts *reader.Options, dir string, mapEvery int) sweepStats {
	return bitFlipSweepRange(t, g, stride, opts, dir, mapEvery, 0, len(g.data))
}

// bitFlipSweepRange is bitFlipSweepMapped over the bits of the bytes
// [lo, hi) of g's table only.
func bitFlipSweepRange(t *testing.T, g *goldenTable, stride int, opts *reader.Options, dir string, mapEvery, lo, hi int) sweepStats {
	workers := runtime.GOMAXPROCS(0)
	var (
		mu    sync.Mutex
		total sweepStats
		probs problems
		wg    sync.WaitGroup
	)
	tStart := time.Now()
	flips := 8 * (hi - lo)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st sweepStats
			buf := slices.Clone(g.data)
			src := bytes.NewReader(buf)
			size := int64(len(buf))
			c := &checker{g: g}
			path := filepath.Join(dir, fmt.Sprintf("%s.%d", g.name, w))
			openMem := func() (*reader.Reader, error) { return reader.New(src, size, opts) }
			openFile := func() (*reader.Reader, error) { return reader.Open(path, opts) }
			// Flip f damages bit f%8 of byte f/8. The workers share
			// out the multiples of stride.
			for f := w * stride; f < flips; f += workers * stride {
				i, mask := lo+f/8, byte(1)<<(f%8)
				buf[i] ^= mask
				res := c.check(openMem, f%2 == 1)
				st.count(res)
				where := func() string { return fmt.Sprintf("%s: bit %d of byte %d (of %d)", g.name, f%8, i, len(buf)) }
				if res.problem != "" {
					probs.add("%s, New: %s", where(), res.problem)
				}
				if !res.openErr && !res.verifyErr {
					// Every byte is checksummed: Open or Verify must
					// have noticed.
					probs.add("%s, New: Open and Verify missed the flip (caught by reads: %v)", where(), res.readErr)
				}
				if f%mapEvery == 0 {
					st.mapped++
					if err := os.WriteFile(path, buf, 0o644); err != nil {
						probs.add("%v", err)
						return
					}
					res := c.check(openFile, f%2 == 1)
					if res.problem != "" {
						probs.add("%s, Open: %s", where(), res.problem)
					}
					if !res.openErr && !res.verifyErr {
						probs.add("%s, Open: Open and Verify missed the flip", where())
					}
				}
				buf[i] ^= mask
			}
			mu.Lock()
			total.add(st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	probs.report(t)
	if want := (flips + stride - 1) / stride; total.tried != want {
		t.Errorf("tried %d flips, want %d", total.tried, want)
	}
	t.Logf("%s (%d bytes): %d of %d flips tried (stride %d), %d detected (%d by Open, %d by Verify, %d by reads only), %d undetected; %d also through mmap; %v",
		g.name, len(g.data), total.tried, flips, stride, total.detected, total.byOpen, total.byVerify, total.byReadsOnly, total.undetected, total.mapped, time.Since(tStart).Round(time.Millisecond))
	return total
}

// TestGoldenTruncationSweep cuts each golden table to every shorter length:
// Open or Verify must report corruption, and no read may panic or give a
// wrong answer. Every length goes through reader.New, every 13th also
// through reader.Open of a file.
func TestGoldenTruncationSweep(t *testing.T) {
	tables := loadGoldenTables(t)
	dir := t.TempDir()
	for _, g := range tables {
		t.Run(g.name, func(t *testing.T) { truncationSweep(t, g, sweepOpts, dir) })
	}
}

// truncationSweep cuts g's table to every shorter length: Open or Verify
// must report corruption, and no read may panic or give a wrong answer.
// Every length goes through reader.New with opts, every 13th also through
// reader.Open of a file in dir.
func truncationSweep(t *testing.T, g *goldenTable, opts *reader.Options, dir string) {
	truncationSweepEvery(t, g, opts, dir, 1)
}

// truncationSweepEvery is truncationSweep over every every-th length
// (those cutting the footer, the last 64 bytes, all).
func truncationSweepEvery(t *testing.T, g *goldenTable, opts *reader.Options, dir string, every int) {
	var probs problems
	var st sweepStats
	c := &checker{g: g}
	path := filepath.Join(dir, g.name)
	tStart := time.Now()
	for n := 0; n < len(g.data); n++ {
		if n%every != 0 && n < len(g.data)-footer.Size {
			continue
		}
		trunc := g.data[:n:n]
		res := c.check(func() (*reader.Reader, error) {
			return reader.New(bytes.NewReader(trunc), int64(n), opts)
		}, n%2 == 1)
		st.count(res)
		if res.problem != "" {
			probs.add("%s truncated to %d bytes, New: %s", g.name, n, res.problem)
		}
		if !res.openErr && !res.verifyErr {
			probs.add("%s truncated to %d bytes, New: Open and Verify succeeded", g.name, n)
		}
		if n%13 == 0 {
			st.mapped++
			if err := os.WriteFile(path, trunc, 0o644); err != nil {
				t.Fatal(err)
			}
			res := c.check(func() (*reader.Reader, error) { return reader.Open(path, opts) }, n%2 == 1)
			if res.problem != "" {
				probs.add("%s truncated to %d bytes, Open: %s", g.name, n, res.problem)
			}
			if !res.openErr && !res.verifyErr {
				probs.add("%s truncated to %d bytes, Open: Open and Verify succeeded", g.name, n)
			}
		}
	}
	probs.report(t)
	t.Logf("%s (%d bytes): %d truncations tried, %d detected (%d by Open, %d by Verify), %d undetected; %d also through Open; %v",
		g.name, len(g.data), st.tried, st.detected, st.byOpen, st.byVerify, st.undetected, st.mapped, time.Since(tStart).Round(time.Millisecond))
}

// TestForeignFiles opens files that are not tables at all: each must be
// rejected as corrupt, with a message that says what is wrong.
func TestForeignFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(20240601, 1))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	source, err := os.ReadFile("sweep_test.go")
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for i := range 16 {
		img.Set(i, i, color.NRGBA{R: uint8(16 * i), A: 255})
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	// A file ending like a LevelDB table: its 48-byte footer (two block
	// handles, padding) ends with kTableMagicNumber as uint64 LE.
	leveldbFooter := func(magic uint64) []byte {
		b := slices.Clone(random[:1000])
		b = append(b, make([]byte, 40)...)
		return binary.LittleEndian.AppendUint64(b, magic)
	}

	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{"too small"}},
		{"one byte", []byte{0x8b}, []string{"too small"}},
		{"63 bytes", random[:footer.Size-1], []string{"too small"}},
		{"zeros 4KiB", make([]byte, 4096), []string{"bad magic number", "not an sstkit table"}},
		{"random 64KiB", random, []string{"bad magic number", "not an sstkit table"}},
		{"text (this file)", source, []string{"bad magic number", "not an sstkit table"}},
		{"PNG", pngBuf.Bytes(), []string{"bad magic number", "not an sstkit table"}},
		{"LevelDB footer", leveldbFooter(0xdb4775248b80fb57), []string{"bad magic number", "LevelDB", "not an sstkit table"}},
		{"RocksDB footer", leveldbFooter(0x88e241b785f4cff7), []string{"bad magic number", "RocksDB", "not an sstkit table"}},
	}
	if len(pngBuf.Bytes()) < footer.Size || !bytes.HasPrefix(pngBuf.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the PNG test file has %d bytes, want a PNG of at least %d", pngBuf.Len(), footer.Size)
	}
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"New", "Open"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				var r *reader.Reader
				var err error
				if how == "New" {
					r, err = reader.New(bytes.NewReader(tc.data), int64(len(tc.data)), nil)
				} else {
					r, err = reader.Open(path, nil)
				}
				if err == nil {
					r.Close()
					t.Fatalf("opened a %d-byte %s without error", len(tc.data), tc.name)
				}
				wantCorrupt(t, err, len(tc.data), tc.want...)
				if how == "Open" && !strings.Contains(err.Error(), path) {
					t.Errorf("Open error %q does not name the file", err)
				}
			})
		}
	}
}

// relayout returns a table made of orig's data section (everything before
// the filter section) followed by the given filter section contents, index
// block contents and properties, with fresh trailers and footer. The
// section sizes in p are set to match.
func relayout(orig []byte, filter, index []byte, p format.Properties) []byte {
	f, err := footer.Decode(orig[len(orig)-footer.Size:], int64(len(orig)))
	if err != nil {
		panic(err)
	}
	out := slices.Clone(orig[:f.Filter.Offset])
	f.Filter = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(filter))}
	out = codec.AppendTrailer(append(out, filter...), filter, format.BlockTypeRaw)
	f.Index = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(index))}
	out = codec.AppendTrailer(append(out, index...), index, format.BlockTypeRaw)
	p.FilterSize = f.Filter.Length + format.BlockTrailerLen
	p.IndexSize = f.Index.Length + format.BlockTrailerLen
	props := codec.AppendProperties(nil, &p)
	f.Properties = format.BlockHandle{Offset: uint64(len(out)), Length: uint64(len(props))}
	out = codec.AppendTrailer(append(out, props...), props, format.BlockTypeRaw)
	return f.Append(out)
}

// withPropertiesBlock returns orig with its properties block replaced by the
// given stored bytes and block type (checksummed) and the footer fixed up.
func withPropertiesBlock(orig, stored []byte, typ byte) []byte {
	f, err := footer.Decode(orig[len(orig)-footer.Size:], int64(len(orig)))
	if err != nil {
		panic(err)
	}
	out := slices.Clone(orig[:f.Properties.Offset])
	f.Properties.Length = uint64(len(stored))
	out = codec.AppendTrailer(append(out, stored...), stored, typ)
	return f.Append(out)
}

// TestLyingLengths rewrites parts of a golden table, with valid checksums,
// so that a length or size field claims about 1 GiB (or more). Open,
// Verify, scans and Gets must fail or answer correctly, and reading must
// not allocate anything like the claimed size.
func TestLyingLengths(t *testing.T) {
	const huge = 1 << 30
	tables := loadGoldenTables(t)
	g := tables[0] // snappy.sst
	orig := g.data
	r, err := reader.New(bytes.NewReader(orig), int64(len(orig)), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := r.Properties()
	vf := r.Footer()
	r.Close()
	filter := slices.Clone(orig[vf.Filter.Offset : vf.Filter.Offset+vf.Filter.Length])
	index := slices.Clone(orig[vf.Index.Offset : vf.Index.Offset+vf.Index.Length])
	rest := orig[:len(orig)-footer.Size]

	withFooter := func(edit func(f *footer.Footer)) []byte {
		f := vf
		edit(&f)
		return f.Append(slices.Clone(rest))
	}
	withProps := func(edit func(p *format.Properties)) []byte {
		p := props
		edit(&p)
		return relayout(orig, filter, index, p)
	}

	// The index with its first data block handle claiming huge bytes.
	var idx codec.BlockIter
	if err := idx.Init(format.SectionIndex, 0, index); err != nil {
		t.Fatal(err)
	}
	w := codec.BlockWriter{RestartInterval: 1}
	var first format.BlockHandle
	for ok := idx.First(); ok; ok = idx.Next() {
		h, _ := codec.DecodeHandle(idx.Value())
		if first.Length == 0 {
			first = h
			h.Length = huge
		}
		w.Add(idx.Key(), codec.AppendHandle(nil, h))
	}
	hugeIndex := slices.Clone(w.Finish())

	// The first data block rewritten in place, same length, as a snappy
	// block whose header claims huge decoded bytes; the rest is one
	// literal.
	lyingData := func(claim uint64) []byte {
		stored := binary.AppendUvarint(nil, claim)
		lit := int(first.Length) - len(stored) - 3
		stored = append(stored, 61<<2, byte(lit-1), byte((lit-1)>>8)) // literal of lit bytes, 2-byte length
		stored = append(stored, bytes.Repeat([]byte{'x'}, lit)...)
		out := slices.Clone(orig)
		copy(out[first.Offset:], codec.AppendTrailer(stored, stored, format.BlockTypeSnappy))
		return out
	}

	// A properties block with a smallest-key record (tag 4) claiming huge
	// bytes.
	hugeRecord := binary.AppendUvarint(nil, 1) // tag 1: format version
	hugeRecord = binary.AppendUvarint(hugeRecord, 1)
	hugeRecord = binary.AppendUvarint(hugeRecord, uint64(format.Version1)) // the golden tables are version 1
	hugeRecord = binary.AppendUvarint(hugeRecord, 4)
	hugeRecord = binary.AppendUvarint(hugeRecord, huge)
	hugeRecord = append(hugeRecord, "key"...)
	// A snappy-compressed properties block claiming huge decoded bytes.
	hugeSnappyProps := append(binary.AppendUvarint(nil, huge), 0x00, 'x')

	// The filter section naming a policy huge bytes long.
	hugeName := append(binary.AppendUvarint(nil, huge), filter[1:]...)

	limit := props
	limit.MaxBlockSize = 22*props.DataSize + 16 // the most Open accepts

	if control := relayout(orig, filter, index, props); !bytes.Equal(control, orig) {
		t.Fatal("relayout of the unchanged parts differs from the table")
	}

	tests := []lyingTable{
		{"control", relayout(orig, filter, index, props), ""},
		{"footer: index length 1 GiB", withFooter(func(f *footer.Footer) { f.Index.Length = huge }), "does not fit"},
		{"footer: index offset 1 GiB", withFooter(func(f *footer.Footer) { f.Index.Offset = huge }), "does not fit"},
		{"footer: filter length 1 GiB", withFooter(func(f *footer.Footer) { f.Filter.Length = huge }), "does not fit"},
		{"footer: filter length max", withFooter(func(f *footer.Footer) { f.Filter.Length = ^uint64(0) }), "does not fit"},
		{"footer: properties length 1 GiB", withFooter(func(f *footer.Footer) { f.Properties.Length = huge }), "does not fit"},
		{"footer: properties offset max", withFooter(func(f *footer.Footer) { f.Properties.Offset = ^uint64(0) - 4 }), "does not fit"},
		{"properties: max block size 1 GiB", withProps(func(p *format.Properties) { p.MaxBlockSize = huge }), "max block size"},
		{"properties: max block size max", withProps(func(p *format.Properties) { p.MaxBlockSize = ^uint64(0) }), "max block size"},
		{"properties: data size 1 GiB", withProps(func(p *format.Properties) { p.DataSize = huge }), "data size"},
		{"properties: record of 1 GiB", withPropertiesBlock(orig, hugeRecord, format.BlockTypeRaw), "claims"},
		{"properties: snappy block of 1 GiB", withPropertiesBlock(orig, hugeSnappyProps, format.BlockTypeSnappy), "snappy block claims"},
		{"index: data block handle 1 GiB", relayout(orig, filter, hugeIndex, props), "outside the data section"},
		{"filter: policy name 1 GiB", relayout(orig, hugeName, index, props), "policy name length"},
		{"data: snappy claims 1 GiB", lyingData(huge), "snappy block claims"},
		{"data: snappy claims 1 GiB, max block size at the limit", relayout(lyingData(huge), filter, index, limit), "snappy block claims"},
		{"data: snappy claims the max block size", lyingData(props.MaxBlockSize), "snappy: corrupt input"},
	}
	checkLyingTables(t, g, tests)
}

// hashSweepTable builds the small version 2 table (version 4 with v4) the
// hash index sweeps damage: 200 entries in about a dozen data blocks.
func hashSweepTable(t *testing.T, c format.Compression, v4 bool) *goldenTable {
	t.Helper()
	es := numbered(200, func(i int) string { return fmt.Sprintf("v%d%s", i, strings.Repeat("-", i%9)) })
	opts := &builder.Options{BlockSize: 256, RestartInterval: 4, Compression: c, HashIndex: !v4}
	data, p := build(t, es, opts)
	if want := wantVersion(opts, len(es)); p.FormatVersion != want || p.HashIndexSize == 0 || p.Partitioned || p.NumDataBlocks < 8 {
		t.Fatalf("sweep table: format version %d (want %d), hash index size %d, partitioned %v, %d data blocks", p.FormatVersion, want, p.HashIndexSize, p.Partitioned, p.NumDataBlocks)
	}
	return newGoldenTable(t, fmt.Sprintf("v%d-%s", p.FormatVersion, c), data)
}

// hashSweepStride is the stride of the version 2 and 3 sweeps: every bit
// with SSTABLE_LONG_TESTS=1, as CI sets (about 45 s for both on a 2-core
// machine), every 7th under plain go test, which keeps go test ./... short,
// and every 89th under the race detector.
func hashSweepStride() int { return sweepStride() }

// TestHashIndexBitFlipSweep flips every bit (every 7th under plain go
// test: hashSweepStride) of a small version 2 table, and of one of
// version 4,
// (snappy, raw and zstd) in turn, as TestGoldenBitFlipSweep does for the golden
// version 1 tables. The hash index section is checksummed like every other
// block, so Open or Verify must report every flip; no read may panic or
// give a wrong answer (a Get that returns a value returns the right one).
// The snappy table is read with the default cache, which holds all its
// decoded blocks, and with a cache of one block, so that blocks are
// evicted and read again; the raw one with no cache; the zstd one with
// the default cache.
func TestHashIndexBitFlipSweep(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	dir := t.TempDir()
	for _, v := range []struct {
		name   string
		c      format.Compression
		opts   *reader.Options
		cached bool // the undamaged table's first block is cached after a Get of its first key
	}{
		{"cache", format.SnappyCompression, nil, true},
		{"smallcache", format.SnappyCompression, cacheOpts(t, 1024), true}, // room for one block
		{"nocache", format.NoCompression, cacheOpts(t, 0), false},
		{"cache", format.ZstdCompression, nil, true},
	} {
		for _, v4 := range []bool{false, true} {
			g := hashSweepTable(t, v.c, v4)
			opts := v.opts
			if v4 && v.name == "smallcache" {
				// A version 4 hash index this small (about 1 KiB) goes
				// into the cache, where it would take the one block's
				// room: room for it and one block.
				opts = cacheOpts(t, 1024+int64(tableProps(t, g.data).HashIndexSize))
			}
			t.Run(g.name+"/"+v.name, func(t *testing.T) {
				r, err := reader.New(bytes.NewReader(g.data), int64(len(g.data)), opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Get(g.keys[0]); err != nil {
					t.Fatal(err)
				}
				if reader.CachedBlock(r, 0) != v.cached {
					t.Fatalf("CachedBlock(0) = %v, want %v", reader.CachedBlock(r, 0), v.cached)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				st := bitFlipSweep(t, g, hashSweepStride(), opts, dir)
				if st.undetected != 0 {
					t.Errorf("%d flips went undetected", st.undetected)
				}
			})
		}
	}
}

// TestSpanSweeps flips bits (sampled with odd strides, densest in the
// span block) of the golden version 5 tables, one-level and partitioned,
// and cuts them to every shorter length, as TestGoldenBitFlipSweep and
// TestGoldenTruncationSweep do: Open or Verify must report every flip and
// cut, and SpanAt and span scans, like every other read, must give the
// undamaged table's answer or an error wrapping format.ErrCorrupt, never
// a wrong span.
func TestSpanSweeps(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	dir := t.TempDir()
	for _, name := range []string{"v5.sst", "v5parted.sst"} {
		data, err := os.ReadFile(filepath.Join(sweepGoldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		g := newGoldenTable(t, name, data)
		if len(g.spans) == 0 {
			t.Fatalf("%s: no spans", name)
		}
		// Every 3rd bit of the span block with SSTABLE_LONG_TESTS=1 (about
		// 6 s for both tables on a 2-core machine), every 7th under plain
		// go test; every 13th bit and length of the whole file (every
		// 61st). Strides are odd: every bit position is covered.
		f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := int(f.Index.End()), int(f.Properties.Offset)
		spanStride, fileStride := 3, 13
		if sweepStride() != 1 {
			spanStride, fileStride = sweepStride(), 61
		}
		t.Run(name+"/flips", func(t *testing.T) {
			st := bitFlipSweepRange(t, g, spanStride, sweepOpts, dir, 7, lo, hi)
			st.add(bitFlipSweep(t, g, fileStride, sweepOpts, dir))
			if st.undetected != 0 {
				t.Errorf("%d flips went undetected", st.undetected)
			}
		})
		t.Run(name+"/truncations", func(t *testing.T) { truncationSweepEvery(t, g, sweepOpts, dir, fileStride) })
	}
}

// TestHashIndexTruncationSweep cuts a small version 2 table, and one of
// version 4 (snappy, raw and zstd), to every shorter length, as TestGoldenTruncationSweep does for the
// golden tables.
func TestHashIndexTruncationSweep(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []format.Compression{format.SnappyCompression, format.NoCompression, format.ZstdCompression} {
		for _, v4 := range []bool{false, true} {
			g := hashSweepTable(t, c, v4)
			t.Run(g.name, func(t *testing.T) { truncationSweep(t, g, nil, dir) })
		}
	}
}

// lyingTable is a table whose lengths or layout lie; want is what the first
// error must mention ("" for any corruption). The table named "control"
// tells no lie and must read cleanly.
type lyingTable struct {
	name string
	data []byte
	want string
}

// checkLyingTables opens each table with New and with Open: a control must
// pass Verify; any other must fail Open or Verify with an error naming the
// lie, and reading it in every way (checker) must neither panic, return
// wrong data nor allocate more than 8 MiB.
func checkLyingTables(t *testing.T, g *goldenTable, tests []lyingTable) {
	t.Helper()
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, strings.NewReplacer(" ", "_", ":", "", ",", "", "^", "").Replace(tc.name))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"New", "Open"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				open := func() (*reader.Reader, error) {
					if how == "New" {
						return reader.New(bytes.NewReader(tc.data), int64(len(tc.data)), nil)
					}
					return reader.Open(path, nil)
				}
				if tc.name == "control" {
					r, err := open()
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					if err := r.Verify(); err != nil {
						t.Fatal(err)
					}
					return
				}
				// The first error met names the lie.
				r, err := open()
				if err == nil {
					if err = r.Verify(); err == nil {
						t.Fatal("Open and Verify succeeded")
					}
					r.Close()
				}
				wantCorrupt(t, err, len(tc.data), tc.want)
				t.Logf("%v", err)

				c := &checker{g: g}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				res := c.check(open, false)
				runtime.ReadMemStats(&after)
				if res.problem != "" {
					t.Fatal(res.problem)
				}
				if !res.openErr && !res.verifyErr {
					t.Fatal("Open and Verify succeeded")
				}
				if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
					t.Fatalf("reading a %d-byte table allocated %d bytes", len(tc.data), d)
				} else {
					t.Logf("reading allocated %d bytes (Open failed: %v, Verify failed: %v, a scan or Get failed: %v)", d, res.openErr, res.verifyErr, res.readErr)
				}
			})
		}
	}
}
