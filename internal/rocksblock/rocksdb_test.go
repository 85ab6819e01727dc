package rocksblock

// Tests against RocksDB itself. RocksDB 7.8.3 (Debian's librocksdb-dev):
// testdata/rbgen.cc, compiled at test time, computes block checksums with
// RocksDB's own function and writes tables over every checksum type x
// compression x format_version 0 to 5, with dictionaries; RocksDB 10.5.1
// (npm's rocksdb-native, testdata/rngen.cjs) writes format_version 2 to 7.
// Every block of every table must pass CheckBlock and Decompress, and the
// data blocks must hold what was written. Some of the tables are kept in
// testdata/golden (regenerate with -update-golden), so that the same
// walk runs without RocksDB. Without g++, RocksDB's headers, node or
// rocksdb-native the tests skip, unless SSTABLE_REQUIRE_ROCKSDB=1 (as in
// CI) makes that a failure.

import (
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/internal/oracletest"
)

var updateGolden = flag.Bool("update-golden", false, "copy the golden tables from freshly written RocksDB tables into testdata/golden")

// goldenNames are the tables kept in testdata/golden: each footer kind,
// each checksum type, each compression with its format_version 0/1 and
// 2+ framing, the dictionaries, a zlib-wrapped stream, and RocksDB
// 10.5's format_version 6 and 7 (context checksums).
var goldenNames = []string{
	"fv0-crc32c-0.sst", "fv0-crc32c-2.sst", "fv0-crc32c-3.sst", "fv0-crc32c-4.sst",
	"fv1-xxhash-5.sst", "fv1-none-1.sst", "fv1-xxhash64-7.sst",
	"fv2-xxhash64-2.sst", "fv2-crc32c-3.sst", "fv2-xxh3-4.sst",
	"fv3-xxhash-1.sst", "fv3-xxhash64-7.sst",
	"fv4-xxh3-5.sst", "fv4-none-3.sst",
	"fv5-xxh3-1.sst", "fv5-crc32c-7.sst", "fv5-xxhash-64.sst", "fv5-xxhash64-0.sst",
	"fv1-crc32c-2-raw.sst", "fv2-crc32c-7-raw.sst", "fv5-crc32c-4-raw.sst", "fv5-crc32c-5-raw.sst",
	"fv5-xxh3-7-train.sst", "fv5-xxh3-7-finalize.sst",
	"fv1-crc32c-2-zlibwrap.sst", "fv5-crc32c-2-zlibwrap.sst",
	"fv6-native.sst", "fv7-native.sst",
}

const goldenDir = "testdata/golden"

// requireRocksDB skips t, or fails it under SSTABLE_REQUIRE_ROCKSDB=1.
func requireRocksDB(t *testing.T, format string, args ...any) {
	t.Helper()
	oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB", "install g++, Debian's librocksdb-dev, node and rocksdb-native", format, args...)
}

// buildRBGen compiles testdata/rbgen.cc into a directory of t's.
func buildRBGen(t *testing.T) string {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8")
	gxx, err := exec.LookPath("g++")
	if err != nil {
		requireRocksDB(t, "no g++ (%v); install g++ and Debian's librocksdb-dev", err)
	}
	if _, err := os.Stat("/usr/include/rocksdb/sst_file_writer.h"); err != nil {
		requireRocksDB(t, "no RocksDB headers (%v); install Debian's librocksdb-dev", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "rbgen.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rbgen")
	start := time.Now()
	if out, err := exec.Command(gxx, "-O1", "-o", bin, src, "-lrocksdb").CombinedOutput(); err != nil {
		requireRocksDB(t, "g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
	}
	t.Logf("compiled rbgen in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// TestChecksumsAgainstRocksDB compares TrailerChecksum with RocksDB
// 7.8.3's ComputeBuiltinChecksumWithLastByte over random data of every
// length from 0 to 300 (each length class of XXH3 and the 4-, 16- and
// 32-byte strides of the others) and some longer, every checksum type,
// random type bytes.
func TestChecksumsAgainstRocksDB(t *testing.T) {
	bin := buildRBGen(t)
	rng := rand.New(rand.NewPCG(1, 2))
	type vec struct {
		c    ChecksumType
		data []byte
		last byte
	}
	var vecs []vec
	lengths := []int{1000, 1024, 4095, 4096, 4097, 10000}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for c := NoChecksum; c <= XXH3; c++ {
			d := make([]byte, n)
			for i := range d {
				d[i] = byte(rng.Uint32())
			}
			vecs = append(vecs, vec{c, d, byte(rng.Uint32())})
		}
	}
	var in strings.Builder
	for _, v := range vecs {
		h := hex.EncodeToString(v.data)
		if h == "" {
			h = "-"
		}
		fmt.Fprintf(&in, "%d %s %d\n", v.c, h, v.last)
	}
	cmd := exec.Command(bin, "checksum")
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rbgen checksum: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(vecs) {
		t.Fatalf("rbgen printed %d checksums for %d inputs", len(lines), len(vecs))
	}
	bad := 0
	for i, v := range vecs {
		want, err := strconv.ParseUint(lines[i], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		got, err := TrailerChecksum(v.c, v.data, v.last)
		if err != nil {
			t.Fatal(err)
		}
		if got != uint32(want) {
			if bad++; bad <= 10 {
				t.Errorf("%s of %d bytes + type byte %d: got %#08x, RocksDB %#08x", v.c, len(v.data), v.last, got, want)
			}
		}
		// Checksum (ComputeBuiltinChecksum) is the same function with
		// the last byte as part of the data.
		if all, err := Checksum(v.c, append(slices.Clone(v.data), v.last)); err != nil || all != uint32(want) {
			if bad++; bad <= 10 {
				t.Errorf("Checksum(%s) of %d bytes: got %#08x (%v), RocksDB %#08x", v.c, len(v.data)+1, all, err, want)
			}
		}
	}
	t.Logf("%d checksums compared with RocksDB's, %d differ", 2*len(vecs), bad)
}

// TestTablesOfRocksDB78 walks every table rbgen writes: 240 of the plain
// matrix and the dictionary and zlib-wrapped variants.
func TestTablesOfRocksDB78(t *testing.T) {
	bin := buildRBGen(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "tables", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rbgen tables: %v\n%s", err, stderr.Bytes())
	}
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "skip ") {
			t.Errorf("RocksDB refused a table: %s", l)
		}
	}
	specs := readManifest(t, filepath.Join(dir, "MANIFEST"))
	if len(specs) < 240 {
		t.Fatalf("rbgen wrote %d tables, want at least 240", len(specs))
	}
	all := walkDir(t, dir, specs)
	logTotals(t, all)
	if *updateGolden {
		copyGolden(t, dir, specs)
	}
}

// nativeModules returns the node_modules directory holding
// rocksdb-native: under $SSTABLE_ROCKSDB_NATIVE, package rocksdb's
// testdata/native (where .ci/run installs it), or /tmp/rnative.
func nativeModules() string {
	var parents []string
	if d := os.Getenv("SSTABLE_ROCKSDB_NATIVE"); d != "" {
		parents = append(parents, d)
	}
	parents = append(parents, filepath.Join("..", "..", "rocksdb", "testdata", "native"), "/tmp/rnative")
	for _, p := range parents {
		nm := filepath.Join(p, "node_modules")
		if _, err := os.Stat(filepath.Join(nm, "rocksdb-native", "package.json")); err == nil {
			if abs, err := filepath.Abs(nm); err == nil {
				return abs
			}
		}
	}
	return ""
}

// TestTablesOfRocksDB10 walks the tables RocksDB 10.5.1 writes at
// format_version 2 to 7: 6 and 7 with context checksums, the footer's own
// checksum and the index handle in the metaindex.
func TestTablesOfRocksDB10(t *testing.T) {
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 10.5.1")
	node, err := exec.LookPath("node")
	if err != nil {
		requireRocksDB(t, "no node (%v)", err)
	}
	modules := nativeModules()
	if modules == "" {
		requireRocksDB(t, "no node_modules/rocksdb-native under $SSTABLE_ROCKSDB_NATIVE, rocksdb/testdata/native or /tmp/rnative (npm install --ignore-scripts rocksdb-native@3.18.1)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "rngen.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, dir)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		requireRocksDB(t, "node %s: %v\n%s", script, err, stderr.Bytes())
	}
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	specs := readManifest(t, filepath.Join(dir, "MANIFEST"))
	if len(specs) != 6 {
		t.Fatalf("rngen wrote %d tables, want 6", len(specs))
	}
	all := walkDir(t, dir, specs)
	logTotals(t, all)
	if *updateGolden {
		copyGolden(t, dir, specs)
	}
}

// copyGolden copies the golden tables among specs from dir into
// testdata/golden and merges their manifest lines into its MANIFEST.
func copyGolden(t *testing.T, dir string, specs []tableSpec) {
	t.Helper()
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(goldenDir, "MANIFEST")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "table" {
				lines[f[1]] = l
			}
		}
	}
	for _, s := range specs {
		if !slices.Contains(goldenNames, s.name) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, s.name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= 8<<10 {
			t.Errorf("golden table %s is %d bytes, over 8 KiB", s.name, len(b))
			continue
		}
		if err := os.WriteFile(filepath.Join(goldenDir, s.name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		lines[s.name] = s.line
	}
	var out []string
	for _, n := range goldenNames {
		if l, ok := lines[n]; ok {
			out = append(out, l)
		}
	}
	head := "# The golden tables: what RocksDB 7.8.3 (testdata/rbgen.cc) and 10.5.1\n# (testdata/rngen.cjs) wrote; go test -run 'TestTablesOf' -update-golden\n# rewrites them.\n"
	if err := os.WriteFile(filepath.Join(goldenDir, "MANIFEST"), []byte(head+strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("updated %d golden tables", len(out))
}

func logTotals(t *testing.T, all map[string]walkStats) {
	t.Helper()
	var blocks, data, entries int
	byType := map[byte]int{}
	for _, st := range all {
		blocks += st.blocks
		data += st.data
		entries += st.entries
		for k, v := range st.byType {
			byType[k] += v
		}
	}
	var types []string
	for typ := range 256 {
		if n := byType[byte(typ)]; n > 0 {
			types = append(types, fmt.Sprintf("%s %d", CompressionName(byte(typ)), n))
		}
	}
	t.Logf("%d tables: %d blocks checked, %d data blocks with %d entries; data and index blocks by compression: %s",
		len(all), blocks, data, entries, strings.Join(types, ", "))
}

// TestGoldenTables walks the tables kept in testdata/golden, with or
// without RocksDB here.
func TestGoldenTables(t *testing.T) {
	specs := readManifest(t, filepath.Join(goldenDir, "MANIFEST"))
	if len(specs) != len(goldenNames) {
		t.Errorf("%d golden tables in the MANIFEST, want %d", len(specs), len(goldenNames))
	}
	all := walkDir(t, goldenDir, specs)
	logTotals(t, all)
	seenCk := map[string]bool{}
	seenComp := map[byte]bool{}
	for _, s := range specs {
		seenCk[s.checksum] = true
		seenComp[s.comp] = true
	}
	for c := NoChecksum; c <= XXH3; c++ {
		if !seenCk[c.String()] {
			t.Errorf("no golden table with checksum %s", c)
		}
	}
	for _, c := range []byte{NoCompression, Snappy, Zlib, BZip2, LZ4, LZ4HC, ZSTD, ZSTDNotFinal} {
		if !seenComp[c] {
			t.Errorf("no golden table compressed with %s", CompressionName(c))
		}
	}
}
