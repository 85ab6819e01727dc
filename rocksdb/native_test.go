package rocksdb_test

// Tests against RocksDB 10.5.1, the library inside npm's rocksdb-native
// 3.18.1 (a prebuilt binary, no compiler needed): testdata/native/write.cjs
// writes databases at format_version 2 to 7 (6 and 7 are what Debian's
// RocksDB 7.8.3 cannot write) with Bloom and Ribbon filters, flushes them,
// some with a log tail and column families, and prints what RocksDB itself
// reads from them. This package's reading of the same .sst files, stacked
// as merge levels in RocksDB's order, must match it line for line, and so
// must OpenDB's reading of each whole database directory (its log tail
// replayed) match RocksDB's read-only open of a copy, and its reading of
// damaged copies of a log RocksDB's reading of the same copies. Without
// node or the module the test skips, unless SSTABLE_REQUIRE_ROCKSDB=1 (as
// in CI) makes that a failure.
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
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/oracletest"
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
	// Defaults: the binding gave RocksDB no table options but the
	// format_version. Tail: writes after the last flush left only in the
	// write-ahead log.
	Defaults bool `json:"defaults"`
	Tail     bool `json:"tail"`
	// ColumnFamilies in creation order, "default" first, and how many
	// entries each family's memtables held once RocksDB's read-only open
	// had replayed the logs.
	ColumnFamilies []string       `json:"columnFamilies"`
	LogEntries     map[string]int `json:"logEntries"`
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
	oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 10.5.1", "install node and run `npm install --ignore-scripts rocksdb-native@3.18.1` in rocksdb/testdata/native", format, args...)
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
// RocksDB 10.5.1 and checks this package's reading of its tables and of
// its whole database directory against RocksDB's own view, then damages
// a log tail.
func TestNativeRocksDB(t *testing.T) {
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 10.5.1")
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
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("node %s: %v\n%s%s", script, err, stdout, stderr.Bytes())
		}
		return stdout, nil
	}
	start := time.Now()
	stdout, err := run(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RocksDB 10.5.1 wrote the cases in %v:\n%s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(stdout)))
	cases, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	tails := map[string]bool{}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		dir := filepath.Join(out, c.Name())
		nc := readNativeCase(t, dir)
		seen[nc.FormatVersion] = true
		if nc.Tail {
			tails[fmt.Sprintf("format_version %d", nc.FormatVersion)] = true
			tails["defaults"] = tails["defaults"] || nc.Defaults
			tails["column families"] = tails["column families"] || len(nc.ColumnFamilies) > 1
			tails["compacted"] = tails["compacted"] || nc.Compacted
		}
		t.Run(c.Name(), func(t *testing.T) {
			checkNativeCase(t, nc, dir, filepath.Join(dir, "sst"))
			t.Run("db", func(t *testing.T) {
				checkNativeDB(t, nc, filepath.Join(dir, "db"), filepath.Join(dir, "db-want.txt"))
			})
		})
	}
	for v := uint32(2); v <= 7; v++ {
		if !seen[v] {
			t.Errorf("no case at format_version %d", v)
		}
	}
	for _, k := range []string{"format_version 6", "format_version 7", "defaults", "column families", "compacted"} {
		if !tails[k] {
			t.Errorf("no case with a log tail and %s", k)
		}
	}
	// Damaged logs, in a small database whose one log has records ending
	// at every kind of block end.
	t.Run("damaged-log", func(t *testing.T) {
		small := t.TempDir()
		const name = "fv7-defaults-tail"
		if _, err := run(small, "-small", name); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(small, name)
		checkNativeDB(t, readNativeCase(t, dir), filepath.Join(dir, "db"), filepath.Join(dir, "db-want.txt"))
		testNativeDamage(t, script, env, dir)
	})
}

// testNativeDamage flips bits in and truncates the newest log of the
// database in dir/db, each damaged version in a copy of its own: OpenDB
// must refuse it with an error wrapping format.ErrCorrupt that names the
// log, or read exactly what RocksDB 10.5.1's read-only open reads from the
// same copy (point-in-time recovery: the replay ends at the first damaged
// record), and refuse what RocksDB refuses; never panic.
//
// Damage to an older log, before a newer one, is not checked yet:
// RocksDB refuses such a database when a column family's tables hold
// writes past the damage ("SST file is ahead of WALs"), which OpenDB
// does not yet do.
func testNativeDamage(t *testing.T, script string, env []string, dir string) {
	db := filepath.Join(dir, "db")
	logs, err := filepath.Glob(filepath.Join(db, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no log in %s (%v)", db, err)
	}
	slices.Sort(logs)
	file := filepath.Base(logs[len(logs)-1])
	data, err := os.ReadFile(logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	const block = 32 << 10 // the log's block size
	// Flips: the first record's header (checksum, length, type) and the
	// first bytes of its batch (sequence number, count); at each block's
	// end its last 7 bytes (a zero trailer, an empty first fragment's
	// header) and the next block's first header's length and type; the
	// last bytes and a sampling of the rest. Cuts: inside the first
	// header, around each block end, the last bytes, a sampling.
	rng := rand.New(rand.NewPCG(uint64(len(data)), 48))
	flips := []int{0, 4, 5, 6, 7, 14, 18}
	cuts := []int{0, 1, 6, 7, 8, 20}
	for end := block; end-block < len(data); end += block {
		for d := -7; d < 0; d++ {
			flips = append(flips, end+d)
		}
		flips = append(flips, end+4, end+6)
		cuts = append(cuts, end-3, end, end+7)
	}
	flips = append(flips, len(data)-1, len(data)-2)
	cuts = append(cuts, len(data)-1, len(data)-7)
	for range 8 {
		flips = append(flips, rng.IntN(len(data)))
		cuts = append(cuts, rng.IntN(len(data)))
	}
	var vs []*nativeVariant
	slices.Sort(flips)
	for _, p := range slices.Compact(flips) {
		if p >= 0 && p < len(data) {
			b := bytes.Clone(data)
			bit := byte(1) << rng.IntN(8)
			b[p] ^= bit
			vs = append(vs, &nativeVariant{what: fmt.Sprintf("%s with byte %d ^= %#x", file, p, bit), data: b})
		}
	}
	slices.Sort(cuts)
	for _, n := range slices.Compact(cuts) {
		if n >= 0 && n < len(data) {
			vs = append(vs, &nativeVariant{what: fmt.Sprintf("%s cut to %d of %d bytes", file, n, len(data)), data: data[:n:n]})
		}
	}

	// Each variant in a copy (the other files hard-linked), RocksDB's
	// reading of them all in one run.
	work := t.TempDir()
	wantPath := filepath.Join(dir, "db-want.txt")
	for i, v := range vs {
		v.dir = filepath.Join(work, strconv.Itoa(i))
		copyDBODir(t, db, v.dir, true)
		target := filepath.Join(v.dir, file)
		os.Remove(target) // a hard link: replace, not write through
		if err := os.WriteFile(target, v.data, 0o644); err != nil {
			t.Fatal(err)
		}
		v.want = filepath.Join(work, fmt.Sprintf("%d.want", i))
	}
	start := time.Now()
	hung := nativeReadCopies(t, script, env, wantPath, vs)
	rocksTime := time.Since(start)

	orig := readDBODump(t, wantPath)
	var oursRefused, rocksRefused, rocksLost, same, failures int
	for _, v := range vs {
		if hung[v] {
			// RocksDB has no answer; ours must still give one.
			if _, err := dboReadDamaged(v.dir, orig); err != nil && !errors.Is(err, format.ErrCorrupt) {
				t.Errorf("%s (RocksDB spins opening it): error %v wraps no format.ErrCorrupt", v.what, err)
			}
			continue
		}
		want := readDBODump(t, v.want)
		if want.openErr != "" {
			rocksRefused++
		} else if nativeLost(want, orig) {
			rocksLost++
		}
		fail := func(format string, args ...any) {
			failures++
			if failures <= 5 {
				t.Errorf("%s: %s", v.what, fmt.Sprintf(format, args...))
			}
		}
		got, err := dboReadDamaged(v.dir, want)
		switch {
		case err != nil:
			oursRefused++
			if !errors.Is(err, format.ErrCorrupt) || !strings.Contains(err.Error(), file) {
				fail("error %v (%T) does not wrap format.ErrCorrupt naming %s; RocksDB: %s", err, err, file, dboOutcome(want))
			}
		case want.openErr != "":
			fail("OpenDB reads the damaged database, RocksDB refuses it: %s", want.openErr)
		default:
			if d := dboDiff(got, want); d != "" {
				fail("our reading differs from RocksDB's of the same damaged copy: %s", d)
			} else {
				same++
			}
		}
	}
	if failures > 5 {
		t.Errorf("... %d failures in all", failures)
	}
	t.Logf("%s: %d damaged versions of %d bytes: RocksDB refused %d, lost data in %d and spun on %d (in %v); ours refused %d and read %d as RocksDB does",
		file, len(vs), len(data), rocksRefused, rocksLost, len(hung), rocksTime.Round(time.Millisecond), oursRefused, same)
}

// nativeLost reports whether the views of a damaged copy differ from the
// undamaged database's (the copies' readings have no Gets).
func nativeLost(damaged, orig *dboDump) bool {
	if !slices.Equal(damaged.names(), orig.names()) {
		return true
	}
	for i, c := range damaged.cfs {
		if !slices.Equal(c.view, orig.cfs[i].view) {
			return true
		}
	}
	return false
}

// nativeVariant is a damaged copy of a database.
type nativeVariant struct {
	what string // the damage
	data []byte // the damaged file
	dir  string // the copy holding it
	want string // RocksDB's reading of the copy
}

// nativeHang is how long RocksDB may take to open one damaged copy before
// it counts as spinning: the undamaged databases open in well under a
// second.
const nativeHang = 3 * time.Second

// nativeReadCopies runs write.cjs -read over the variants, want naming
// the undamaged database's db-want.txt. RocksDB 10.5.1 spins forever
// opening some damaged logs (a corrupted record type inside a fragmented
// record; facebook/rocksdb#13333): when a copy takes longer than
// nativeHang, it kills node, notes the copy and goes on with the next.
// It returns the copies RocksDB spun on.
func nativeReadCopies(t *testing.T, script string, env []string, want string, vs []*nativeVariant) map[*nativeVariant]bool {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	hung := map[*nativeVariant]bool{}
	for rest := vs; len(rest) > 0; {
		args := []string{script, "-read", want}
		for _, v := range rest {
			args = append(args, v.dir, v.want)
		}
		cmd := exec.Command(node, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		done := 0
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				if done >= len(rest) || l != "done "+rest[done].want {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("node -read: unexpected output %q", l)
				}
				done++
			case <-time.After(nativeHang):
				cmd.Process.Kill()
				for range lines {
				}
				break wait
			}
		}
		err = cmd.Wait()
		switch {
		case done == len(rest):
			if err != nil {
				t.Fatalf("node -read: %v\n%s", err, stderr.Bytes())
			}
			rest = nil
		default:
			// Killed, or failed, on rest[done]: a spin if it was killed.
			if !strings.Contains(fmt.Sprint(err), "killed") {
				t.Fatalf("node -read on %s: %v\n%s", rest[done].what, err, stderr.Bytes())
			}
			hung[rest[done]] = true
			rest = rest[done+1:]
		}
	}
	return hung
}

// checkNativeDB checks OpenDB's reading of the database directory dbDir
// against RocksDB's read-only open of a copy of it, printed into wantPath
// (db-want.txt): every column family's view forward and backward, Gets,
// seeks and the merge levels (checkDBOracle, which also checks that the
// directory is left byte for byte as it was), then the families and the
// number of entries replayed from the logs into each.
func checkNativeDB(t *testing.T, nc nativeCase, dbDir, wantPath string) {
	want := readDBODump(t, wantPath)
	if !slices.Equal(want.names(), nc.ColumnFamilies) {
		t.Fatalf("%s has column families %q, case.json %q", wantPath, want.names(), nc.ColumnFamilies)
	}
	before := dirHashes(t, dbDir)
	st := checkDBOracle(t, dbDir, want)
	db, err := rocksdb.OpenDB(dbDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.ColumnFamilies(); !slices.Equal(got, nc.ColumnFamilies) {
		t.Errorf("ColumnFamilies() = %q, RocksDB has %q", got, nc.ColumnFamilies)
	}
	// RocksDB's count of a family's memtable entries is what its
	// read-only open replayed from the logs, range deletions included.
	for _, cf := range nc.ColumnFamilies {
		want, ok := nc.LogEntries[cf]
		if !ok {
			t.Fatalf("case.json: no logEntries for column family %q", cf)
		}
		if got := db.LogEntries(cf); got != want {
			t.Errorf("LogEntries(%q) = %d, RocksDB replayed %d entries into its memtables", cf, got, want)
		}
	}
	if nc.Tail && db.LogEntries(rocksdb.DefaultColumnFamily) == 0 {
		t.Errorf("a case with a log tail, but nothing replayed from the logs")
	}
	if d := diffHashes(before, dirHashes(t, dbDir)); len(d) > 0 {
		t.Errorf("reading the database changed its directory: %v", d)
	}
	t.Logf("%d column families, %d live keys, %d Gets, log entries %v", st.families, st.keys, st.gets, nc.LogEntries)
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
