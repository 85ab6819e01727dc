package rocksblob_test

// Tests against RocksDB 7.8 itself (Debian's librocksdb-dev): the program
// testdata/blobdb.cc, compiled at test time, writes databases with
// integrated BlobDB (enable_blob_files) and records every write with its
// sequence number and, at the end, DB::Get of every key. Each table's
// entries, read by package rocksdb, and their blob indexes, resolved by this
// package, must give the values those writes stored; each key's newest
// version must be what DB::Get returned. testdata/golden holds two small
// databases (their tables, blob files and transcripts) so that the same
// checks run without RocksDB. Without g++ or RocksDB's headers the oracle
// tests skip, unless SSTABLE_REQUIRE_ROCKSDB=1 (as in CI).

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/internal/rocksblob"
	"github.com/sstkit/sstable/internal/rocksblock"
	"github.com/sstkit/sstable/rocksdb"
)

var update = flag.Bool("update", false, "rewrite testdata/golden with RocksDB (needs g++ and librocksdb-dev)")

// buildOracle compiles testdata/blobdb.cc into a directory of t's and
// returns the program's path, or skips t (fails it under
// SSTABLE_REQUIRE_ROCKSDB=1) when it cannot.
func buildOracle(t *testing.T) string {
	t.Helper()
	if !*update {
		oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if *update {
			t.Fatalf("-update but "+format, args...)
		}
		oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8", "install g++ and Debian's librocksdb-dev", format, args...)
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		missing("no g++: %v", err)
	}
	if _, err := os.Stat("/usr/include/rocksdb/db.h"); err != nil {
		missing("no RocksDB headers: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "blobdb.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "blobdb")
	start := time.Now()
	out, err := exec.Command(gxx, "-O1", "-std=c++17", "-o", bin, src, "-lrocksdb").CombinedOutput()
	if err != nil {
		missing("g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
	}
	t.Logf("compiled the oracle in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// runOracle runs the oracle with args and returns the directory it wrote.
func runOracle(t *testing.T, bin string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, append(args, dir)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("blobdb %v: %v: %s", args, err, stderr.String())
	}
	t.Logf("blobdb: %s", strings.TrimSpace(string(out)))
	return dir
}

// database is one line of the oracle's manifest.
type database struct {
	name        string
	compression byte   // the blob compression type
	minBlob     uint64 // min_blob_size
}

func readManifest(t *testing.T, dir string) []database {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var dbs []database
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("manifest line %q", line)
		}
		c, err1 := strconv.ParseUint(f[1], 10, 8)
		m, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("manifest line %q", line)
		}
		dbs = append(dbs, database{f[0], byte(c), m})
	}
	return dbs
}

// transcript is what the oracle recorded of one database.
type transcript struct {
	puts map[uint64][2]string // sequence number -> key, value
	dels map[uint64]string    // sequence number -> key
	gets map[string]*string   // key -> DB::Get's value, nil for not found
}

func unhex(t *testing.T, s string) string {
	t.Helper()
	if s == "_" {
		return ""
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	return string(b)
}

func readTranscript(t *testing.T, path string) transcript {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := transcript{map[uint64][2]string{}, map[uint64]string{}, map[string]*string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		bad := func() { t.Fatalf("%s: line %.80q", path, line) }
		if len(f) < 3 {
			bad()
		}
		switch f[0] {
		case "put", "del":
			seq, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				bad()
			}
			if f[0] == "put" && len(f) == 4 {
				tr.puts[seq] = [2]string{unhex(t, f[2]), unhex(t, f[3])}
			} else if f[0] == "del" && len(f) == 3 {
				tr.dels[seq] = unhex(t, f[2])
			} else {
				bad()
			}
		case "get":
			if len(f) != 3 {
				bad()
			}
			if f[2] == "-" {
				tr.gets[unhex(t, f[1])] = nil
			} else {
				v := unhex(t, f[2])
				tr.gets[unhex(t, f[1])] = &v
			}
		default:
			bad()
		}
	}
	return tr
}

// ref is a blob index a table holds, with the value it must resolve to.
type ref struct {
	table string
	key   []byte
	idx   rocksblob.Index
	want  []byte
}

// version is a key's newest version across a database's tables.
type version struct {
	seq     uint64
	deleted bool
	value   string
}

// dbCounts are what checkDB saw, for the callers' sanity checks.
type dbCounts struct {
	tables, blobFiles, blobs, inline, deletions int
	largest                                     int // the longest value resolved from a blob file
}

// checkDB checks database db in dir: every table entry against the
// transcript, every blob index resolved through this package, the newest
// version of each key against DB::Get, every blob file verified. It
// returns the blob indexes, with their values, for the damage tests.
func checkDB(t *testing.T, dir string, db database) ([]ref, dbCounts) {
	t.Helper()
	dbDir := filepath.Join(dir, db.name)
	tr := readTranscript(t, filepath.Join(dir, db.name+".txt"))
	var c dbCounts
	files := map[uint64]*rocksblob.File{}
	defer func() {
		for _, f := range files {
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		}
	}()
	blobFile := func(n uint64) (*rocksblob.File, error) {
		if f, ok := files[n]; ok {
			return f, nil
		}
		f, err := rocksblob.Open(filepath.Join(dbDir, fmt.Sprintf("%06d.blob", n)), &rocksblob.Options{CheckColumnFamily: true, ColumnFamilyID: 0})
		if err != nil {
			return nil, err
		}
		if f.Number() != n || f.ColumnFamilyID() != 0 || f.Compression() != db.compression || !f.HasFooter() {
			t.Errorf("%s: number %d, column family %d, compression %d, footer %v; want %d, 0, %d, true", f.Name(), f.Number(), f.ColumnFamilyID(), f.Compression(), f.HasFooter(), n, db.compression)
		}
		files[n] = f
		return f, nil
	}
	tables, err := filepath.Glob(filepath.Join(dbDir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("%s: no tables (%v)", dbDir, err)
	}
	var refs []ref
	newest := map[string]version{}
	seen := map[[2]uint64]bool{} // (file, offset) of every blob index
	errs := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if errs++; errs <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, path := range tables {
		c.tables++
		tab, err := rocksdb.OpenTable(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := tab.NewIter(nil)
		for ok := it.First(); ok; ok = it.Next() {
			key, seq, kind := string(it.Key()), it.Seq(), it.Kind()
			var v version
			v.seq = seq
			switch kind {
			case rocksdb.KindDeletion:
				c.deletions++
				v.deleted = true
				if seq != 0 && tr.dels[seq] != key {
					fail("%s: deletion of %x at seq %d, the oracle deleted %x", path, key, seq, tr.dels[seq])
				}
			case rocksdb.KindValue:
				c.inline++
				v.value = string(it.Value())
				if len(v.value) >= int(db.minBlob) {
					fail("%s: %x has an inline value of %d bytes, min_blob_size is %d", path, key, len(v.value), db.minBlob)
				}
			case rocksdb.KindBlobIndex:
				c.blobs++
				idx, err := rocksblob.DecodeIndex(it.Value())
				if err != nil {
					fail("%s: %x: %v", path, key, err)
					continue
				}
				if idx.Type != rocksblob.TypeBlob || idx.Compression != db.compression {
					fail("%s: %x: index %v, want a blob index with compression %d", path, key, idx, db.compression)
				}
				if seen[[2]uint64{idx.FileNumber, idx.Offset}] {
					fail("%s: %x: a second index of file %d offset %d", path, key, idx.FileNumber, idx.Offset)
				}
				seen[[2]uint64{idx.FileNumber, idx.Offset}] = true
				f, err := blobFile(idx.FileNumber)
				if err != nil {
					fail("%s: %x: %v", path, key, err)
					continue
				}
				got, err := f.Value([]byte(key), idx, nil)
				if err != nil {
					fail("%s: %x: %v", path, key, err)
					continue
				}
				v.value = string(got)
				c.largest = max(c.largest, len(got))
				if len(got) < int(db.minBlob) {
					fail("%s: %x: a blob of %d bytes, min_blob_size is %d", path, key, len(got), db.minBlob)
				}
				refs = append(refs, ref{filepath.Base(path), []byte(key), idx, got})
			default:
				fail("%s: %x: unexpected kind %v", path, key, kind)
				continue
			}
			if !v.deleted && seq != 0 {
				if p, ok := tr.puts[seq]; !ok || p[0] != key || p[1] != v.value {
					fail("%s: %x at seq %d reads %d bytes %.40x, the oracle put %x = %d bytes %.40x", path, key, seq, len(v.value), v.value, p[0], len(p[1]), p[1])
				}
			}
			if old, ok := newest[key]; ok && old.seq == seq {
				fail("%s: %x at seq %d in two tables", path, key, seq)
			}
			if old, ok := newest[key]; !ok || seq > old.seq {
				newest[key] = v
			}
		}
		if err := it.Err(); err != nil {
			t.Error(err)
		}
		it.Close()
		tab.Close()
	}
	for key, want := range tr.gets {
		v, ok := newest[key]
		switch {
		case want == nil && ok && !v.deleted:
			fail("%s: %x reads %d bytes, RocksDB's Get found nothing", db.name, key, len(v.value))
		case want != nil && (!ok || v.deleted):
			fail("%s: %x absent or deleted, RocksDB's Get read %d bytes", db.name, key, len(*want))
		case want != nil && v.value != *want:
			fail("%s: %x reads %d bytes %.40x, RocksDB's Get %d bytes %.40x", db.name, key, len(v.value), v.value, len(*want), *want)
		}
	}
	// Every blob file the database holds is checked, referenced or not;
	// every record is referenced once (no overwrite shares a flush, and
	// garbage collection leaves only live blobs).
	blobs, _ := filepath.Glob(filepath.Join(dbDir, "*.blob"))
	logged := blobLog(t, dbDir)
	records := int64(0)
	for _, path := range blobs {
		c.blobFiles++
		f, err := blobFile(rocksblob.NumberFromName(path))
		if err != nil {
			t.Error(err)
			continue
		}
		st, err := f.Verify()
		if err != nil {
			t.Error(err)
		}
		if uint64(st.Records) != f.BlobCount() || st.Bytes == 0 {
			t.Errorf("%s: Verify counted %+v, the footer %d", path, st, f.BlobCount())
		}
		if logged != nil && logged[f.Number()] != st {
			t.Errorf("%s: Verify counted %+v, RocksDB's LOG %+v", path, st, logged[f.Number()])
		}
		records += st.Records
	}
	if records != int64(c.blobs) {
		t.Errorf("%s: %d blob records in the blob files, %d blob indexes in the tables", db.name, records, c.blobs)
	}
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i].idx, refs[j].idx
		return a.FileNumber < b.FileNumber || a.FileNumber == b.FileNumber && a.Offset < b.Offset
	})
	return refs, c
}

// blobLog returns what RocksDB's LOG in dbDir says of each blob file it
// wrote ("Generated blob file #N: C total blobs, B total bytes", the count
// and bytes its MANIFEST records too), or nil without a LOG.
func blobLog(t *testing.T, dbDir string) map[uint64]rocksblob.Stats {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dbDir, "LOG"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`Generated blob file #(\d+): (\d+) total blobs, (\d+) total bytes`)
	m := map[uint64]rocksblob.Stats{}
	for _, g := range re.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseUint(g[1], 10, 64)
		c, _ := strconv.ParseInt(g[2], 10, 64)
		by, _ := strconv.ParseUint(g[3], 10, 64)
		m[n] = rocksblob.Stats{Records: c, Bytes: by}
	}
	if len(m) == 0 {
		t.Fatalf("%s/LOG names no blob file", dbDir)
	}
	return m
}

// TestRocksDB checks this package's reading of the blob files of databases
// RocksDB 7.8 wrote, with every blob compression.
func TestRocksDB(t *testing.T) {
	bin := buildOracle(t)
	dir := runOracle(t, bin)
	dbs := readManifest(t, dir)
	if len(dbs) < 10 {
		t.Fatalf("the oracle wrote %d databases, want 10", len(dbs))
	}
	comps := map[byte]bool{}
	for _, db := range dbs {
		refs, c := checkDB(t, dir, db)
		t.Logf("%s: %d tables, %d blob files, %d blob values (largest %d bytes), %d inline values, %d deletions", db.name, c.tables, c.blobFiles, c.blobs, c.largest, c.inline, c.deletions)
		// The matrix is the point: a weaker oracle is a weaker test.
		if c.blobs < 80 || c.blobFiles < 3 || len(refs) != c.blobs {
			t.Errorf("%s: only %d blob values in %d blob files", db.name, c.blobs, c.blobFiles)
		}
		comps[db.compression] = true
	}
	if len(comps) < 8 {
		t.Errorf("the oracle used %d blob compressions, want 8", len(comps))
	}
}

// goldenDir holds testdata/golden's databases, written by the oracle's
// -golden mode.
const goldenDir = "testdata/golden"

// TestGolden runs checkDB on the committed databases, so that this
// package is checked against RocksDB's files where RocksDB is missing.
// -update rewrites them with RocksDB.
func TestGolden(t *testing.T) {
	if *update {
		writeGolden(t)
	}
	total := 0
	for _, db := range readManifest(t, goldenDir) {
		refs, c := checkDB(t, goldenDir, db)
		if c.blobs < 15 || c.inline < 3 || c.deletions < 1 || c.blobFiles < 3 {
			t.Errorf("%s: only %+v", db.name, c)
		}
		total += len(refs)
	}
	if total == 0 {
		t.Fatal("no golden blob values")
	}
}

// writeGolden replaces testdata/golden with the oracle's -golden output:
// the tables, the blob files and the transcripts.
func writeGolden(t *testing.T) {
	dir := runOracle(t, buildOracle(t), "-golden")
	if err := os.RemoveAll(goldenDir); err != nil {
		t.Fatal(err)
	}
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(dir, "manifest"), filepath.Join(goldenDir, "manifest"))
	for _, db := range readManifest(t, dir) {
		copyFile(filepath.Join(dir, db.name+".txt"), filepath.Join(goldenDir, db.name+".txt"))
		for _, pat := range []string{"*.sst", "*.blob"} {
			paths, _ := filepath.Glob(filepath.Join(dir, db.name, pat))
			for _, p := range paths {
				copyFile(p, filepath.Join(goldenDir, db.name, filepath.Base(p)))
			}
		}
	}
}

// goldenFile is one golden blob file with the indexes into it.
type goldenFile struct {
	name   string
	number uint64
	data   []byte
	refs   []ref
}

// goldenFiles returns the golden blob files, each with the blob indexes
// the golden tables hold into it and their values (checked by checkDB).
func goldenFiles(t *testing.T) []goldenFile {
	t.Helper()
	var gs []goldenFile
	for _, db := range readManifest(t, goldenDir) {
		refs, _ := checkDB(t, goldenDir, db)
		paths, _ := filepath.Glob(filepath.Join(goldenDir, db.name, "*.blob"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			g := goldenFile{name: p, number: rocksblob.NumberFromName(p), data: data}
			for _, r := range refs {
				if r.idx.FileNumber == g.number {
					g.refs = append(g.refs, r)
				}
			}
			if len(g.refs) == 0 {
				t.Fatalf("%s: no index into it", p)
			}
			gs = append(gs, g)
		}
	}
	return gs
}

// isCorrupt reports whether err wraps format.ErrCorrupt as a
// *format.CorruptError naming file.
func isCorrupt(err error, file string) bool {
	var ce *format.CorruptError
	return errors.Is(err, format.ErrCorrupt) && errors.As(err, &ce) && ce.File == file
}

// TestDamage flips each bit position of every golden blob file and
// truncates each at every length: opening, Verify and every Value either
// give an error wrapping format.ErrCorrupt, naming the file, or (Value) the
// value RocksDB wrote; never a panic, never another value.
func TestDamage(t *testing.T) {
	for _, g := range goldenFiles(t) {
		opt := &rocksblob.Options{Name: g.name, Number: g.number, CheckColumnFamily: true}
		values := func(f *rocksblob.File, what string, limit int64) (ok int) {
			for _, r := range g.refs {
				v, err := f.Value(r.key, r.idx, nil)
				switch {
				case err == nil && !bytes.Equal(v, r.want):
					t.Fatalf("%s %s: %x reads %d other bytes", g.name, what, r.key, len(v))
				case err == nil && int64(r.idx.Offset+r.idx.Size) > limit:
					t.Fatalf("%s %s: %x read beyond the file's %d bytes", g.name, what, r.key, limit)
				case err == nil:
					ok++
				case !isCorrupt(err, g.name):
					t.Fatalf("%s %s: %x: error %v does not wrap ErrCorrupt naming the file", g.name, what, r.key, err)
				}
			}
			return ok
		}
		flips, caught := 0, 0
		d := bytes.Clone(g.data)
		for p := range d {
			bit := byte(1) << (p % 8)
			d[p] ^= bit
			what := fmt.Sprintf("bit %d of byte %d flipped", p%8, p)
			f, err := rocksblob.New(bytes.NewReader(d), int64(len(d)), opt)
			flips++
			if err != nil {
				if !isCorrupt(err, g.name) && !(p == 13 && errors.Is(err, rocksblock.ErrUnsupportedCompression)) {
					t.Fatalf("%s %s: New: %v", g.name, what, err)
				}
				caught++
				d[p] ^= bit
				continue
			}
			// A record's damage leaves the other records readable.
			if ok := values(f, what, int64(len(d))); ok < len(g.refs)-1 && p != 13 {
				t.Errorf("%s %s: only %d of %d values read", g.name, what, ok, len(g.refs))
			}
			_, err = f.Verify()
			switch {
			case err != nil && !isCorrupt(err, g.name):
				t.Fatalf("%s %s: Verify: %v", g.name, what, err)
			case err != nil:
				caught++
			case p == 12 && bit != 1:
				// Bits 1 to 7 of the flags mean nothing to RocksDB.
			case p == 13:
				// The compression type has no CRC; Value compares it
				// with the index's, Verify can only try it.
				t.Logf("%s %s: Verify did not notice (decompression worked)", g.name, what)
			default:
				t.Errorf("%s %s: Verify found nothing", g.name, what)
			}
			d[p] ^= bit
		}
		t.Logf("%s: %d bit flips, %d caught by New or Verify", g.name, flips, caught)
		for n := range len(g.data) {
			what := fmt.Sprintf("truncated to %d bytes", n)
			r := bytes.NewReader(g.data[:n])
			if _, err := rocksblob.New(r, int64(n), opt); !isCorrupt(err, g.name) {
				t.Fatalf("%s %s: New: %v, want corruption", g.name, what, err)
			}
			// Read as a file still being written, the records whole
			// before the cut still read.
			o := *opt
			o.AllowNoFooter = true
			f, err := rocksblob.New(r, int64(n), &o)
			if n < rocksblob.HeaderLen {
				if !isCorrupt(err, g.name) {
					t.Fatalf("%s %s: New without footer: %v, want corruption", g.name, what, err)
				}
				continue
			}
			if err != nil || f.HasFooter() {
				t.Fatalf("%s %s: New without footer: %v, footer %v", g.name, what, err, f.HasFooter())
			}
			whole := 0
			for _, r := range g.refs {
				if int(r.idx.Offset+r.idx.Size) <= n {
					whole++
				}
			}
			if ok := values(f, what, int64(n)); ok != whole {
				t.Errorf("%s %s: %d values read, %d records are whole", g.name, what, ok, whole)
			}
			st, err := f.Verify()
			if err != nil && !isCorrupt(err, g.name) {
				t.Fatalf("%s %s: Verify: %v", g.name, what, err)
			}
			if err == nil && st.Records != int64(whole) {
				t.Errorf("%s %s: Verify counted %d records, %d are whole", g.name, what, st.Records, whole)
			}
		}
	}
}
