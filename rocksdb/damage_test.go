package rocksdb_test

// Damaged bytes: every RocksDB table committed under testdata/golden and
// ../internal/rocksblock/testdata/golden (RocksDB 7.8.3's and 10.5.1's,
// every checksum type and compression among them) with single bits
// flipped and with its end cut off, opened over io.ReaderAt and mapped,
// must read either as an error (wrapping format.ErrCorrupt, or
// ErrUnsupported where damage makes a field name something this package
// does not read) or exactly as the undamaged table: the same internal
// entries both ways, the same Get answers, range deletions and
// properties. Never a panic, never other entries. A table with checksum
// type none is the exception RocksDB has too: damage the block structure
// survives reads as other entries, which is counted, not failed.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// damageTable is one table the damage tests start from.
type damageTable struct {
	name string
	data []byte
}

// damageTables returns every *.sst under testdata/golden (at any depth)
// and ../internal/rocksblock/testdata/golden.
func damageTables(t *testing.T) []damageTable {
	var out []damageTable
	for _, root := range []string{
		filepath.Join("testdata", "golden"),
		filepath.Join("..", "internal", "rocksblock", "testdata", "golden"),
	} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == root {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".sst") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, damageTable{filepath.ToSlash(p), data})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// damageEntry is one internal entry.
type damageEntry struct {
	key   string
	seq   uint64
	kind  rocksdb.Kind
	value string
}

// damageView is everything read from a table.
type damageView struct {
	fwd, bwd []damageEntry // the scans, bwd in the order read
	gets     []damageEntry // Get of each user key at MaxSequence
	dels     []rocksdb.RangeDeletion
	props    []rocksdb.Property
}

// readDamageView reads all of tb: Verify, a scan both ways, Get of every
// user key the scan shows and of a key after each (which must be absent
// or an entry of the scan), the range deletions and the properties. The
// first error stops it.
func readDamageView(tb *rocksdb.Table) (*damageView, error) {
	v := &damageView{}
	if _, err := tb.Verify(); err != nil {
		return nil, err
	}
	it := tb.NewIter(nil)
	defer it.Close()
	entry := func() damageEntry {
		return damageEntry{string(it.Key()), it.Seq(), it.Kind(), string(it.Value())}
	}
	for ok := it.First(); ok; ok = it.Next() {
		v.fwd = append(v.fwd, entry())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		v.bwd = append(v.bwd, entry())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for i, e := range v.fwd {
		if i > 0 && v.fwd[i-1].key == e.key {
			continue
		}
		for _, k := range []string{e.key, e.key + "\x00"} {
			g, err := tb.Get([]byte(k), rocksdb.MaxSequence)
			switch {
			case err == reader.ErrNotFound:
				v.gets = append(v.gets, damageEntry{key: k, kind: 0xff})
				continue
			case err != nil && !errors.Is(err, rocksdb.ErrUnresolved):
				return nil, err
			}
			v.gets = append(v.gets, damageEntry{string(g.Key), g.Seq, g.Kind, string(g.Value)})
		}
	}
	dels, err := tb.RangeDeletions()
	if err != nil {
		return nil, err
	}
	v.dels = dels
	v.props = tb.Properties()
	return v, nil
}

// diff returns how v differs from w, or "".
func (v *damageView) diff(w *damageView) string {
	entries := func(what string, a, b []damageEntry) string {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				return fmt.Sprintf("%s %d: %q#%d,%v=%q, was %q#%d,%v=%q", what, i, a[i].key, a[i].seq, a[i].kind, a[i].value, b[i].key, b[i].seq, b[i].kind, b[i].value)
			}
		}
		if len(a) != len(b) {
			return fmt.Sprintf("%d %s, was %d", len(a), what, len(b))
		}
		return ""
	}
	if d := entries("entries", v.fwd, w.fwd); d != "" {
		return d
	}
	if d := entries("entries read backwards", v.bwd, w.bwd); d != "" {
		return d
	}
	if d := entries("Get answers", v.gets, w.gets); d != "" {
		return d
	}
	if len(v.dels) != len(w.dels) {
		return fmt.Sprintf("%d range deletions, was %d", len(v.dels), len(w.dels))
	}
	for i, d := range v.dels {
		o := w.dels[i]
		if !bytes.Equal(d.Start, o.Start) || !bytes.Equal(d.End, o.End) || d.Seq != o.Seq {
			return fmt.Sprintf("range deletion %d: [%q, %q)#%d, was [%q, %q)#%d", i, d.Start, d.End, d.Seq, o.Start, o.End, o.Seq)
		}
	}
	if len(v.props) != len(w.props) {
		return fmt.Sprintf("%d properties, was %d", len(v.props), len(w.props))
	}
	for i, p := range v.props {
		if p.Name != w.props[i].Name || !bytes.Equal(p.Value, w.props[i].Value) {
			return fmt.Sprintf("property %d: %q=%q, was %q=%q", i, p.Name, p.Value, w.props[i].Name, w.props[i].Value)
		}
	}
	return ""
}

// damageOutcome is what reading a damaged copy gave.
type damageOutcome int

const (
	damageDetected    damageOutcome = iota // an error wrapping format.ErrCorrupt
	damageUnsupported                      // an error wrapping ErrUnsupported only
	damageHarmless                         // the original view
	damageChanged                          // another view
	damageSeqno                            // the view with the damaged global sequence number
)

// damageReader opens damaged copies of one table, over io.ReaderAt or
// mapped from a file in a temporary directory, and reads them.
type damageReader struct {
	t       *testing.T
	name    string
	orig    *damageView
	scratch string
}

// read opens data, mapped or not, and returns the outcome and, for
// damageChanged, how the view differs. A panic fails the test, naming
// what, the damage.
func (r *damageReader) read(data []byte, mapped bool, what string) (out damageOutcome, diff string) {
	defer func() {
		if p := recover(); p != nil {
			r.t.Fatalf("%s: %s (mapped %v): panic: %v", r.name, what, mapped, p)
		}
	}()
	var tb *rocksdb.Table
	var err error
	if mapped {
		if err := os.WriteFile(r.scratch, data, 0o644); err != nil {
			r.t.Fatal(err)
		}
		tb, err = rocksdb.OpenTable(r.scratch, nil)
	} else {
		tb, err = rocksdb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
	}
	var v *damageView
	if err == nil {
		v, err = readDamageView(tb)
		if cerr := tb.Close(); cerr != nil {
			r.t.Fatalf("%s: %s: Close: %v", r.name, what, cerr)
		}
	}
	switch {
	case errors.Is(err, format.ErrCorrupt):
		return damageDetected, ""
	case errors.Is(err, rocksdb.ErrUnsupported):
		return damageUnsupported, ""
	case err != nil:
		r.t.Fatalf("%s: %s (mapped %v): error wraps neither format.ErrCorrupt nor rocksdb.ErrUnsupported: %v", r.name, what, mapped, err)
	}
	if d := v.diff(r.orig); d != "" {
		return damageChanged, d
	}
	return damageHarmless, ""
}

// globalSeqnoField returns the file offset of the 8-byte value of an
// ingested table's rocksdb.external_sst_file.global_seqno property, or
// -1. RocksDB's ingestion rewrites that value in place without a new
// block checksum, so RocksDB checks the properties block a second time
// with the value zeroed (table/meta_blocks.cc), as this package does:
// those 8 bytes are covered by no checksum, in RocksDB as here.
func globalSeqnoField(tb *rocksdb.Table, data []byte) int {
	if v, ok := tb.Property("rocksdb.external_sst_file.version"); !ok || len(v) != 4 || binary.LittleEndian.Uint32(v) != 2 {
		return -1
	}
	v, ok := tb.Property("rocksdb.external_sst_file.global_seqno")
	if !ok || len(v) != 8 {
		return -1
	}
	// The properties block is stored raw, and no property name before
	// this one ends in its tail, so the tail's bytes are stored whole,
	// right before the value.
	const tail = "global_seqno"
	i := bytes.Index(data, []byte(tail))
	if i < 0 || bytes.Contains(data[i+1:], []byte(tail)) || i+len(tail)+8 > len(data) || !bytes.Equal(data[i+len(tail):i+len(tail)+8], v) {
		return -1
	}
	return i + len(tail)
}

// withGlobalSeqno returns v as RocksDB reads the table when its global
// sequence number field holds field (little-endian), rather than 0:
// every entry's sequence number, and every range deletion's, is the
// global one.
func (v *damageView) withGlobalSeqno(field []byte) *damageView {
	g := uint64(0)
	for i := 7; i >= 0; i-- {
		g = g<<8 | uint64(field[i])
	}
	set := func(es []damageEntry) []damageEntry {
		out := make([]damageEntry, len(es))
		for i, e := range es {
			if e.kind != 0xff { // not a Get's "not found"
				e.seq = g
			}
			out[i] = e
		}
		return out
	}
	w := &damageView{fwd: set(v.fwd), bwd: set(v.bwd), gets: set(v.gets)}
	for _, d := range v.dels {
		d.Seq = g
		w.dels = append(w.dels, d)
	}
	for _, p := range v.props {
		if p.Name == "rocksdb.external_sst_file.global_seqno" {
			p.Value = field
		}
		w.props = append(w.props, p)
	}
	return w
}

// Damage budgets: bit flips are tried at about damageBytes evenly spaced
// bytes of each table, and at an ingested table's global sequence number
// (every bit of each; every byte of every table with SSTABLE_DAMAGE_ALL=1,
// which takes minutes), and every damageMapEvery-th damaged copy is also
// read mapped.
const (
	damageBytes    = 100
	damageMapEvery = 5
)

// TestDamagedTables flips every bit of a sample of each table's bytes and
// cuts each table at several lengths; see the top of this file.
func TestDamagedTables(t *testing.T) {
	tables := damageTables(t)
	if len(tables) == 0 {
		t.Fatal("no RocksDB tables under testdata/golden or ../internal/rocksblock/testdata/golden")
	}
	budget := damageBytes
	switch {
	case os.Getenv("SSTABLE_DAMAGE_ALL") == "1":
		budget = 1 << 30
	case testing.Short():
		budget /= 8
	case !oracletest.Long():
		budget /= 4 // every bit of 100 bytes of each table under SSTABLE_LONG_TESTS=1, as CI runs it
	}
	type combo struct{ checksum, compression string }
	var (
		mu     sync.Mutex
		seen   = map[combo]bool{}
		silent []string
		counts [5]int
		reads  int
	)
	start := time.Now()
	t.Run("tables", func(t *testing.T) {
		for _, tab := range tables {
			t.Run(strings.ReplaceAll(tab.name, "/", "_"), func(t *testing.T) {
				t.Parallel()
				orig, err := rocksdb.NewTable(bytes.NewReader(tab.data), int64(len(tab.data)), nil)
				if err != nil {
					t.Fatalf("%s: %v", tab.name, err)
				}
				info := orig.Info()
				view, err := readDamageView(orig)
				seqField := globalSeqnoField(orig, tab.data)
				orig.Close()
				if err != nil {
					t.Fatalf("%s: undamaged: %v", tab.name, err)
				}
				compression := info.Compression
				if slices.Contains(info.MetaBlocks, "rocksdb.compression_dict") {
					compression += "+dict"
				}
				r := &damageReader{t: t, name: tab.name, orig: view, scratch: filepath.Join(t.TempDir(), "damaged.sst")}
				none := info.Checksum == "none"
				var tableCounts [5]int
				var tableSilent []string
				n := 0
				try := func(data []byte, what string, mapped bool) {
					for _, m := range []bool{false, true} {
						if m && !mapped {
							continue
						}
						out, diff := r.read(data, m, what)
						if out == damageHarmless && r.orig != view {
							out = damageSeqno
						}
						tableCounts[out]++
						if out == damageChanged {
							if !none {
								t.Errorf("%s (checksum %s): %s (mapped %v) reads as other data: %s", tab.name, info.Checksum, what, m, diff)
							}
							tableSilent = append(tableSilent, fmt.Sprintf("%s: %s: %s", tab.name, what, diff))
						}
					}
				}
				size := len(tab.data)
				sample := budget
				if info.Compression == "BZip2" {
					// Go's bzip2 reader allocates for RocksDB's 900 KB
					// bzip2 blocks (level 9) whatever the data's size,
					// several MB per data block: a read costs ten times
					// another compression's.
					sample = max(1, budget/4)
				}
				stride := max(1, size/sample)
				// Start the stride at an offset that varies by table,
				// so that the sampled positions fall at different
				// places of each table's blocks.
				var offs []int
				for off := size % stride; off < size; off += stride {
					offs = append(offs, off)
				}
				if seqField >= 0 {
					for off := seqField; off < seqField+8; off++ {
						offs = append(offs, off)
					}
				}
				slices.Sort(offs)
				for _, off := range slices.Compact(offs) {
					for bit := range 8 {
						d := bytes.Clone(tab.data)
						d[off] ^= 1 << bit
						what := fmt.Sprintf("bit %d of byte %d flipped", bit, off)
						if seqField >= 0 && off >= seqField && off < seqField+8 {
							// The one field no checksum covers: RocksDB
							// reads it as every entry's sequence number
							// (or refuses it when above 2^56-1).
							r.orig = view.withGlobalSeqno(d[seqField : seqField+8])
							what += " (the global sequence number)"
						}
						try(d, what, n%damageMapEvery == 0)
						r.orig = view
						n++
					}
				}
				for _, cut := range []int{0, 1, 8, size / 2, size - rocksdb.FooterLen - 1, size - rocksdb.FooterLen, size - rocksdb.LegacyFooterLen, size - 9, size - 8, size - 1} {
					if cut >= 0 && cut < size {
						try(tab.data[:cut:cut], fmt.Sprintf("cut to %d bytes", cut), true)
					}
				}
				t.Logf("%s, %d bytes, every %d bytes: %d detected, %d unsupported, %d harmless, %d changed, %d read with the damaged global seqno", combo{info.Checksum, compression}, size, stride, tableCounts[damageDetected], tableCounts[damageUnsupported], tableCounts[damageHarmless], tableCounts[damageChanged], tableCounts[damageSeqno])
				mu.Lock()
				defer mu.Unlock()
				seen[combo{info.Checksum, compression}] = true
				silent = append(silent, tableSilent...)
				for i, c := range tableCounts {
					counts[i] += c
					reads += c
				}
			})
		}
	})
	t.Logf("%d tables, %d reads in %v: %d detected, %d unsupported, %d harmless, %d changed (checksum none only), %d read with the damaged global seqno (as RocksDB reads it)", len(tables), reads, time.Since(start).Round(time.Millisecond), counts[damageDetected], counts[damageUnsupported], counts[damageHarmless], counts[damageChanged], counts[damageSeqno])
	// What the silent changes changed first: entries, Get answers,
	// range deletions or properties.
	byPart := map[string]int{}
	var examples []string
	for _, s := range silent {
		_, diff, ok := strings.Cut(s, " flipped: ")
		if !ok {
			_, diff, _ = strings.Cut(s, " bytes: ") // "cut to N bytes: "
		}
		head, _, _ := strings.Cut(diff, ":")
		for _, part := range [][2]string{{"Get answers", "Get"}, {"entries", "entries"}, {"range deletion", "range deletions"}, {"propert", "properties"}} {
			if strings.Contains(head, part[0]) {
				if byPart[part[1]] == 0 {
					examples = append(examples, s)
				}
				byPart[part[1]]++
				break
			}
		}
	}
	if len(silent) > 0 {
		t.Logf("under checksum none, what a changed read changed first: %v; for example:", byPart)
	}
	for _, s := range examples {
		t.Log("  " + s)
	}
	// The corpus must cover every checksum type and every compression.
	checksums := map[string]bool{}
	compressions := map[string]bool{}
	for c := range seen {
		checksums[c.checksum] = true
		compressions[c.compression] = true
	}
	for _, c := range []string{"none", "crc32c", "xxhash", "xxhash64", "xxh3"} {
		if !checksums[c] {
			t.Errorf("no table with checksum type %s", c)
		}
	}
	for _, c := range []string{"NoCompression", "Snappy", "Zlib", "BZip2", "LZ4", "LZ4HC", "ZSTD", "ZSTD+dict"} {
		if !compressions[c] {
			t.Errorf("no table with compression %s", c)
		}
	}
}
