package rocksdb_test

// The database reader against RocksDB 7.8.3 itself (Debian's
// librocksdb-dev): the program testdata/dboracle/dboracle.cc, compiled at
// test time, writes databases by seeded random workloads (column families
// dropped and re-created, merges through RocksDB's string-append and
// uint64-add operators, single deletes, range deletions, blob files, level
// 0 and deeper tables, recycled logs, a last batch left in the log) and
// prints what DB::OpenForReadOnly reads from a copy of each: every column
// family's view and Gets of present, deleted and absent keys. OpenDB's
// reading of the original directory must match it line for line, leave
// the directory byte for byte as it was, refuse a database a RocksDB
// process holds, and give damaged MANIFESTs and logs either a corruption
// error or RocksDB's own reading of the same damaged copy. Without g++ or
// RocksDB's headers the tests skip, unless SSTABLE_REQUIRE_ROCKSDB=1 (as
// in CI) makes that a failure.
//
// checkDBOracle also runs over the small databases of
// testdata/golden/db-7.8.3 (dbgolden_test.go), without RocksDB.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// dbOracle is the compiled dboracle program.
type dbOracle struct{ bin string }

// newDBOracle compiles testdata/dboracle/dboracle.cc into a directory of
// t's, or skips t (fails it under SSTABLE_REQUIRE_ROCKSDB=1) when it
// cannot.
func newDBOracle(t *testing.T) *dbOracle {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8's databases")
	missing := func(format string, args ...any) {
		t.Helper()
		oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8's databases", "install g++ and Debian's librocksdb-dev", format, args...)
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		missing("no g++: %v", err)
	}
	if _, err := os.Stat("/usr/include/rocksdb/db.h"); err != nil {
		missing("no RocksDB headers: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "dboracle", "dboracle.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "dboracle")
	start := time.Now()
	out, err := exec.Command(gxx, "-O1", "-std=c++17", "-o", bin, src, "-lrocksdb").CombinedOutput()
	if err != nil {
		missing("g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
	}
	t.Logf("compiled the RocksDB database oracle in %v", time.Since(start).Round(time.Millisecond))
	return &dbOracle{bin: bin}
}

// run runs the oracle; an exit status other than 0 is an error carrying
// its standard error.
func (o *dbOracle) run(args ...string) ([]byte, error) {
	cmd := exec.Command(o.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("dboracle %.200s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// dbMergeOperators are the oracle's column families' operators, by the
// family names dboracle.cc gives them.
func dbMergeOperators() map[string]rocksdb.MergeOperator {
	return map[string]rocksdb.MergeOperator{
		"cf-with-append": rocksdb.StringAppendOperator(","),
		"cf-with-add":    rocksdb.UInt64AddOperator(),
	}
}

// ---------------------------------------------------------------- the oracle's files

// dboDump is a dump (want) or final file: a reading of a database.
type dboDump struct {
	openErr string // "@open-error": RocksDB could not open it
	lastSeq uint64
	hasSeq  bool
	cfs     []*dboCF
	touched []string // files the read-only open created, changed or removed in its copy
}

// dboCF is one column family's part of a dump.
type dboCF struct {
	name    string
	view    []string // "hexkey<TAB>hexvalue"
	viewErr string   // the iterator's error; "" when none
	gets    []string // "hexkey<TAB>hexvalue", "hexkey<TAB>-" or "hexkey<TAB>!error MSG"
	probes  [][]byte // the keys of gets
	// For a family with a merge operator (hasMerged): the keys RocksDB
	// merged reading the view, in order, and those whose Get merged: the
	// reads that need the operator.
	hasMerged  bool
	mergedView []string
	mergedGets map[string]bool
}

func (d *dboDump) cf(name string) *dboCF {
	for _, c := range d.cfs {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (d *dboDump) names() []string {
	var ns []string
	for _, c := range d.cfs {
		ns = append(ns, c.name)
	}
	return ns
}

func dboLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func readDBODump(t testing.TB, path string) *dboDump {
	t.Helper()
	d := &dboDump{}
	var cur *dboCF
	section := ""
	for _, line := range dboLines(t, path) {
		if rest, ok := strings.CutPrefix(line, "@"); ok {
			word, arg, _ := strings.Cut(rest, " ")
			switch word {
			case "open-error":
				d.openErr = arg
			case "lastseq":
				n, err := strconv.ParseUint(arg, 10, 64)
				if err != nil {
					t.Fatalf("%s: %q", path, line)
				}
				d.lastSeq, d.hasSeq = n, true
			case "touched":
				d.touched = append(d.touched, arg)
			case "cf":
				cur = &dboCF{name: arg, mergedGets: map[string]bool{}}
				d.cfs = append(d.cfs, cur)
				section = ""
			case "view", "gets", "merged-view", "merged-gets":
				if cur == nil {
					t.Fatalf("%s: %q before a column family", path, line)
				}
				section = word
				if strings.HasPrefix(word, "merged-") {
					cur.hasMerged = true
				}
			default:
				t.Fatalf("%s: unknown line %q", path, line)
			}
			continue
		}
		if cur == nil || section == "" {
			t.Fatalf("%s: %q outside a section", path, line)
		}
		switch section {
		case "view":
			switch {
			case line == "!ok":
			case strings.HasPrefix(line, "!error "):
				cur.viewErr = strings.TrimPrefix(line, "!error ")
			default:
				cur.view = append(cur.view, line)
			}
		case "gets":
			hk, _, ok := strings.Cut(line, "\t")
			k, err := hex.DecodeString(hk)
			if !ok || err != nil {
				t.Fatalf("%s: get line %q", path, line)
			}
			cur.gets = append(cur.gets, line)
			cur.probes = append(cur.probes, k)
		case "merged-view":
			cur.mergedView = append(cur.mergedView, line)
		case "merged-gets":
			cur.mergedGets[line] = true
		}
	}
	return d
}

// dboInfo is an info file: the workload's settings and what it left.
type dboInfo struct {
	config  map[string]string
	lastSeq uint64
	levels  map[string]map[string]int // family -> "L0", "L1"... and "blobs" -> count
	wals    map[string]int64          // log file -> size
}

func readDBOInfo(t testing.TB, path string) dboInfo {
	t.Helper()
	in := dboInfo{config: map[string]string{}, levels: map[string]map[string]int{}, wals: map[string]int64{}}
	for _, line := range dboLines(t, path) {
		f := strings.Fields(line)
		switch {
		case f[0] == "config":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				in.config[k] = v
			}
		case f[0] == "lastseq" && len(f) == 2:
			in.lastSeq, _ = strconv.ParseUint(f[1], 10, 64)
		case f[0] == "cf" && len(f) >= 3 && f[2] == "levels":
			m := map[string]int{}
			for _, kv := range f[3:] {
				k, v, _ := strings.Cut(kv, "=")
				m[k], _ = strconv.Atoi(v)
			}
			in.levels[f[1]] = m
		case f[0] == "wal" && len(f) == 3:
			in.wals[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		default:
			t.Fatalf("%s: info line %q", path, line)
		}
	}
	return in
}

// ---------------------------------------------------------------- our reading

// dboRead reads db as the oracle prints a database: every column
// family's forward view, then a Get per probe of like's family of the
// same name. The first error other than a key not found stops it.
func dboRead(db *rocksdb.DB, like *dboDump) (*dboDump, error) {
	d := &dboDump{lastSeq: db.LastSequence(), hasSeq: true}
	for _, name := range db.ColumnFamilies() {
		c := &dboCF{name: name}
		d.cfs = append(d.cfs, c)
		lines, err := dboView(db, name, false)
		if err != nil {
			return d, fmt.Errorf("column family %q: view: %w", name, err)
		}
		c.view = lines
		if lc := like.cf(name); lc != nil {
			for _, k := range lc.probes {
				v, err := db.Get(name, k)
				switch {
				case errors.Is(err, reader.ErrNotFound):
					c.gets = append(c.gets, hex.EncodeToString(k)+"\t-")
				case err != nil:
					return d, fmt.Errorf("column family %q: Get(%x): %w", name, k, err)
				default:
					c.gets = append(c.gets, hex.EncodeToString(k)+"\t"+hex.EncodeToString(v))
				}
				c.probes = append(c.probes, k)
			}
		}
	}
	return d, nil
}

// dboView reads column family cf's view through DB.NewIterator, forward
// or backward (then put back in order). On an error it returns the lines
// read before it.
func dboView(db *rocksdb.DB, cf string, backward bool) ([]string, error) {
	it, err := db.NewIterator(cf, nil)
	if err != nil {
		return nil, err
	}
	return dboIterLines(it, backward)
}

func dboIterLines(it *merge.Iterator, backward bool) ([]string, error) {
	var lines []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			lines = append(lines, hex.EncodeToString(it.Key())+"\t"+hex.EncodeToString(it.Value()))
		}
		slices.Reverse(lines)
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			lines = append(lines, hex.EncodeToString(it.Key())+"\t"+hex.EncodeToString(it.Value()))
		}
	}
	err := it.Err()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return lines, err
}

// dboDiff reports the first difference between two readings of a
// database ("" when none): the column families, the last sequence
// number, each family's view and Gets (an error is compared as such, not
// by its message).
func dboDiff(got, want *dboDump) string {
	if g, w := got.names(), want.names(); !slices.Equal(g, w) {
		return fmt.Sprintf("column families %q, want %q", g, w)
	}
	if got.hasSeq && want.hasSeq && got.lastSeq != want.lastSeq {
		return fmt.Sprintf("last sequence number %d, want %d", got.lastSeq, want.lastSeq)
	}
	errLine := func(l string) string {
		if k, v, ok := strings.Cut(l, "\t"); ok && strings.HasPrefix(v, "!error") {
			return k + "\t!error"
		}
		return l
	}
	for i, w := range want.cfs {
		g := got.cfs[i]
		if d := oracleDiff(g.view, w.view); d != "" {
			return fmt.Sprintf("column family %q: view: %s", w.name, d)
		}
		if (g.viewErr == "") != (w.viewErr == "") {
			return fmt.Sprintf("column family %q: view error %q, want %q", w.name, g.viewErr, w.viewErr)
		}
		var gg, wg []string
		for _, l := range g.gets {
			gg = append(gg, errLine(l))
		}
		for _, l := range w.gets {
			wg = append(wg, errLine(l))
		}
		if d := oracleDiff(gg, wg); d != "" {
			return fmt.Sprintf("column family %q: gets: %s", w.name, d)
		}
	}
	return ""
}

// dirHashes hashes every file of dir by name.
func dirHashes(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = sha256.Sum256(b)
	}
	return m
}

func diffHashes(before, after map[string][32]byte) []string {
	var d []string
	for n, h := range after {
		if b, ok := before[n]; !ok {
			d = append(d, n+" created")
		} else if b != h {
			d = append(d, n+" changed")
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			d = append(d, n+" removed")
		}
	}
	sort.Strings(d)
	return d
}

// ---------------------------------------------------------------- the checks

// dboStats counts what a database gave the checks.
type dboStats struct {
	families, keys, gets, mergedKeys, unresolved int
}

// checkDBOracle compares OpenDB's reading of the database in dir with
// RocksDB's (want): the column families and the last sequence number;
// each family's view through DB.NewIterator forward and backward and
// through merge.NewIterator over Levels; DB.Get and merge.Get of every
// probe; seeks; without merge operators, an error wrapping
// rocksdb.ErrUnresolved exactly where RocksDB needs its operator; and
// the directory unchanged.
func checkDBOracle(t *testing.T, dir string, want *dboDump) dboStats {
	var st dboStats
	if want.openErr != "" {
		t.Fatalf("RocksDB could not open the database: %s", want.openErr)
	}
	before := dirHashes(t, dir)
	ops := dbMergeOperators()
	for _, noMmap := range []bool{false, true} {
		name := fmt.Sprintf("NoMmap=%v", noMmap)
		db, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{NoMmap: noMmap, MergeOperators: ops})
		if err != nil {
			t.Fatalf("%s: OpenDB: %v", name, err)
		}
		got, err := dboRead(db, want)
		if err != nil {
			db.Close()
			t.Fatalf("%s: %v", name, err)
		}
		if d := dboDiff(got, want); d != "" {
			db.Close()
			t.Fatalf("%s: our reading differs from RocksDB's read-only open: %s", name, d)
		}
		for _, c := range want.cfs {
			checkDBOFamily(t, name, db, c)
			if noMmap {
				st.families++
				st.keys += len(c.view)
				st.gets += len(c.gets)
				st.mergedKeys += len(c.mergedGets)
			}
		}
		absent := []string{"no-such-family"}
		if want.cf("cf-recreated") == nil {
			absent = append(absent, "cf-recreated") // dropped for good, or never made
		}
		for _, cf := range absent {
			if _, err := db.Get(cf, nil); !errors.Is(err, rocksdb.ErrNoColumnFamily) {
				t.Errorf("%s: Get in column family %q: %v, want ErrNoColumnFamily", name, cf, err)
			}
			if _, err := db.NewIterator(cf, nil); !errors.Is(err, rocksdb.ErrNoColumnFamily) {
				t.Errorf("%s: NewIterator of column family %q: %v, want ErrNoColumnFamily", name, cf, err)
			}
		}
		if _, err := db.Verify(); err != nil {
			t.Errorf("%s: Verify: %v", name, err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
	st.unresolved = checkDBONoOperators(t, dir, want)
	if d := diffHashes(before, dirHashes(t, dir)); len(d) > 0 {
		t.Errorf("opening and reading the database changed its directory: %v", d)
	}
	return st
}

// checkDBOFamily checks one column family beyond dboRead's forward view
// and Gets: backward, merge.NewIterator and merge.Get over Levels, seeks.
func checkDBOFamily(t *testing.T, name string, db *rocksdb.DB, c *dboCF) {
	t.Helper()
	name += ": column family " + strconv.Quote(c.name)
	back, err := dboView(db, c.name, true)
	if err != nil {
		t.Fatalf("%s: backward: %v", name, err)
	}
	if d := oracleDiff(back, c.view); d != "" {
		t.Fatalf("%s: backward view differs from RocksDB's: %s", name, d)
	}
	levels, err := db.Levels(c.name)
	if err != nil {
		t.Fatalf("%s: Levels: %v", name, err)
	}
	mo := db.MergeOptions(c.name)
	for _, backward := range []bool{false, true} {
		lines, err := dboIterLines(merge.NewIterator(levels, mo), backward)
		if err != nil {
			t.Fatalf("%s: merge.NewIterator over Levels (backward %v): %v", name, backward, err)
		}
		if d := oracleDiff(lines, c.view); d != "" {
			t.Fatalf("%s: merge.NewIterator over Levels (backward %v) differs from RocksDB's view: %s", name, backward, d)
		}
	}
	for i, k := range c.probes {
		_, wv, _ := strings.Cut(c.gets[i], "\t")
		v, err := merge.Get(levels, k, mo)
		g := hex.EncodeToString(v)
		if errors.Is(err, reader.ErrNotFound) {
			g = "-"
		} else if err != nil {
			t.Fatalf("%s: merge.Get(%x): %v", name, k, err)
		}
		if g != wv {
			t.Fatalf("%s: merge.Get(%x) = %.200s, RocksDB's Get %.200s", name, k, g, wv)
		}
	}

	// Seeks, against the view's keys.
	keys := make([]string, len(c.view))
	for i, l := range c.view {
		hk, _, _ := strings.Cut(l, "\t")
		k, _ := hex.DecodeString(hk)
		keys[i] = string(k)
	}
	it, err := db.NewIterator(c.name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	rng := rand.New(rand.NewPCG(uint64(len(keys)), 3))
	check := func(what string, ok bool, j int) {
		t.Helper()
		if j < 0 || j >= len(keys) {
			if ok {
				t.Fatalf("%s: %s on %x, want exhausted", name, what, it.Key())
			}
			return
		}
		if !ok || hex.EncodeToString(it.Key())+"\t"+hex.EncodeToString(it.Value()) != c.view[j] {
			t.Fatalf("%s: %s = %v on %x (err %v), want %.100s", name, what, ok, it.Key(), it.Err(), c.view[j])
		}
	}
	for i := 0; i < 100 && len(c.probes) > 0; i++ {
		k := string(c.probes[rng.IntN(len(c.probes))])
		if rng.IntN(3) == 0 {
			k += "\x00"
		}
		ge := sort.SearchStrings(keys, k)
		check(fmt.Sprintf("SeekGE(%x)", k), it.SeekGE([]byte(k)), ge)
		check(fmt.Sprintf("SeekGE(%x).Next", k), it.Next(), ge+1)
		check(fmt.Sprintf("SeekLT(%x)", k), it.SeekLT([]byte(k)), ge-1)
		check(fmt.Sprintf("SeekLT(%x).Prev", k), it.Prev(), ge-2)
	}
}

// checkDBONoOperators opens the database without merge operators: a
// family's view and Gets must fail with an error wrapping
// rocksdb.ErrUnresolved exactly where RocksDB called its operator, and
// read as before everywhere else. It returns the number of such errors.
func checkDBONoOperators(t *testing.T, dir string, want *dboDump) int {
	db, err := rocksdb.OpenDB(dir, nil)
	if err != nil {
		t.Fatalf("OpenDB without merge operators: %v", err)
	}
	defer db.Close()
	n := 0
	for _, c := range want.cfs {
		name := fmt.Sprintf("without merge operators: column family %q", c.name)
		// Forward, the view stops at the first key RocksDB merged;
		// backward, at the last.
		for _, backward := range []bool{false, true} {
			lines, err := dboView(db, c.name, backward)
			// stop is the hex key where the view stops; the empty key's
			// is "", so hasStop says whether there is one.
			wantLines, stop, hasStop := c.view, "", len(c.mergedView) > 0
			if hasStop {
				stop = c.mergedView[0]
				if backward {
					stop = c.mergedView[len(c.mergedView)-1]
				}
				i := slices.IndexFunc(c.view, func(l string) bool { return strings.HasPrefix(l, stop+"\t") })
				if i < 0 {
					t.Fatalf("%s: RocksDB merged %s, which its view lacks", name, stop)
				}
				wantLines = c.view[:i]
				if backward {
					wantLines = c.view[i+1:]
				}
			}
			switch {
			case !hasStop && err != nil:
				t.Errorf("%s (backward %v): %v; RocksDB needs no operator for this view", name, backward, err)
			case hasStop && !errors.Is(err, rocksdb.ErrUnresolved):
				t.Errorf("%s (backward %v): error %v at the end of the view, want one wrapping ErrUnresolved at key %q", name, backward, err, stop)
			case hasStop:
				n++
			}
			if d := oracleDiff(lines, wantLines); d != "" {
				t.Errorf("%s (backward %v): view up to the first key needing the operator: %s", name, backward, d)
			}
		}
		for i, k := range c.probes {
			_, wv, _ := strings.Cut(c.gets[i], "\t")
			v, err := db.Get(c.name, k)
			hk := hex.EncodeToString(k)
			switch {
			case c.mergedGets[hk]:
				if !errors.Is(err, rocksdb.ErrUnresolved) {
					t.Errorf("%s: Get(%s) = %.100x, %v; RocksDB needs the operator, want an error wrapping ErrUnresolved", name, hk, v, err)
				}
				n++
			case errors.Is(err, reader.ErrNotFound):
				if wv != "-" {
					t.Errorf("%s: Get(%s) not found, RocksDB reads %.100s", name, hk, wv)
				}
			case err != nil:
				t.Errorf("%s: Get(%s): %v; RocksDB needs no operator", name, hk, err)
			case hex.EncodeToString(v) != wv:
				t.Errorf("%s: Get(%s) = %.100x, RocksDB reads %.100s", name, hk, v, wv)
			}
		}
	}
	return n
}

// ---------------------------------------------------------------- the test

// dboSeeds are the workloads of the test (dboracle.cc's configFor picks
// each one's settings by its number): together they cover every part of
// the workload, which TestRocksDBDatabaseOracle checks.
var dboSeeds = []int{1, 2, 3, 4, 5, 6, 7, 8}

// gen runs the oracle's workloads for seeds into out, in two processes.
func (o *dbOracle) gen(t *testing.T, out string, small bool, seeds []int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for p := range 2 {
		args := []string{"gen"}
		if small {
			args = append(args, "-small")
		}
		args = append(args, out)
		n := len(args)
		for i := p; i < len(seeds); i += 2 {
			args = append(args, strconv.Itoa(seeds[i]))
		}
		if len(args) == n {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[p] = o.run(args...)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRocksDBDatabaseOracle compares OpenDB's reading of databases
// RocksDB 7.8.3 wrote with RocksDB's own read-only open.
func TestRocksDBDatabaseOracle(t *testing.T) {
	o := newDBOracle(t)
	out := t.TempDir()
	start := time.Now()
	o.gen(t, out, false, dboSeeds)
	t.Logf("RocksDB wrote and read %d databases in %v", len(dboSeeds), time.Since(start).Round(time.Millisecond))

	// What the workloads must cover: a change that loses a part of it is
	// a weaker test.
	var mu sync.Mutex
	cover := map[string]int{}
	var total dboStats
	touched := map[string]bool{}
	for _, seed := range dboSeeds {
		base := filepath.Join(out, fmt.Sprintf("s%d", seed))
		info := readDBOInfo(t, filepath.Join(base, "info"))
		want := readDBODump(t, filepath.Join(base, "want"))
		for _, tf := range want.touched {
			touched[tf] = true
		}
		for _, k := range []string{"drop", "ending", "blob-comp", "fv", "checksum"} {
			cover[k+"="+info.config[k]]++
		}
		if info.config["recycle"] != "0" {
			cover["recycle"]++
			live, tail := dboNewestLogTail(t, filepath.Join(base, "db"))
			if live > 0 && tail > 0 {
				cover["recycled log with a stale tail"]++
			}
		}
		for _, lv := range info.levels {
			if lv["L0"] > 0 {
				cover["level 0 tables"]++
			}
			for l := 1; l < 7; l++ {
				if lv[fmt.Sprintf("L%d", l)] > 0 {
					cover["deeper tables"]++
				}
			}
			if lv["blobs"] > 0 {
				cover["blob files"]++
			}
		}
		for _, size := range info.wals {
			if size > 0 {
				cover["log with data"]++
			}
		}
		for _, c := range want.cfs {
			if len(c.mergedView) > 0 {
				cover["merged keys in "+c.name]++
			}
		}
		if info.lastSeq != want.lastSeq {
			t.Errorf("seed %d: the writer's last sequence number %d, RocksDB's read-only open %d", seed, info.lastSeq, want.lastSeq)
		}
		// The oracle's premise: what RocksDB recovers read-only is what
		// the writer read just before it closed.
		final := readDBODump(t, filepath.Join(base, "final"))
		for _, c := range final.cfs {
			if w := want.cf(c.name); w == nil {
				t.Errorf("seed %d: column family %q of the writer is missing from RocksDB's read-only open", seed, c.name)
			} else if d := oracleDiff(w.view, c.view); d != "" {
				t.Errorf("seed %d: column family %q: RocksDB's read-only view differs from the writer's last view: %s", seed, c.name, d)
			}
		}
	}
	var missing []string
	for _, k := range []string{"drop=0", "drop=1", "drop=2", "ending=0", "ending=1", "ending=2",
		"blob-comp=none", "blob-comp=snappy", "blob-comp=zstd", "fv=0", "fv=2", "fv=3", "fv=4", "fv=5",
		"checksum=crc32c", "checksum=xxhash", "checksum=xxhash64", "checksum=xxh3",
		"recycle", "recycled log with a stale tail", "level 0 tables", "deeper tables", "blob files", "log with data",
		"merged keys in cf-with-append", "merged keys in cf-with-add"} {
		if cover[k] == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the workloads no longer cover %q (coverage %v)", missing, cover)
	}
	if len(touched) > 0 {
		t.Logf("RocksDB's read-only open wrote into its copies: %v", slices.Sorted(maps.Keys(touched)))
	}

	t.Run("views", func(t *testing.T) {
		for _, seed := range dboSeeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				base := filepath.Join(out, fmt.Sprintf("s%d", seed))
				st := checkDBOracle(t, filepath.Join(base, "db"), readDBODump(t, filepath.Join(base, "want")))
				mu.Lock()
				total.families += st.families
				total.keys += st.keys
				total.gets += st.gets
				total.mergedKeys += st.mergedKeys
				total.unresolved += st.unresolved
				mu.Unlock()
			})
		}
	})
	t.Logf("views: %d databases, %d column families, %d live keys, %d Gets (%d needing a merge operator), %d ErrUnresolved checks",
		len(dboSeeds), total.families, total.keys, total.gets, total.mergedKeys, total.unresolved)
	t.Run("lock", func(t *testing.T) { testDBOLock(t, o, filepath.Join(out, "s4")) })
	t.Run("damage", func(t *testing.T) { testDBODamage(t, o) })
}

// dboNewestLogTail reads the record headers of dir's newest log
// (db/log_format.h: checksum, length, type, and from type 5 to 8, the
// recyclable types, the log's number) and returns how many records it
// holds before the first that is not its own (a type it does not know,
// a length past the end, another log's number) and how many bytes follow
// them: a recycled log's stale tail, its former life's records.
func dboNewestLogTail(t testing.TB, dir string) (live int, tail int) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		return 0, 0
	}
	sort.Strings(logs)
	path := logs[len(logs)-1]
	num, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(path), ".log"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const block = 32 << 10
	off := 0
	for off < len(b) {
		if left := block - off%block; left < 7 {
			off += left // the block's trailer
			continue
		}
		if off+7 > len(b) {
			break
		}
		n, typ := int(binary.LittleEndian.Uint16(b[off+4:])), b[off+6]
		hdr := 7
		if typ >= 5 && typ <= 8 {
			hdr = 11
			if off+11 > len(b) || uint64(binary.LittleEndian.Uint32(b[off+7:])) != num&0xffffffff {
				break
			}
		} else if typ < 1 || typ > 4 {
			break
		}
		if off+hdr+n > len(b) {
			break
		}
		live++
		off += hdr + n
	}
	return live, len(b) - min(off, len(b))
}

// testDBOLock: while RocksDB holds a database open, OpenDB refuses it
// with ErrLocked; once RocksDB (which opened it read-write, so flushed
// its logs into tables) has closed it, OpenDB reads what RocksDB reads.
func testDBOLock(t *testing.T, o *dbOracle, base string) {
	dir := filepath.Join(t.TempDir(), "db")
	copyDBODir(t, filepath.Join(base, "db"), dir)
	cmd := exec.Command(o.bin, "hold", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("dboracle hold: %q, %v; stderr %s", line, err, stderr.String())
	}
	db, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{MergeOperators: dbMergeOperators()})
	if !errors.Is(err, rocksdb.ErrLocked) {
		if db != nil {
			db.Close()
		}
		t.Errorf("OpenDB of a database RocksDB holds open: %v; want ErrLocked", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dboracle hold: %v; stderr %s", err, stderr.String())
	}
	wantPath := filepath.Join(t.TempDir(), "want")
	if _, err := o.run("dump", filepath.Join(base, "probes"), dir, wantPath); err != nil {
		t.Fatal(err)
	}
	checkDBOracle(t, dir, readDBODump(t, wantPath))
}

// copyDBODir copies the regular files of src into a new directory dst,
// or hard-links them when link is set.
func copyDBODir(t testing.TB, src, dst string, link ...bool) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if len(link) > 0 && link[0] {
			if err := os.Link(from, to); err == nil {
				continue
			}
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ---------------------------------------------------------------- damage

// dboDamageSeeds are the small databases whose MANIFEST and newest log
// the damage test damages: several column families with logs for
// several of them (1), recycled logs (6), a family only the log knows (5).
var dboDamageSeeds = []int{1, 5, 6}

// testDBODamage flips bits in and truncates the MANIFEST and the newest
// log of small databases, each damaged version in a copy of its own: OpenDB
// and reading every family must give an error wrapping format.ErrCorrupt
// that names the file (or, when RocksDB refuses the copy too, a missing
// file: a MANIFEST cut back to a version whose tables were since
// deleted), or exactly what RocksDB's read-only open reads from the same
// copy; never a panic.
func testDBODamage(t *testing.T, o *dbOracle) {
	root := t.TempDir()
	o.gen(t, root, true, dboDamageSeeds)
	for _, seed := range dboDamageSeeds {
		base := filepath.Join(root, fmt.Sprintf("s%d", seed))
		dir := filepath.Join(base, "db")
		cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
		if err != nil {
			t.Fatal(err)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		sort.Strings(logs)
		if len(logs) == 0 {
			t.Fatalf("seed %d: no log", seed)
		}
		for _, file := range []string{strings.TrimSpace(string(cur)), filepath.Base(logs[len(logs)-1])} {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, file), func(t *testing.T) {
				t.Parallel()
				damageDBOFile(t, o, base, file)
			})
		}
	}
}

// dboVariant is a damaged version of a database's file.
type dboVariant struct {
	what string
	data []byte
	dir  string // the copy holding it
	want string // RocksDB's reading of the copy
}

func damageDBOFile(t *testing.T, o *dbOracle, base, file string) {
	dir := filepath.Join(base, "db")
	orig := readDBODump(t, filepath.Join(base, "want"))
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(data)), 11))
	var vs []*dboVariant
	// Bit flips: every header byte of the first records, the last bytes
	// (a torn tail's), and a sampling of the rest.
	var pos []int
	for p := 0; p < len(data) && p < 48; p++ {
		pos = append(pos, p)
	}
	for p := max(48, len(data)-32); p < len(data); p++ {
		pos = append(pos, p)
	}
	for range 60 {
		pos = append(pos, rng.IntN(len(data)))
	}
	for _, p := range pos {
		b := bytes.Clone(data)
		bit := byte(1) << rng.IntN(8)
		b[p] ^= bit
		vs = append(vs, &dboVariant{what: fmt.Sprintf("%s with byte %d ^= %#x", file, p, bit), data: b})
	}
	cuts := []int{0, 1, 6, 7, 10, 11, 12, len(data) / 2, len(data) - 12, len(data) - 11, len(data) - 7, len(data) - 1}
	for range 10 {
		cuts = append(cuts, rng.IntN(len(data)))
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for _, n := range cuts {
		if n >= 0 && n < len(data) {
			vs = append(vs, &dboVariant{what: fmt.Sprintf("%s cut to %d of %d bytes", file, n, len(data)), data: data[:n:n]})
		}
	}

	// Each variant in a copy (the other files hard-linked), RocksDB's
	// reading of them all in one run.
	work := t.TempDir()
	args := []string{"dump", filepath.Join(base, "probes")}
	for i, v := range vs {
		v.dir = filepath.Join(work, strconv.Itoa(i))
		copyDBODir(t, dir, v.dir, true)
		target := filepath.Join(v.dir, file)
		os.Remove(target) // a hard link: replace, not write through
		if err := os.WriteFile(target, v.data, 0o644); err != nil {
			t.Fatal(err)
		}
		v.want = filepath.Join(work, fmt.Sprintf("%d.want", i))
		args = append(args, v.dir, v.want)
	}
	start := time.Now()
	if _, err := o.run(args...); err != nil {
		t.Fatal(err)
	}
	rocksTime := time.Since(start)

	var oursRefused, rocksRefused, rocksLost, same, failures int
	for _, v := range vs {
		want := readDBODump(t, v.want)
		if want.openErr != "" {
			rocksRefused++
		} else if dboDiff(want, orig) != "" {
			rocksLost++
		}
		got, err := dboReadDamaged(v.dir, want) // probed as RocksDB probed this copy
		fail := func(format string, args ...any) {
			failures++
			if failures <= 5 {
				t.Errorf("%s: %s", v.what, fmt.Sprintf(format, args...))
			}
		}
		switch {
		case err != nil:
			oursRefused++
			switch {
			case errors.Is(err, format.ErrCorrupt):
				if !strings.Contains(err.Error(), file) {
					fail("error %q does not name %s", err, file)
				}
			case errors.Is(err, fs.ErrNotExist) && want.openErr != "":
				// A MANIFEST cut back to tables since deleted; RocksDB
				// refuses the copy too.
			default:
				fail("error %v (%T) wraps neither format.ErrCorrupt nor (RocksDB refusing too) fs.ErrNotExist; RocksDB: %s", err, err, dboOutcome(want))
			}
		case want.openErr != "":
			fail("OpenDB reads the damaged database (%d families), RocksDB refuses it: %s", len(got.cfs), want.openErr)
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
	t.Logf("%s: %d damaged versions of %d bytes: RocksDB refused %d and lost data in %d (in %v); ours refused %d and read %d as RocksDB does",
		file, len(vs), len(data), rocksRefused, rocksLost, rocksTime.Round(time.Millisecond), oursRefused, same)
}

func dboOutcome(d *dboDump) string {
	if d.openErr != "" {
		return "refused: " + d.openErr
	}
	return fmt.Sprintf("read %d column families", len(d.cfs))
}

// dboReadDamaged opens and reads the database in dir, turning a panic
// into an error that fails the test's checks.
func dboReadDamaged(dir string, like *dboDump) (d *dboDump, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	db, err := rocksdb.OpenDB(dir, &rocksdb.DBOptions{MergeOperators: dbMergeOperators()})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	d, err = dboRead(db, like)
	if err == nil {
		_, err = db.Verify()
	}
	return d, err
}
