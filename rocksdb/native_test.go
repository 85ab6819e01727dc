package rocksdb_test

// Tests against RocksDB 10.5.1, the library inside npm's rocksdb-native
// 3.18.1 (a prebuilt binary, no compiler needed): testdata/native/write.cjs
// writes databases at format_version 2 to 7 (6 and 7 are what Debian's
// RocksDB 7.8.3 cannot write) with Bloom and Ribbon filters, flushes them,
// and prints what RocksDB itself reads from them. This package's reading
// of the same .sst files, stacked as merge levels in RocksDB's order, must
// match it line for line. Without node or the module the test skips,
// unless SSTABLE_REQUIRE_ROCKSDB=1 (as in CI) makes that a failure.
//
// The module is looked for under $SSTABLE_ROCKSDB_NATIVE/node_modules,
// then testdata/native/node_modules (where .ci/run installs it), then
// /tmp/rnative/node_modules.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// nativeCase is a case's case.json: the options write.cjs wrote with.
type nativeCase struct {
	RocksDB                  string `json:"rocksdb"`
	Binding                  string `json:"binding"`
	FormatVersion            uint32 `json:"formatVersion"`
	Filter                   string `json:"filter"` // "bloom", "ribbon" or "none"
	BitsPerKey               int    `json:"bitsPerKey"`
	BloomBeforeLevel         *int   `json:"bloomBeforeLevel"`
	BlockSize                int    `json:"blockSize"`
	OptimizeFiltersForMemory bool   `json:"optimizeFiltersForMemory"`
	Checksum                 string `json:"checksum"`
	Compression              string `json:"compression"`
	Compacted                bool   `json:"compacted"`
	Keys                     int    `json:"keys"`
}

// nativeFile is one line of files.txt: a live table as RocksDB lists it.
type nativeFile struct {
	Level                   int
	Number                  uint64
	Size                    int64
	SmallestSeq, LargestSeq uint64
	Name                    string
}

// nativeRequire skips t, or fails it under SSTABLE_REQUIRE_ROCKSDB=1.
func nativeRequire(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("SSTABLE_REQUIRE_ROCKSDB") == "1" {
		t.Fatalf("SSTABLE_REQUIRE_ROCKSDB=1 but %s", msg)
	}
	t.Skipf("skipping the tests against RocksDB 10.5.1: %s (install node and run `npm install --ignore-scripts rocksdb-native@3.18.1` in rocksdb/testdata/native; SSTABLE_REQUIRE_ROCKSDB=1 makes this a failure)", msg)
}

// nativeModules returns the node_modules directory that holds
// rocksdb-native, or "" when none does.
func nativeModules() string {
	var parents []string
	if d := os.Getenv("SSTABLE_ROCKSDB_NATIVE"); d != "" {
		parents = append(parents, d)
	}
	parents = append(parents, filepath.Join("testdata", "native"), "/tmp/rnative")
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

// TestNativeRocksDB writes every case of testdata/native/write.cjs with
// RocksDB 10.5.1 and checks this package's reading of its tables against
// RocksDB's own view.
func TestNativeRocksDB(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		nativeRequire(t, "no node: %v", err)
	}
	modules := nativeModules()
	if modules == "" {
		nativeRequire(t, "no node_modules/rocksdb-native under $SSTABLE_ROCKSDB_NATIVE, testdata/native or /tmp/rnative")
	}
	env := append(os.Environ(), "NODE_PATH="+modules)
	// A module present but unloadable here (no prebuilt binary for this
	// platform, libatomic missing) counts as missing.
	probe := exec.Command(node, "-e", "require('rocksdb-native')")
	probe.Env = env
	if out, err := probe.CombinedOutput(); err != nil {
		nativeRequire(t, "node cannot load rocksdb-native from %s: %v\n%s", modules, err, out)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "native", "write.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, out)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s%s", script, err, stdout, stderr.Bytes())
	}
	t.Logf("RocksDB 10.5.1 wrote the cases in %v:\n%s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(stdout)))
	cases, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		dir := filepath.Join(out, c.Name())
		nc := readNativeCase(t, dir)
		seen[nc.FormatVersion] = true
		t.Run(c.Name(), func(t *testing.T) { checkNativeCase(t, nc, dir, filepath.Join(dir, "sst")) })
	}
	for v := uint32(2); v <= 7; v++ {
		if !seen[v] {
			t.Errorf("no case at format_version %d", v)
		}
	}
}

// readNativeCase reads dir/case.json.
func readNativeCase(t *testing.T, dir string) nativeCase {
	t.Helper()
	var nc nativeCase
	raw, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &nc); err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	return nc
}

// checkNativeCase checks the tables in sstDir against what RocksDB
// printed into dir (files.txt, view.txt, gets.txt) for the case nc,
// reading them mapped and through ReadAt.
func checkNativeCase(t *testing.T, nc nativeCase, dir, sstDir string) {
	t.Helper()
	files := readNativeFiles(t, filepath.Join(dir, "files.txt"))
	view := readNativeLines(t, filepath.Join(dir, "view.txt"))
	gets := readNativeLines(t, filepath.Join(dir, "gets.txt"))
	checkNativeLayout(t, nc, files, sstDir)
	for _, noMmap := range []bool{false, true} {
		t.Run(map[bool]string{false: "mmap", true: "readat"}[noMmap], func(t *testing.T) {
			var levels []merge.Level
			for _, f := range files {
				tb, err := rocksdb.OpenTable(filepath.Join(sstDir, f.Name), &rocksdb.TableOptions{NoMmap: noMmap})
				if err != nil {
					t.Fatalf("OpenTable %s: %v", f.Name, err)
				}
				t.Cleanup(func() { tb.Close() })
				checkNativeTable(t, nc, f, tb, gets)
				l, err := tb.Level()
				if err != nil {
					t.Fatalf("%s: Level: %v", f.Name, err)
				}
				levels = append(levels, l)
			}
			checkNativeView(t, levels, view, gets)
		})
	}
}

// checkNativeLayout checks that sstDir holds exactly the tables RocksDB
// listed, at their sizes, and that the listing is in the order the merge
// stack needs: level by level, L0 newest first.
func checkNativeLayout(t *testing.T, nc nativeCase, files []nativeFile, sstDir string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(sstDir, "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(files) {
		t.Errorf("%d .sst files in %s, RocksDB lists %d", len(names), sstDir, len(files))
	}
	for i, f := range files {
		fi, err := os.Stat(filepath.Join(sstDir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != f.Size {
			t.Errorf("%s: %d bytes, RocksDB lists %d", f.Name, fi.Size(), f.Size)
		}
		if i == 0 {
			continue
		}
		p := files[i-1]
		switch {
		case f.Level < p.Level:
			t.Errorf("files.txt: %s (L%d) after %s (L%d)", f.Name, f.Level, p.Name, p.Level)
		case f.Level == 0 && p.Level == 0 && f.LargestSeq >= p.SmallestSeq:
			// RocksDB orders L0 by age; flushes' sequence numbers do
			// not overlap, so age is the sequence numbers' order.
			t.Errorf("files.txt: L0 %s (seq %d..%d) listed after %s (seq %d..%d), not older", f.Name, f.SmallestSeq, f.LargestSeq, p.Name, p.SmallestSeq, p.LargestSeq)
		}
	}
	// write.cjs flushes three memtables and holds a snapshot, so that no
	// compaction can start (RocksDB compacts L0 at four files): three
	// tables on L0. The compacted cases end with one bottommost level.
	for _, f := range files {
		if nc.Compacted && f.Level != files[len(files)-1].Level || !nc.Compacted && f.Level != 0 {
			t.Errorf("%s on L%d (compacted: %v)", f.Name, f.Level, nc.Compacted)
		}
	}
	if !nc.Compacted && len(files) != 3 {
		t.Errorf("%d tables, want the 3 flushes", len(files))
	}
}

// checkNativeTable checks one table on its own: its layout and RocksDB's
// options, Verify, its entries against RocksDB's counts and sequence
// number range, Get of every key it holds (so the filter never rejects
// one) and of the keys it lacks, and backward iteration.
func checkNativeTable(t *testing.T, nc nativeCase, f nativeFile, tb *rocksdb.Table, gets []string) {
	t.Helper()
	info := tb.Info()
	if info.FormatVersion != nc.FormatVersion {
		t.Errorf("%s: FormatVersion %d, RocksDB wrote %d", f.Name, info.FormatVersion, nc.FormatVersion)
	}
	if info.Checksum != nc.Checksum {
		t.Errorf("%s: Checksum %q, RocksDB wrote %q", f.Name, info.Checksum, nc.Checksum)
	}
	if info.Size != f.Size {
		t.Errorf("%s: Size %d, want %d", f.Name, info.Size, f.Size)
	}
	if (info.Filter == "") != (nc.Filter == "none") {
		t.Errorf("%s: Filter %q, RocksDB wrote filter %q", f.Name, info.Filter, nc.Filter)
	}
	if info.Comparator != "leveldb.BytewiseComparator" {
		t.Errorf("%s: Comparator %q", f.Name, info.Comparator)
	}
	if n, err := tb.Verify(); err != nil || n <= 0 {
		t.Errorf("%s: Verify = %d, %v", f.Name, n, err)
	}

	props := map[string][]byte{}
	for _, p := range tb.Properties() {
		props[p.Name] = p.Value
	}
	num := func(name string) uint64 {
		t.Helper()
		v, n := binary.Uvarint(props[name])
		if n <= 0 || n != len(props[name]) {
			t.Fatalf("%s: property %s = %x, not a varint", f.Name, name, props[name])
		}
		return v
	}
	wantPolicy := map[string]string{"bloom": "bloomfilter", "ribbon": "ribbonfilter"}[nc.Filter]
	if got := string(props["rocksdb.filter.policy"]); got != wantPolicy {
		t.Errorf("%s: property rocksdb.filter.policy %q, want %q", f.Name, got, wantPolicy)
	}

	// Every internal entry: user keys ascending, each key's versions
	// newest first.
	type version struct {
		seq   uint64
		kind  rocksdb.Kind
		value []byte
	}
	var (
		keys     [][]byte
		versions = map[string][]version{}
		deletes  uint64
		points   uint64
		minSeq   = uint64(rocksdb.MaxSequence)
		maxSeq   uint64
	)
	it := tb.NewIter(nil)
	var prevKey []byte
	var prevSeq uint64
	for ok := it.First(); ok; ok = it.Next() {
		k, s := it.Key(), it.Seq()
		switch c := bytes.Compare(k, prevKey); {
		case points > 0 && c < 0, points > 0 && c == 0 && s >= prevSeq:
			t.Fatalf("%s: entry %x @%d after %x @%d", f.Name, k, s, prevKey, prevSeq)
		case points == 0 || c > 0:
			keys = append(keys, slices.Clone(k))
		}
		prevKey, prevSeq = slices.Clone(k), s
		points++
		switch it.Kind() {
		case rocksdb.KindValue:
		case rocksdb.KindDeletion:
			deletes++
		default:
			t.Errorf("%s: %x @%d is a %s; RocksDB was given puts, deletes and range deletions only", f.Name, k, s, it.Kind())
		}
		versions[string(k)] = append(versions[string(k)], version{s, it.Kind(), slices.Clone(it.Value())})
		minSeq, maxSeq = min(minSeq, s), max(maxSeq, s)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: iterator: %v", f.Name, err)
	}
	rds, err := tb.RangeDeletions()
	if err != nil {
		t.Fatalf("%s: RangeDeletions: %v", f.Name, err)
	}
	for _, rd := range rds {
		minSeq, maxSeq = min(minSeq, rd.Seq), max(maxSeq, rd.Seq)
	}
	// RocksDB counts a range deletion among the entries and the deletions
	// (BlockBasedTableBuilder::Add).
	ranges := num("rocksdb.num.range-deletions")
	if got := uint64(len(rds)); got != ranges {
		t.Errorf("%s: %d range deletions, RocksDB counts %d", f.Name, got, ranges)
	}
	if want := num("rocksdb.num.entries") - ranges; points != want {
		t.Errorf("%s: %d point entries, RocksDB counts %d", f.Name, points, want)
	}
	if want := num("rocksdb.deleted.keys") - ranges; deletes != want {
		t.Errorf("%s: %d deletions, RocksDB counts %d", f.Name, deletes, want)
	}
	if minSeq != f.SmallestSeq || maxSeq != f.LargestSeq {
		t.Errorf("%s: sequence numbers %d..%d, RocksDB's manifest says %d..%d", f.Name, minSeq, maxSeq, f.SmallestSeq, f.LargestSeq)
	}

	// Get of every version the table holds, then of RocksDB's probe keys
	// it does not hold. Keys under one of the table's range deletions are
	// left to the merged view: what Get reports for them is a choice of
	// this package's, not RocksDB's.
	ranged := func(k []byte) bool {
		for _, rd := range rds {
			if bytes.Compare(rd.Start, k) <= 0 && bytes.Compare(k, rd.End) < 0 {
				return true
			}
		}
		return false
	}
	for _, k := range keys {
		if ranged(k) {
			continue
		}
		vs := versions[string(k)]
		for i, v := range vs {
			at := uint64(rocksdb.MaxSequence)
			if i > 0 {
				at = vs[i-1].seq - 1
			}
			e, err := tb.Get(k, at)
			if err != nil || e.Seq != v.seq || e.Kind != v.kind || !bytes.Equal(e.Value, v.value) || !bytes.Equal(e.Key, k) {
				t.Errorf("%s: Get(%x, %d) = %x @%d %s %x, %v; the iterator has @%d %s %x", f.Name, k, at, e.Key, e.Seq, e.Kind, e.Value, err, v.seq, v.kind, v.value)
			}
		}
		if last := vs[len(vs)-1].seq; last > 0 {
			if e, err := tb.Get(k, last-1); !errors.Is(err, reader.ErrNotFound) {
				t.Errorf("%s: Get(%x, %d) below its oldest version = %x @%d %s, %v; want reader.ErrNotFound", f.Name, k, last-1, e.Key, e.Seq, e.Kind, err)
			}
		}
	}
	for _, line := range gets {
		hk, _, _ := strings.Cut(line, "\t")
		k := nativeUnhex(t, hk)
		if _, ok := versions[string(k)]; ok || ranged(k) {
			continue
		}
		if e, err := tb.Get(k, rocksdb.MaxSequence); !errors.Is(err, reader.ErrNotFound) {
			t.Errorf("%s: Get(%x) of a key the table lacks = %x @%d %s, %v; want reader.ErrNotFound", f.Name, k, e.Key, e.Seq, e.Kind, err)
		}
	}

	// Backward: the same entries in reverse.
	it = tb.NewIter(nil)
	n := points
	for ok := it.Last(); ok; ok = it.Prev() {
		if n == 0 {
			t.Fatalf("%s: backward iteration yields more than the %d entries forward", f.Name, points)
		}
		n--
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: backward iterator: %v", f.Name, err)
	}
	if n != 0 {
		t.Errorf("%s: backward iteration yields %d entries, forward %d", f.Name, points-n, points)
	}
}

// checkNativeView checks the merged stack against RocksDB's iterator
// (both directions) and RocksDB's Gets.
func checkNativeView(t *testing.T, levels []merge.Level, view, gets []string) {
	t.Helper()
	line := func(it *merge.Iterator) string {
		return hex.EncodeToString(it.Key()) + "\t" + hex.EncodeToString(it.Value())
	}
	it := merge.NewIterator(levels, rocksdb.MergeOptions())
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, line(it))
	}
	if err := it.Close(); err != nil {
		t.Fatalf("merged iterator: %v", err)
	}
	nativeDiff(t, "merged view, forward", got, view)

	it = merge.NewIterator(levels, rocksdb.MergeOptions())
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, line(it))
	}
	if err := it.Close(); err != nil {
		t.Fatalf("merged iterator, backward: %v", err)
	}
	slices.Reverse(got)
	nativeDiff(t, "merged view, backward", got, view)

	bad := 0
	for _, l := range gets {
		hk, want, _ := strings.Cut(l, "\t")
		k := nativeUnhex(t, hk)
		v, err := merge.Get(levels, k, rocksdb.MergeOptions())
		have := hex.EncodeToString(v)
		switch {
		case errors.Is(err, reader.ErrNotFound):
			have = "-"
		case err != nil:
			have = "error " + err.Error()
		}
		if have != want {
			if bad++; bad <= 10 {
				t.Errorf("Get(%s) = %s, RocksDB reads %s", hk, nativeShort(have), nativeShort(want))
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d of %d Gets differ from RocksDB's", bad, len(gets))
	}
}

// nativeDiff reports the first lines where got and want differ.
func nativeDiff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < 5; i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s, line %d: got %s, RocksDB shows %s", what, i+1, nativeShort(g), nativeShort(w))
			shown++
		}
	}
	t.Errorf("%s: %d lines, RocksDB's view has %d", what, len(got), len(want))
}

// nativeShort truncates a long hex line for a message.
func nativeShort(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func nativeUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// readNativeLines returns a file's lines.
func readNativeLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return lines
}

// readNativeFiles parses files.txt.
func readNativeFiles(t *testing.T, path string) []nativeFile {
	t.Helper()
	var files []nativeFile
	for _, l := range readNativeLines(t, path) {
		f := strings.Fields(l)
		if len(f) != 6 {
			t.Fatalf("%s: bad line %q", path, l)
		}
		var nums [5]uint64
		for i := range nums {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				t.Fatalf("%s: bad line %q: %v", path, l, err)
			}
			nums[i] = v
		}
		files = append(files, nativeFile{Level: int(nums[0]), Number: nums[1], Size: int64(nums[2]), SmallestSeq: nums[3], LargestSeq: nums[4], Name: f[5]})
	}
	if len(files) == 0 {
		t.Fatalf("%s: no tables", path)
	}
	return files
}
